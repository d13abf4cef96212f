"""Step 5, assemble: the context the answer is written from, conflicts resolved.

Runs the configured node postprocessors in order. The conflict check
(``engines.conflicts.ConflictPostprocessor``) keeps the newest passage per conflict cluster,
reports what it set aside, and asks the answer to say so when the sources disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from engines.conflicts.report import replacement_notes
from engines.postprocess import ReportingPostprocessor
from engines.steps.base import BaseStep, StepOutput, TurnState


@dataclass(frozen=True)
class Assembled(StepOutput):
    nodes: tuple[NodeWithScore, ...] = ()
    conflicts: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    suffix: str = ""

    def apply(self, state: TurnState) -> TurnState:
        return replace(state, nodes=self.nodes, notes=self.notes, suffix=self.suffix)

    def record_fields(self) -> dict[str, Any]:
        return {"conflicts": dict(self.conflicts), "context_node_ids": [n.node.node_id for n in self.nodes]}


class AssembleStep(BaseStep):
    name: ClassVar[str] = "assemble"

    def __init__(self, postprocessors: Sequence[BaseNodePostprocessor] = ()) -> None:
        self.postprocessors = tuple(postprocessors)

    def run(self, state: TurnState) -> Assembled:
        nodes = list(state.nodes)
        bundle = QueryBundle(state.query or state.question)
        report: dict[str, Any] = {}
        notes: list[str] = []
        suffix, calls = "", 0
        for postprocessor in self.postprocessors:
            if isinstance(postprocessor, ReportingPostprocessor):
                outcome = postprocessor.postprocess_with_report(nodes, bundle, state.language)
                nodes, report = outcome.nodes, outcome.report
                notes.extend(outcome.prompt_notes)
                suffix += outcome.answer_suffix
                calls += outcome.llm_calls
            else:
                nodes = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
        left_out = getattr(state.output("retrieve"), "left_out", ())
        if left_out:  # replaced documents retrieval left out are set aside too, and said so
            lines = replacement_notes(left_out, state.language)
            report = {**report, "replaced": list(left_out), "notes": [*report.get("notes", []), *lines]}
            report["summary"] = " ".join(report["notes"])
        return Assembled(llm_calls=calls, nodes=tuple(nodes), conflicts=report, notes=tuple(notes), suffix=suffix)
