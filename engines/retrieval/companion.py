"""A second embedder for English chunks, fused beside the main vectors and BM25.

The packaged multilingual e5-small is what Vietnamese needs, but on English prose the packaged
English MiniLM ranks passages differently enough that the two lists fused beat either: on mtRAG
ClapNQ (a dev domain) adding a MiniLM list to the product's fusion lifted later-turn R@5 from 0.395
to 0.430 and turn 1 from 0.738 to 0.756 (docs/benchmarks.md). So English chunks get a second vector
in a companion collection, kept in step with the main one the way BM25 is: derived from the store
after each ingest, never the source of truth.

The companion's vectors never leave it: its nodes come back without embeddings, so the gate, the
conflict check and the quote keep reading the main model's vectors (looked up by chunk id).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llama_index.core.schema import NodeWithScore, QueryBundle

from engines.corpus.store import ChromaVectorRetriever, iter_chunks
from engines.text import main_language, passage_language, searchable_text

logger = logging.getLogger(__name__)

#: Chunk languages the companion embeds (the packaged MiniLM is English-only).
LANGUAGES = ("en",)
#: The companion list's weight in the fusion by the corpus's main language: English prose gains from
#: it (ClapNQ, dev); Vietnamese corpora keep the fusion they were measured with.
WEIGHT_BY_LANGUAGE = {"en": 1.0, "vi": 0.0}


def companion_weight_for(languages: dict[str, float]) -> float:
    """The companion list's fusion weight for a corpus with these language shares (0 when unknown)."""
    return WEIGHT_BY_LANGUAGE.get(main_language(languages), 0.0)


def collection_name(main: str, model_id: str) -> str:
    """The companion collection's name: the main one's, and which model wrote it (Chroma allows
    [a-zA-Z0-9._-], 3-63 characters)."""
    slug = "".join(ch if ch.isalnum() else "-" for ch in model_id.split("@")[0].split("/")[-1].lower())
    return f"{main}--{slug}"[:63].rstrip("-_.")


@dataclass(frozen=True)
class CompanionSync:
    """What one sync did: chunks embedded, removed, and how many the companion holds now."""

    embedded: int = 0
    removed: int = 0
    total: int = 0
    seconds: float = 0.0


def sync_companion(main: Any, companion: Any, embed_model: Any, *, batch_size: int = 64,
                   on_progress: Callable[[int, int], None] | None = None) -> CompanionSync:
    """Bring ``companion`` in line with the English chunks of ``main``: embed those it lacks or holds
    under another content hash, delete those ``main`` no longer has (or that are not English).
    Idempotent, so a run killed midway is finished by the next one."""
    started = time.perf_counter()
    wanted = {c["id"]: (c["text"] or "", c["metadata"]) for c in iter_chunks(main)
              if passage_language(c["text"] or "") in LANGUAGES}
    held = {c["id"]: str(c["metadata"].get("content_hash", "")) for c in iter_chunks(companion, include_documents=False)}
    todo = [i for i, (_, meta) in wanted.items() if held.get(i) != str(meta.get("content_hash", ""))]
    stale = sorted(set(held) - set(wanted))
    if stale:
        companion.delete(ids=stale)
    if on_progress:
        on_progress(0, len(todo))
    for start in range(0, len(todo), batch_size):
        ids = todo[start:start + batch_size]
        texts = [wanted[i][0] for i in ids]
        metas = [wanted[i][1] for i in ids]
        vectors = embed_model.get_text_embedding_batch([searchable_text(t, m) for t, m in zip(texts, metas)])
        companion.upsert(ids=ids, embeddings=vectors, documents=texts, metadatas=metas)
        if on_progress:
            on_progress(start + len(ids), len(todo))
    report = CompanionSync(len(todo), len(stale), companion.count(), time.perf_counter() - started)
    logger.info("companion %s: %d embedded, %d removed, %d chunks in %.1fs", companion.name, report.embedded,
                report.removed, report.total, report.seconds)
    return report


class CompanionVectorRetriever(ChromaVectorRetriever):
    """Dense retrieval on the companion collection with the companion's own model. A vector handed
    in with the query belongs to the main model and is ignored; nodes come back without vectors."""

    returns_vectors = False

    def best_cosines(self, embeddings: list[list[float]]) -> list[float]:
        raise TypeError("the companion's cosines are not comparable to the main model's; ask the main retriever")

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._query(self._embed_model.get_query_embedding(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._query(await self._embed_model.aget_query_embedding(query_bundle.query_str))

