"""An embedder built on first use.

The second embedder for English chunks (``engines.retrieval.companion``) is named by default beside e5-small
but only used on English corpora; building it loads torch and the model (about 4 s and 250 MB on
these machines), which a Vietnamese deployment should never pay for at start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr


class LazyEmbedding(BaseEmbedding):
    """Calls ``build`` once, on the first embedding asked for (thread-safe), then delegates to it."""

    _build: Callable[[], BaseEmbedding] = PrivateAttr()
    _inner: BaseEmbedding | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, build: Callable[[], BaseEmbedding], model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name=model_name, **kwargs)
        self._build = build

    @classmethod
    def class_name(cls) -> str:
        return "LazyEmbedding"

    @property
    def built(self) -> bool:
        return self._inner is not None

    def inner(self) -> BaseEmbedding:
        with self._lock:
            if self._inner is None:
                self._inner = self._build()
            return self._inner

    def _get_query_embedding(self, query: str) -> Embedding:
        return self.inner().get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await self.inner().aget_query_embedding(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return self.inner().get_text_embedding(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self.inner().get_text_embedding_batch(texts)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await self.inner().aget_text_embedding(text)
