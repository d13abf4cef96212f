"""The per-turn record: the one thing the REPL's /debug, the JSONL log and the evaluation read."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Candidate:
    """A retrieved chunk as fusion saw it: fused score plus each retriever's raw score and rank."""

    node_id: str
    doc_id: str
    title: str
    fused_score: float
    raw_scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass
class Source:
    doc_id: str
    title: str
    date: str = ""


@dataclass
class CondenseTrace:
    """What the condense step did: whether an LLM ran, what it said, and any fallback."""

    used_llm: bool = False
    window: int = 0
    raw_output: str | None = None
    fallback_reason: str | None = None
    rule: str | None = None  # "swap": "còn X thì sao?" rewritten without an LLM (condense.swap_candidates)


@dataclass
class TurnRecord:
    question: str
    language: str
    query: str = ""
    condense: CondenseTrace = field(default_factory=CondenseTrace)
    candidates: list[Candidate] = field(default_factory=list)
    context_node_ids: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    refused: bool = False
    refusal_reason: str | None = None
    max_raw_scores: dict[str, float] = field(default_factory=dict)
    conflicts: dict[str, Any] = field(default_factory=dict)
    answer: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_chars: int = 0
    route: str = "docs"
    route_scores: dict[str, float] = field(default_factory=dict)
    transforms: list[str] = field(default_factory=list)
    filters: dict[str, Any] = field(default_factory=dict)
    answer_mode: str = "generate"  # "extract": the answer quotes clauses, no answer LLM call
    quoted: list[dict[str, Any]] = field(default_factory=list)  # extract: clause, doc_id, score

    @property
    def retrieved_doc_ids(self) -> list[str]:
        """Document ids in rank order, each once (a chunk counts for its document)."""
        seen: list[str] = []
        for cand in self.candidates:
            if cand.doc_id not in seen:
                seen.append(cand.doc_id)
        return seen

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["retrieved_doc_ids"] = self.retrieved_doc_ids
        return data


def append_jsonl(path: Path, record: TurnRecord) -> None:
    """Append one record as a JSON line (the turn log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
