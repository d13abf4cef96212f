"""The turn pipeline: one ordered list of steps, built once from one config, shared by every session.

``Pipeline.run(state)`` takes a turn through the steps, timing each one here (and nowhere else);
``run(state, until="assemble")`` stops after a named step, which is what retrieval-only evaluation
does. ``Pipeline.record(state, answer=...)`` builds the :class:`~engines.record.TurnRecord` from the
steps' outputs once the answer is written (``engines.writing.AnswerStream`` writes it). The
pipeline holds no per-conversation state: sessions (``engines.session``) do, so one pipeline
serves many of them at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engines.choices import Choices
from engines.corpus.store import Index
from engines.models import Models
from engines.record import Source, TurnLog, TurnRecord, sources_of
from engines.retrieval.hybrid import Retrieval
from engines.steps.base import Step, TurnOptions, TurnState
from engines.text import detect_language

logger = logging.getLogger(__name__)

#: Reasons a written answer turns into a refusal after the fact.
ANSWER_NOT_FOUND = "answer_not_found"


class Pipeline:
    """Steps plus the models and index they share. Thread-safe: steps keep no per-turn state."""

    def __init__(self, steps: Sequence[Step], *, models: Models, choices: Choices,
                 retrieval: Retrieval | None = None, index: Index | None = None, log: TurnLog | None = None,
                 config: Mapping[str, Any] | None = None) -> None:
        names = [s.name for s in steps]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"steps named twice: {duplicates}; each step has one place in a turn")
        self.steps: tuple[Step, ...] = tuple(steps)
        self.models = models
        self.choices = choices  # what a session may choose: filters, routers, transforms
        self.retrieval = retrieval
        self.index = index
        self.log = log or TurnLog(None)
        #: The settings it was built from, as plain values (reports quote them; nothing reads them back).
        self.config: Mapping[str, Any] = dict(config or {})

    # ------------------------------------------------------------------ what the pipeline is made of

    @property
    def step_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)

    def step(self, name: str) -> Step:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"no step {name!r} in this pipeline; steps: {', '.join(self.step_names)}")

    def has_step(self, name: str) -> bool:
        return name in self.step_names

    @property
    def answer_mode(self) -> str:
        """'extract' or 'generate': what the answer step does."""
        return str(getattr(self.step("answer"), "mode", "generate")) if self.has_step("answer") else "generate"

    def retriever(self, *, filters: Any = None, top_k: int | None = None, use_vector: bool = True,
                  use_bm25: bool = True) -> Any:
        """The fused retriever turns use: the configured filter, narrowed by ``filters``."""
        if self.retrieval is None:
            raise KeyError("this pipeline has no retrieval")
        return self.retrieval.retriever(self.choices.filter(filters), top_k=top_k, use_vector=use_vector,
                                        use_bm25=use_bm25)

    # ------------------------------------------------------------------ running a turn

    def start(self, question: str, history: Sequence[Any] = (), *, options: TurnOptions = TurnOptions(),
              rewrites: Sequence[tuple[str, str]] = (), previous_sql: str = "") -> TurnState:
        """A new turn's state (the session supplies history, its rewrites, its options, and the statement that
        answered its previous turn on the data road)."""
        return TurnState(question=question, language=detect_language(question), history=tuple(history),
                         rewrites=tuple(rewrites), options=options, previous_sql=previous_sql)

    def run(self, state: TurnState, *, until: str | None = None) -> TurnState:
        """The state after every step that applies, or after ``until`` (a step name)."""
        if until is not None and not self.has_step(until):
            raise KeyError(f"cannot stop after {until!r}: no such step; steps: {', '.join(self.step_names)}")
        for step in self.steps:
            if step.applies(state):
                t0 = time.perf_counter()
                output = step.run(state)
                elapsed = _ms(t0)
                output = replace(output, timings_ms={**output.timings_ms, step.name: elapsed})
                state = state.with_output(step.name, output)
            if step.name == until:
                break
        return state

    # ------------------------------------------------------------------ the record

    def record(self, state: TurnState, *, answer: str | None = None, not_found: bool = False,
               timings_ms: dict[str, float] | None = None) -> TurnRecord:
        """The turn record from the steps' outputs; ``answer`` is what was written (None: nothing was)."""
        fields: dict[str, Any] = {}
        timings: dict[str, float] = {}
        llm_calls = 0
        for _, output in state.outputs:
            fields.update(output.record_fields())
            timings.update(output.timings_ms)
            llm_calls += output.llm_calls
        draft = state.draft
        refused = bool(draft and draft.refused) or not_found
        reason = ANSWER_NOT_FOUND if not_found else (draft.refusal_reason if draft else None)
        if answer is None:
            answer = draft.text if draft is not None and draft.refused and draft.text else ""
        elif draft is not None and draft.needs_llm:
            llm_calls += 1
        timings.update(timings_ms or {})
        fields.setdefault("answer_mode", self.answer_mode)
        return TurnRecord(
            question=state.question, language=state.language, refused=refused, refusal_reason=reason,
            answer=answer, timings_ms=timings, llm_calls=llm_calls, filters=state.options.filter.to_spec(),
            sources=[] if refused else _cited(state, fields.get("quoted") or []), **fields,
        )

    def cited_sources(self, state: TurnState) -> list[Source]:
        """What the answer will cite, known once the steps have run (before it is written): the same
        list the turn record gets unless the written answer is refused."""
        if state.draft is not None and state.draft.refused:
            return []
        quoted: list[dict[str, Any]] = []
        for _, output in state.outputs:
            quoted = output.record_fields().get("quoted") or quoted
        return _cited(state, quoted)

    def finish(self, record: TurnRecord) -> None:
        """Log a finished turn (the JSONL turn log, when configured)."""
        self.log.write(record)


def _cited(state: TurnState, quoted: list[dict[str, Any]]) -> list[Source]:
    """What the answer cites: the quoted documents when it quotes, else the context passages that
    are relevant on their own (not rank filler)."""
    relevant = sources_of([n for n in state.nodes if n.node.node_id in state.relevant_ids] or state.nodes)
    if not quoted:
        return relevant
    quoted_docs = {q["doc_id"] for q in quoted}
    return [s for s in relevant if s.doc_id in quoted_docs] or sources_of(
        [n for n in state.nodes if str(n.node.metadata.get("doc_id", "")) in quoted_docs])


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
