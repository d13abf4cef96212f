"""The pipeline's embedding model with its recent query vectors kept.

One turn asks for the same query's vector several times: the router (the question), the vector
search, the conflict check's focus and the quote (the standalone query). e5-small takes ~15 ms a
query on one core, so without this the conflict stage alone paid one embedding per turn with a
conflict pair, and its p95 for 10 nodes rose from ~6 ms to ~36 ms (``python -m evals.conflicts
--overhead``). Passages are never cached here (the clause cache and the store hold those).
"""

from __future__ import annotations

import threading
from typing import Any

from cachetools import LRUCache
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr


class QueryVectorCache(BaseEmbedding):
    """Wraps ``inner``: query vectors by text, least recently used out first; thread-safe."""

    _inner: BaseEmbedding = PrivateAttr()
    _vectors: LRUCache = PrivateAttr()
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, inner: BaseEmbedding, capacity: int = 1024, **kwargs: Any) -> None:
        super().__init__(model_name=inner.model_name, embed_batch_size=inner.embed_batch_size, **kwargs)
        self._inner = inner
        self._vectors = LRUCache(maxsize=capacity)

    @classmethod
    def class_name(cls) -> str:
        return "QueryVectorCache"

    @property
    def inner(self) -> BaseEmbedding:
        return self._inner

    def _known(self, query: str) -> Embedding | None:
        with self._lock:
            vector = self._vectors.get(query)
        return None if vector is None else list(vector)

    def _keep(self, query: str, vector: Embedding) -> Embedding:
        with self._lock:
            self._vectors[query] = list(vector)
        return list(vector)

    def _get_query_embedding(self, query: str) -> Embedding:
        known = self._known(query)
        return known if known is not None else self._keep(query, self._inner.get_query_embedding(query))

    async def _aget_query_embedding(self, query: str) -> Embedding:
        known = self._known(query)
        return known if known is not None else self._keep(query, await self._inner.aget_query_embedding(query))

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._inner.get_text_embedding(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._inner.get_text_embedding_batch(texts)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await self._inner.aget_text_embedding(text)
