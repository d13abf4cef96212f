"""One query, one embedding: the cache hands every step of a turn the same vector, passages pass through."""

from __future__ import annotations

import asyncio
import threading

from engines.models.fakes import HashEmbedding
from engines.models.query_vectors import QueryVectorCache


class CountingEmbedding(HashEmbedding):
    queries: int = 0
    texts: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.queries += 1
        return super()._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self.texts += 1
        return super()._get_text_embedding(text)


def test_a_query_is_embedded_once_and_passages_every_time() -> None:
    inner = CountingEmbedding()
    cached = QueryVectorCache(inner, capacity=2)
    first = cached.get_query_embedding("Phí thường niên thẻ SKU-4417?")
    assert cached.get_query_embedding("Phí thường niên thẻ SKU-4417?") == first == inner.get_query_embedding(
        "Phí thường niên thẻ SKU-4417?")
    assert inner.queries == 2  # one through the cache, one asked of the inner model directly above
    assert asyncio.run(cached.aget_query_embedding("Phí thường niên thẻ SKU-4417?")) == first and inner.queries == 2
    cached.get_text_embedding("Phí thường niên 200.000 đồng.")
    cached.get_text_embedding("Phí thường niên 200.000 đồng.")
    assert inner.texts == 2 and cached.model_name == inner.model_name
    cached.get_query_embedding("a")
    cached.get_query_embedding("b")  # capacity 2: the first query is evicted
    cached.get_query_embedding("Phí thường niên thẻ SKU-4417?")
    assert inner.queries == 5


def test_concurrent_sessions_share_one_cache_safely() -> None:
    cached = QueryVectorCache(CountingEmbedding(), capacity=8)
    results: list[list[float]] = []

    def ask() -> None:
        for i in range(50):
            results.append(cached.get_query_embedding(f"q{i % 10}"))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 200 and all(len(v) == 256 for v in results)
