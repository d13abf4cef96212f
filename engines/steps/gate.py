"""Step 4, gate: is anything retrieved relevant at all? If not, a plain refusal, no answer call.

Judged on the first pass's raw per-retriever scores (cosine, BM25), never on fused RRF scores,
which are rank-based and look the same for good and bad result lists (``engines.answering.refusal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from engines.answering.refusal import RelevanceGate, refusal_message
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState

NO_RELEVANT_DOCUMENTS = "no_relevant_documents"


@dataclass(frozen=True)
class Gated(StepOutput):
    relevant: bool = False
    max_raw_scores: dict[str, float] = field(default_factory=dict)
    relevant_ids: frozenset[str] = frozenset()

    def apply(self, state: TurnState) -> TurnState:
        if not self.relevant:
            return replace(state, relevant_ids=self.relevant_ids,
                           draft=Draft(text=refusal_message(state.language), refusal_reason=NO_RELEVANT_DOCUMENTS))
        return replace(state, relevant_ids=self.relevant_ids)

    def record_fields(self) -> dict[str, Any]:
        return {"max_raw_scores": dict(self.max_raw_scores)}


class GateStep(BaseStep):
    name: ClassVar[str] = "gate"

    def __init__(self, gate: RelevanceGate) -> None:
        self.gate = gate

    def run(self, state: TurnState) -> Gated:
        best = self.gate.max_scores(getattr(n, "raw_scores", {}) or {} for n in state.first_pass)
        relevant_ids = frozenset(n.node.node_id for n in state.nodes
                                 if self.gate.is_relevant(getattr(n, "raw_scores", {}) or {}, state.language))
        return Gated(relevant=bool(state.nodes) and self.gate.is_relevant(best, state.language), max_raw_scores=best,
                     relevant_ids=relevant_ids)
