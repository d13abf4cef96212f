"""The contract of a node postprocessor that explains itself (the conflict check is one).

Plain LlamaIndex postprocessors run through ``postprocess_nodes``; one that also implements
:class:`ReportingPostprocessor` returns the kept nodes with a report for the turn record, notes for
the answer prompt and a line to append to the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from llama_index.core.schema import NodeWithScore, QueryBundle


@dataclass(frozen=True)
class PostprocessOutcome:
    nodes: list[NodeWithScore]
    report: dict[str, Any] = field(default_factory=dict)
    prompt_notes: list[str] = field(default_factory=list)
    answer_suffix: str = ""
    llm_calls: int = 0


@runtime_checkable
class ReportingPostprocessor(Protocol):
    def postprocess_with_report(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None,
                                language: str) -> PostprocessOutcome: ...
