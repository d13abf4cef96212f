"""Step 4, gate: is anything retrieved relevant at all? If not, a plain refusal, no answer call.

Judged on the first pass's raw per-retriever scores (cosine, BM25), never on fused RRF scores,
which are rank-based and look the same for good and bad result lists (``engines.answering.refusal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from engines.answering.refusal import RelevanceGate, not_said, refusal_message
from engines.answering.unknown_terms import DEFAULT_MIN_KNOWN, UNKNOWN_TERMS, Vocabulary, as_written, unknown_terms
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState

NO_RELEVANT_DOCUMENTS = "no_relevant_documents"


@dataclass(frozen=True)
class Gated(StepOutput):
    relevant: bool = False
    max_raw_scores: dict[str, float] = field(default_factory=dict)
    relevant_ids: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()  # the question's words no document uses (refused when any, unless deferred)
    deferred: bool = False  # the rerank step refuses on them, where the reader is unsure too

    def apply(self, state: TurnState) -> TurnState:
        if not self.relevant:
            return replace(state, relevant_ids=self.relevant_ids,
                           draft=Draft(text=refusal_message(state.language), refusal_reason=NO_RELEVANT_DOCUMENTS))
        if self.unknown and not self.deferred:
            return replace(state, relevant_ids=self.relevant_ids, draft=Draft(
                text=not_said(state.language, state.nodes, terms=as_written(state.query or state.question, self.unknown)),
                refusal_reason=UNKNOWN_TERMS))
        return replace(state, relevant_ids=self.relevant_ids)

    def record_fields(self) -> dict[str, Any]:
        return {"max_raw_scores": dict(self.max_raw_scores), **({"unknown_terms": list(self.unknown)} if self.unknown else {})}


class GateStep(BaseStep):
    name: ClassVar[str] = "gate"

    def __init__(self, gate: RelevanceGate, *, vocabulary: Vocabulary | None = None,
                 min_known: float = DEFAULT_MIN_KNOWN, defer_unknown: bool = False) -> None:
        """``vocabulary``: the corpus's words; given, a question naming a word outside it is refused
        (``engines.answering.unknown_terms``), here or, ``defer_unknown``, in the rerank step when the reader
        is unsure too."""
        self.gate = gate
        self.vocabulary = vocabulary
        self.min_known = min_known
        self.defer_unknown = defer_unknown

    def run(self, state: TurnState) -> Gated:
        best = self.gate.max_scores(getattr(n, "raw_scores", {}) or {} for n in state.first_pass)
        relevant_ids = frozenset(n.node.node_id for n in state.nodes
                                 if self.gate.is_relevant(getattr(n, "raw_scores", {}) or {}, state.language))
        unknown = (unknown_terms(state.query or state.question, self.vocabulary, min_known=self.min_known)
                   if self.vocabulary is not None else ())
        return Gated(relevant=bool(state.nodes) and self.gate.is_relevant(best, state.language), max_raw_scores=best,
                     relevant_ids=relevant_ids, unknown=unknown, deferred=self.defer_unknown)
