"""Keeping a running pipeline in step with a shared store.

Replicas on one Chroma server each hold BM25 in memory; when any process ingests, the store's
version (``engines.corpus.store.publish``) changes and each follower rebuilds its BM25 from the store's
chunks and swaps it in. Vectors need nothing: they are the server's.
"""

from __future__ import annotations

import logging
import threading

from engines.corpus.store import Index, bm25_from_store, published
from engines.retrieval.hybrid import Retrieval

logger = logging.getLogger(__name__)


class StoreFollower:
    def __init__(self, index: Index, retrieval: Retrieval, *, every_s: float = 5.0) -> None:
        if index.client is None:
            raise ValueError("following a store needs the index's client")
        self.index, self.retrieval, self.every_s = index, retrieval, every_s
        self.version = index.manifest.corpus_hash if index.manifest else ""
        self._stop = threading.Event()

    def check(self) -> bool:
        """Rebuild BM25 when the store's version moved; True when it did."""
        version, manifest = published(self.index.client, self.index.collection.name)
        if not version or version == self.version:
            return False
        replacements = (manifest.replacements or []) if manifest is not None else None
        self.retrieval.replace_bm25(bm25_from_store(self.index.collection), replacements)
        logger.info("store version %s -> %s: BM25 rebuilt from the store", self.version, version)
        self.version = version
        return True

    def start(self) -> "StoreFollower":
        def loop() -> None:
            while not self._stop.wait(self.every_s):
                try:
                    self.check()
                except Exception as exc:  # a store down for a moment: try again next time
                    logger.warning("cannot read the store's version: %s", exc)

        threading.Thread(target=loop, name="turnrag-follow-store", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
