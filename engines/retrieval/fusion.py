"""Reciprocal rank fusion as a pure function, and the hybrid retriever that uses it.

LlamaIndex's reciprocal rerank ignores ``retriever_weights``, dedups by text+metadata hash and
overwrites the sub-retrievers' scores in place. Here fusion works on plain ranked id lists,
honours weights, and returns new node objects that keep every retriever's raw score and rank:
the refusal gate must judge relevance on raw scores, which fusion would otherwise erase.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.llms import LLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from engines.text import other_language

logger = logging.getLogger(__name__)

#: The constant of Cormack et al. (2009); ranks are 1-based, so the top item scores w/(k+1).
RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(d) = sum_i w_i / (k + rank_i(d)), best first.

    Ties keep the order of first appearance, so fusion is deterministic. An id repeated inside
    one list counts at its best rank only.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"got {len(weights)} weights for {len(rankings)} rankings")
    if any(w < 0 for w in weights) or (rankings and sum(weights) <= 0):
        raise ValueError(f"weights must be non-negative with a positive sum, got {list(weights)}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


class FusedNode(NodeWithScore):
    """A fused result: ``score`` is the fused score, ``raw_scores``/``ranks`` are per retriever."""

    raw_scores: dict[str, float] = Field(default_factory=dict)
    ranks: dict[str, int] = Field(default_factory=dict)


class HybridFusionRetriever(QueryFusionRetriever):
    """``QueryFusionRetriever`` over named retrievers with weighted RRF and raw scores kept.

    ``num_queries=1`` (the default) makes no LLM call; more queries use the parent's generator.
    """

    def __init__(
        self,
        retrievers: Mapping[str, BaseRetriever],
        *,
        llm: LLM,
        weights: Mapping[str, float] | None = None,
        similarity_top_k: int = 5,
        rrf_k: int = RRF_K,
        num_queries: int = 1,
        cross_language_boost: float = 0.0,
    ) -> None:
        if not retrievers:
            raise ValueError("HybridFusionRetriever needs at least one retriever")
        self._names = list(retrievers)
        weights = dict(weights or {})
        unknown = set(weights) - set(self._names)
        if unknown:
            raise ValueError(f"weights given for unknown retrievers {sorted(unknown)}; known: {self._names}")
        self._weights = [float(weights.get(name, 1.0)) for name in self._names]
        self._cross_language_boost = float(cross_language_boost)
        self._rrf_k = rrf_k
        super().__init__(
            list(retrievers.values()),
            llm=llm,
            mode=FUSION_MODES.RECIPROCAL_RANK,
            similarity_top_k=similarity_top_k,
            num_queries=num_queries,
            use_async=False,
            retriever_weights=self._weights,
        )

    @property
    def retriever_names(self) -> list[str]:
        return list(self._names)

    def corpus_support(self, embeddings: list[list[float]]) -> list[float] | None:
        """Best chunk cosine per query vector from the vector side, or None without one."""
        for name, retriever in zip(self._names, self._retrievers):
            if name == "vector" and hasattr(retriever, "best_cosines"):
                return retriever.best_cosines(embeddings)
        return None

    def _fuse(self, results: list[tuple[str, list[NodeWithScore]]]) -> list[NodeWithScore]:
        """results: (retriever name, its ranked nodes) per (query, retriever) run."""
        by_id: dict[str, NodeWithScore] = {}
        raw: dict[str, dict[str, float]] = {}
        ranks: dict[str, dict[str, int]] = {}
        rankings, weights = [], []
        for name, nodes in results:
            ids = []
            for rank, nws in enumerate(nodes, start=1):
                node_id = nws.node.node_id
                ids.append(node_id)
                # Prefer the vector side's node: it carries the stored embedding.
                current = by_id.get(node_id)
                if current is None or (current.node.embedding is None and nws.node.embedding is not None):
                    by_id[node_id] = nws
                score = float(nws.score or 0.0)
                raw.setdefault(node_id, {})
                if score > raw[node_id].get(name, float("-inf")):
                    raw[node_id][name] = score
                ranks.setdefault(node_id, {})
                ranks[node_id][name] = min(rank, ranks[node_id].get(name, rank))
            rankings.append(ids)
            weights.append(self._weights[self._names.index(name)])
        fused = reciprocal_rank_fusion(rankings, weights, self._rrf_k) if rankings else []
        return [
            FusedNode(node=by_id[node_id].node, score=score, raw_scores=raw[node_id], ranks=ranks[node_id])
            for node_id, score in fused[: self.similarity_top_k]
        ]

    def run(self, query_bundle: QueryBundle, only: Sequence[str] | None = None) -> list[tuple[str, list[NodeWithScore]]]:
        """Each retriever's ranked list for one query (``only``: a subset by name), not yet fused."""
        return [(name, self._ranked(name, query_bundle.query_str, retriever.retrieve(query_bundle)))
                for name, retriever in zip(self._names, self._retrievers) if only is None or name in only]

    def _ranked(self, name: str, query: str, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        """The vector list ranked as if passages in the other language than the question's scored
        ``cross_language_boost`` higher: an English question scores a Vietnamese passage that answers it
        below English ones that do not (and BM25 never finds it). Scores stay the cosines (the gate reads them)."""
        if name != "vector" or self._cross_language_boost <= 0 or not nodes:
            return nodes
        other = other_language(query, [n.node.get_content() for n in nodes])
        boost = self._cross_language_boost
        order = sorted(range(len(nodes)), key=lambda i: -(float(nodes[i].score or 0.0) + (boost if other[i] else 0.0)))
        return [nodes[i] for i in order]

    def fuse(self, results: list[tuple[str, list[NodeWithScore]]]) -> list[NodeWithScore]:
        """Weighted RRF over runs from :meth:`run` (several queries' runs may be pooled)."""
        return self._fuse(results)

    def _queries(self, query_bundle: QueryBundle) -> list[QueryBundle]:
        if self.num_queries > 1:
            return [query_bundle, *self._get_queries(query_bundle.query_str)]
        return [query_bundle]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._fuse([run for query in self._queries(query_bundle) for run in self.run(query)])

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        queries = self._queries(query_bundle)
        outputs = await asyncio.gather(*[retriever.aretrieve(q) for q in queries for retriever in self._retrievers])
        n, runs = len(self._retrievers), []
        for i, query in enumerate(queries):
            runs += [(name, self._ranked(name, query.query_str, nodes))
                     for name, nodes in zip(self._names, outputs[i * n:(i + 1) * n])]
        return self._fuse(runs)
