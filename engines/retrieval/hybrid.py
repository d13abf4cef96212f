"""Hybrid retrieval over one index: Chroma vectors + BM25, fused by weighted reciprocal rank.

:class:`Retrieval` is shared by every session of a pipeline. It hands out the fused retriever
for a metadata filter (built once per filter and kept, under a lock: sessions with the same
filter share one), and answers "how well does the corpus support this query?" for the swap rule.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cachetools import LRUCache
from llama_index.core.llms import LLM

from engines.corpus.replacements import names_in, replaced_documents
from engines.corpus.store import ChromaVectorRetriever
from engines.errors import IndexUnavailable
from engines.retrieval.bm25 import VietEnBM25Retriever
from engines.retrieval.companion import CompanionVectorRetriever
from engines.retrieval.filters import NO_FILTER, MetadataFilter
from engines.retrieval.fusion import RRF_K, HybridFusionRetriever
from engines.text import main_language

#: BM25's weight in the fusion by the corpus's main language. Vietnamese corpora carry codes and clause
#: numbers that BM25 matches exactly (held-out dev, condense: hit@5 0.96 at 1.0, 0.93 at 0.5); on English
#: prose BM25 drags the fusion down (mtRAG ClapNQ + FiQA, turn 1 R@5 0.556 at 1.0, 0.606 at 0.5). docs/evaluation.md.
BM25_WEIGHT_BY_LANGUAGE = {"vi": 1.0, "en": 0.5}


def bm25_weight_for(languages: dict[str, float]) -> float:
    """The fusion's BM25 weight for a corpus with these language shares (Vietnamese when unknown)."""
    return BM25_WEIGHT_BY_LANGUAGE.get(main_language(languages), BM25_WEIGHT_BY_LANGUAGE["vi"])


@dataclass(frozen=True)
class RetrievalConfig:
    """Chunks kept after fusion (``top_k``), returned by each retriever (``candidate_k``), and the
    weighted-RRF parameters."""

    top_k: int = 5
    candidate_k: int = 20
    vector_weight: float = 1.0
    bm25_weight: float = 1.0
    rrf_k: int = RRF_K
    num_queries: int = 1
    companion_weight: float = 0.0  # the second embedder's list (engines.retrieval.companion); 0 = not asked
    #: Added to the cosine of passages in the other language than the question's when the vector list is
    #: ranked (``HybridFusionRetriever``); 0 = plain cosine order.
    cross_language_boost: float = 0.0

    def __post_init__(self) -> None:
        if self.top_k < 1 or self.candidate_k < self.top_k:
            raise ValueError(f"need 1 <= top_k <= candidate_k, got top_k={self.top_k}, candidate_k={self.candidate_k}")
        if self.vector_weight < 0 or self.bm25_weight < 0 or self.vector_weight + self.bm25_weight <= 0:
            raise ValueError("vector_weight and bm25_weight must be >= 0 and not both 0")


class Retrieval:
    """The fused retriever of one index, per filter."""

    def __init__(self, collection: Any, bm25: VietEnBM25Retriever | None, embed_model: Any, llm: LLM,
                 config: RetrievalConfig = RetrievalConfig(), cache_size: int = 64,
                 replacements: Sequence[Mapping[str, Any]] = (), leave_out_replaced: bool = True,
                 companion: tuple[Any, Any] | None = None) -> None:
        self.collection = collection
        #: (collection, embedder) of the second embedder's English chunks, or None
        self.companion = companion
        self.bm25 = bm25
        #: documents another one of the index replaces (the manifest's): with ``leave_out_replaced``,
        #: left out like inactive ones unless a question names one (``replaced_for``)
        self.leave_out_replaced = leave_out_replaced
        self.replacements: tuple[Mapping[str, Any], ...] = ()
        self.replaced: frozenset[str] = frozenset()
        self._replaced_by: dict[str, dict[str, str]] = {}
        self._set_replacements(replacements)
        self.embed_model = embed_model
        self.config = config
        self._llm = llm  # only used by LlamaIndex's query generation when num_queries > 1
        self._cache: LRUCache = LRUCache(maxsize=cache_size)
        self._lock = threading.Lock()

    def replace_bm25(self, bm25: VietEnBM25Retriever | None,
                     replacements: Sequence[Mapping[str, Any]] | None = None) -> None:
        """Swap in a BM25 rebuilt after the store changed (and the replacements the new manifest
        lists); turns already running keep the old ones."""
        with self._lock:
            self.bm25 = bm25
            if replacements is not None:
                self._set_replacements(replacements)
            self._cache.clear()

    def _set_replacements(self, replacements: Sequence[Mapping[str, Any]]) -> None:
        self.replacements = tuple(replacements) if self.leave_out_replaced else ()
        self.replaced = replaced_documents(self.replacements)
        by: dict[str, dict[str, str]] = {}
        for r in replacements:
            by.setdefault(str(r["old"]), {})[str(r["new"])] = str(r.get("evidence") or r.get("basis") or "")
        self._replaced_by = by

    def replaced_by(self) -> Mapping[str, Mapping[str, str]]:
        """Every whole-document replacement of the index (the manifest's, whether or not retrieval leaves
        replaced documents out): old doc id -> {new doc id: the words that say so}."""
        return self._replaced_by

    def replaced_for(self, query: str) -> frozenset[str]:
        """The replaced documents to leave out for ``query``: all but those it names ("what about v1.2?")."""
        named = {r["old"] for r in self.replacements if names_in(query, r.get("names") or ())}
        return self.replaced - named

    def retriever(self, metadata_filter: MetadataFilter = NO_FILTER, *, top_k: int | None = None,
                  use_vector: bool = True, use_bm25: bool = True) -> HybridFusionRetriever:
        key = (metadata_filter, top_k, use_vector, use_bm25)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        built = self._build(metadata_filter, top_k or self.config.top_k, use_vector, use_bm25)
        with self._lock:
            return self._cache.setdefault(key, built)

    def _build(self, flt: MetadataFilter, top_k: int, use_vector: bool, use_bm25: bool) -> HybridFusionRetriever:
        c = self.config
        if flt.replaced is None:
            flt = flt.excluding(self.replaced)
        retrievers: dict[str, Any] = {}
        if use_vector:
            retrievers["vector"] = ChromaVectorRetriever(self.collection, self.embed_model, c.candidate_k, flt)
        if use_bm25 and self.bm25 is not None:
            retrievers["bm25"] = self.bm25.with_top_k(c.candidate_k).with_filter(flt)
        if use_vector and self.companion is not None and c.companion_weight > 0:
            retrievers["companion"] = CompanionVectorRetriever(*self.companion, c.candidate_k, flt)
        if not retrievers:
            raise IndexUnavailable("no retriever available: the index holds no chunks. Ingest documents first.")
        weights: Mapping[str, float] = {"vector": c.vector_weight, "bm25": c.bm25_weight,
                                        "companion": c.companion_weight}
        return HybridFusionRetriever(retrievers, llm=self._llm,
                                     weights={k: v for k, v in weights.items() if k in retrievers},
                                     similarity_top_k=top_k, rrf_k=c.rrf_k, num_queries=c.num_queries,
                                     cross_language_boost=c.cross_language_boost)

    def corpus_support(self, embeddings: list[list[float]],
                       metadata_filter: MetadataFilter | None = None) -> list[float] | None:
        """Best chunk cosine per query vector among the chunks the filter allows (None: no vector side)."""
        return self.retriever(metadata_filter or NO_FILTER).corpus_support(embeddings)
