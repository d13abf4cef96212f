"""The per-turn record: the one thing the REPL's /debug, the JSONL log, the HTTP responses and the
evaluation read. Built once, at the end of a turn, from the steps' outputs (``engines.pipeline``)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from llama_index.core.schema import NodeWithScore

from engines.io import append_jsonl


@dataclass(frozen=True)
class Candidate:
    """A retrieved chunk as fusion saw it: fused score plus each retriever's raw score and rank."""

    node_id: str
    doc_id: str
    title: str
    fused_score: float
    raw_scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    rerank_score: float | None = None  # the cross-encoder's, when the rerank step ran


@dataclass(frozen=True)
class Source:
    doc_id: str
    title: str
    date: str = ""
    #: where in the document the cited chunks are: the PDF pages they start on, the headings above them
    #: (converted documents; engines.corpus.anchors), in the order the chunks came
    pages: tuple[int, ...] = ()
    sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class CondenseTrace:
    """What the condense step did: whether an LLM ran, what it said, and any fallback."""

    used_llm: bool = False
    window: int = 0
    raw_output: str | None = None
    fallback_reason: str | None = None
    rule: str | None = None  # "swap": "còn X thì sao?" rewritten without an LLM; "names": names kept


@dataclass(frozen=True)
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
    unknown_terms: list[str] = field(default_factory=list)  # the question's words no document uses (the gate)
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
    answerability: dict[str, Any] = field(default_factory=dict)  # the graded check: score, p_yes, percentile
    #: the database road (engines.steps.sql): why the road was taken or not, the statement, every attempt, the
    #: rows (capped); its stage timings are in timings_ms (sql_route, sql_write, sql_run)
    sql: dict[str, Any] = field(default_factory=dict)

    @property
    def retrieved_doc_ids(self) -> list[str]:
        """Document ids in rank order, each once (a chunk counts for its document)."""
        return list(dict.fromkeys(cand.doc_id for cand in self.candidates))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["retrieved_doc_ids"] = self.retrieved_doc_ids
        return data


def candidate_of(nws: NodeWithScore) -> Candidate:
    meta = nws.node.metadata
    return Candidate(
        node_id=nws.node.node_id,
        doc_id=str(meta.get("doc_id", nws.node.node_id)),
        title=str(meta.get("title", "")),
        fused_score=float(nws.score or 0.0),
        raw_scores=dict(getattr(nws, "raw_scores", {}) or {}),
        ranks=dict(getattr(nws, "ranks", {}) or {}),
    )


def sources_of(nodes: Iterable[NodeWithScore]) -> list[Source]:
    """One source per document, in the order its first chunk appears, with the pages and sections of
    all its chunks."""
    sources: dict[str, Source] = {}
    pages: dict[str, dict[int, None]] = {}
    sections: dict[str, dict[str, None]] = {}
    for nws in nodes:
        meta = nws.node.metadata
        doc_id = str(meta.get("doc_id", nws.node.node_id))
        sources.setdefault(doc_id, Source(doc_id=doc_id, title=str(meta.get("title", "")), date=str(meta.get("date", ""))))
        if isinstance(meta.get("page"), int):
            pages.setdefault(doc_id, {})[meta["page"]] = None
        if meta.get("section"):
            sections.setdefault(doc_id, {})[str(meta["section"])] = None
    return [replace(source, pages=tuple(pages.get(doc_id, ())), sections=tuple(sections.get(doc_id, ())))
            for doc_id, source in sources.items()]


class TurnLog:
    """The JSONL turn log, one line per turn; safe to share between sessions (one writer lock)."""

    def __init__(self, path: Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()

    def write(self, record: TurnRecord) -> None:
        if self.path is None:
            return
        with self._lock:
            append_jsonl(self.path, record.to_dict())
