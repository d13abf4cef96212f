"""Step 3, retrieve: the standalone query through hybrid retrieval, plus the session's transforms.

The condensed query is retrieved first (the *first pass*, which the gate judges: never an
LLM-invented query or passage). Each extra query of the enabled transforms (the user's own words,
multi-query, HyDE, ...) is retrieved separately and everything is fused by reciprocal rank, so
the condensed query always keeps its say.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.schema import NodeWithScore, QueryBundle

from engines.record import Candidate, candidate_of
from engines.retrieval.hybrid import Retrieval
from engines.steps.base import BaseStep, StepOutput, TurnState


@dataclass(frozen=True)
class Retrieved(StepOutput):
    nodes: tuple[NodeWithScore, ...] = ()
    first_pass: tuple[NodeWithScore, ...] = ()
    transforms: tuple[str, ...] = ()  # which transforms ran and why
    #: replacements (``engines.corpus.replacements``) whose old document this query would have retrieved
    left_out: tuple[dict[str, Any], ...] = ()
    recorded: int | None = None  # how many of ``nodes`` the record shows (top_k of a rerank pool; None: all)

    def apply(self, state: TurnState) -> TurnState:
        return replace(state, nodes=self.nodes, first_pass=self.first_pass)

    def record_fields(self) -> dict[str, Any]:
        candidates: list[Candidate] = [candidate_of(n) for n in self.nodes[: self.recorded]]
        return {"candidates": candidates, "transforms": list(self.transforms)}


class RetrieveStep(BaseStep):
    name: ClassVar[str] = "retrieve"

    def __init__(self, retrieval: Retrieval, *, embed_model: Any = None, pool: int | None = None) -> None:
        self.retrieval = retrieval
        self._embed_model = embed_model  # HyDE passages are embedded as passages
        self.pool = pool  # fuse this many instead of top_k (a rerank step cuts them back)

    def run(self, state: TurnState) -> Retrieved:
        query = state.query or state.question
        flt = state.options.filter
        if self.retrieval.replaced and (kept := self.retrieval.replaced_for(query)) != self.retrieval.replaced:
            flt = flt.excluding(kept)  # the question names a replaced document: that one is let in
        retriever = self.retrieval.retriever(flt, top_k=self.pool)
        runs = retriever.run(QueryBundle(query))
        pooled = tuple(retriever.fuse(runs))
        top_k = self.retrieval.config.top_k
        first_pass = pooled[:top_k]  # what the gate judges, whether or not a rerank pool was fused
        recorded = top_k if self.pool else None
        left_out = self._left_out(query, flt)
        expander = state.options.expander
        if expander is None:
            return Retrieved(nodes=pooled, first_pass=first_pass, left_out=left_out, recorded=recorded)
        best = max((float(n.raw_scores.get("vector", float("-inf"))) for n in first_pass
                    if getattr(n, "raw_scores", None)), default=None)
        t0 = time.perf_counter()
        expansion = expander.expand(query, state.question, best)
        timings = {"transform": round((time.perf_counter() - t0) * 1000, 2)}
        for extra in expansion.queries:
            if extra.vector_only:
                if "vector" not in retriever.retriever_names or self._embed_model is None:
                    continue
                bundle = QueryBundle(extra.text, embedding=self._embed_model.get_text_embedding(extra.text))
                runs += retriever.run(bundle, only=["vector"])
            else:
                runs += retriever.run(QueryBundle(extra.text))
        nodes = tuple(retriever.fuse(runs)) if expansion.queries else pooled
        return Retrieved(llm_calls=expansion.llm_calls, timings_ms=timings, nodes=nodes, first_pass=first_pass,
                         transforms=tuple(expansion.trace), left_out=left_out, recorded=recorded)

    def _left_out(self, query: str, flt: Any) -> tuple[dict[str, Any], ...]:
        """The replacements whose old document would be among this query's passages were it not
        replaced: the turn says what it left out and why (one more retrieval, a few ms)."""
        excluded = flt.replaced if flt.replaced is not None else self.retrieval.replaced
        if not excluded or flt.include_inactive:
            return ()
        shadow = self.retrieval.retriever(flt.excluding(frozenset())).retrieve(query)
        docs = {n.node.metadata.get("doc_id") for n in shadow} & excluded
        return tuple(dict(r) for r in self.retrieval.replacements if r["old"] in docs)
