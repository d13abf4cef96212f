"""A cross-encoder that scores (query, passage) pairs, for the rerank step.

Reading the question and the passage together ranks better than comparing two vectors, which is why
the usual pipeline fuses by reciprocal rank and *then* reranks. No cross-encoder is packaged for these
offline machines (docs/benchmarks.md, "Not tried"), so the step is off unless a team names one: a local
folder, or a hub id where the hub is reachable (``BAAI/bge-reranker-v2-m3`` reads Vietnamese and English).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from engines.errors import ModelUnavailable

logger = logging.getLogger(__name__)


class CrossEncoderScorer:
    """A sentence-transformers ``CrossEncoder``, loaded once, shared by every session.

    ``score`` is serialised: the fast tokenizer behind it is not safe to call from two threads at once.
    """

    def __init__(self, model: str, *, max_length: int = 512, batch_size: int = 16,
                 setting: str = "reranker / TURNRAG_RERANKER") -> None:
        self.model_name = model
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model = _load(model, max_length, setting)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, higher is better (the model's own scale)."""
        if not passages:
            return []
        with self._lock:
            scores = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                         show_progress_bar=False)
        return [float(s) for s in scores]


def _load(model: str, max_length: int, setting: str):  # -> sentence_transformers.CrossEncoder
    try:
        from sentence_transformers import CrossEncoder
    except ImportError as exc:
        raise ModelUnavailable(f"setting '{setting}': a reranker needs sentence-transformers ({exc}); "
                               "`pip install sentence-transformers==6.2.0`.") from exc
    local = Path(model).expanduser()
    looks_local = local.is_absolute() or model.startswith((".", "~")) or local.exists()
    if looks_local and not local.is_dir():
        raise ModelUnavailable(f"setting '{setting}': {model!r} is not a folder. Give the folder of a "
                               "sentence-transformers cross-encoder, a hub id where the hub is reachable, "
                               "or leave it empty to rerank nothing.")
    try:
        loaded = CrossEncoder(str(local) if looks_local else model, device="cpu", max_length=max_length,
                              local_files_only=looks_local)
    except Exception as exc:  # hub unreachable, not a cross-encoder, missing weights
        where = "" if looks_local else f" No folder {(Path.cwd() / model)!s} either."
        raise ModelUnavailable(
            f"setting '{setting}': the cross-encoder {model!r} could not be loaded "
            f"({exc.__class__.__name__}: {str(exc)[:200]}).{where} Give a local folder, or a hub id where the hub "
            "is reachable; leave it empty to rerank nothing (no reranker is packaged).") from exc
    logger.info("reranker %s loaded (max_length %d)", model, max_length)
    return loaded
