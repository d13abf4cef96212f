"""Replay evaluation rows through the conversational engine and keep one result per row.

Two modes:

* ``rows`` (default): every row is replayed on its own, with the dataset's history passed
  explicitly as ``chat_history`` and the engine reset in between, so each turn is judged on
  the conversation as labelled, not on what the engine happened to answer before.
* ``live``: each conversation is replayed turn by turn and the engine's own answers become the
  history (its memory), which shows how early mistakes propagate. It needs real answers, so it
  cannot be retrieval-only. User turns that are in a row's history but not rows themselves
  (e.g. "thanks!") are sent too, unscored, so the conversation stays complete.

Retrieval-only runs stop the turn after the ``assemble`` step (condense, retrieve, gate,
conflicts; no answer LLM call); full runs write the answer too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engines.chat import ConversationalRAGEngine
from engines.errors import ConfigError, is_unreachable
from engines.record import TurnRecord
from engines.session import Session
from evals.buckets import turn_bucket
from evals.configs import QueryConfig
from evals.dataset import EvalRow

if TYPE_CHECKING:
    from engines.pipeline import Pipeline

logger = logging.getLogger(__name__)

MODES = ("rows", "live")
#: Called after each row: (configuration name, rows done, rows in total).
ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RowResult:
    """What one configuration did with one row; ``scores`` and the answer checks are filled by
    :func:`evals.metrics.score_rows`, so replaying and scoring stay separate."""

    config: str
    index: int  # position in the dataset: pairs the same row across configurations
    row: EvalRow
    message: str = ""  # what was sent to the engine
    query: str = ""  # what was retrieved with (after any condense step)
    retrieved_doc_ids: tuple[str, ...] = ()
    retrieved_node_ids: tuple[str, ...] = ()  # the chunks retrieval kept, in rank order
    context_node_ids: tuple[str, ...] = ()  # the chunks the answer read (after the conflict check)
    refused: bool = False
    refusal_reason: str | None = None
    answer: str = ""
    latency_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    conflicts: dict[str, Any] = field(default_factory=dict)
    condense_used_llm: bool = False
    condense_fallback: str | None = None
    condense_rule: str | None = None  # "swap", "names": what the step did beside (or instead of) the LLM
    skipped: str | None = None
    history_seen: tuple[tuple[str, str], ...] = ()  # the history the engine was given
    route: str = "docs"
    transforms: tuple[str, ...] = ()  # which transforms ran and why (from the turn record)
    scores: dict[str, float] = field(default_factory=dict)
    hit: bool | None = None
    must_contain_ok: bool | None = None
    stale: bool | None = None
    lost_at: str | None = None  # evals.losses: the stage after which the expected value was gone

    @property
    def scored(self) -> bool:
        return self.skipped is None

    def to_dict(self) -> dict[str, Any]:
        """The report row: labels, what happened, per-row scores, then the carried fields."""
        row = self.row
        data: dict[str, Any] = {
            "conv_id": row.conv_id, "turn": row.turn, "turn_bucket": turn_bucket(row.turn), "type": row.type,
            "question": row.question, "message": self.message, "query": self.query,
            "gold_doc_ids": list(row.gold_doc_ids), "retrieved_doc_ids": list(self.retrieved_doc_ids),
            "hit": self.hit, "scores": dict(self.scores),
            "refused": self.refused, "refusal_reason": self.refusal_reason, "answer": self.answer,
            "must_contain": list(row.must_contain) or None, "must_contain_ok": self.must_contain_ok,
            "stale_value": row.stale_value, "stale": self.stale, "lost_at": self.lost_at,
            "latency_ms": dict(self.latency_ms), "llm_calls": self.llm_calls, "conflicts": self.conflicts,
            "condense_used_llm": self.condense_used_llm, "condense_fallback": self.condense_fallback,
            "condense_rule": self.condense_rule,
            "route": self.route, "transforms": list(self.transforms),
            "skipped": self.skipped, "rewrite": row.rewrite, "expected_answer": row.answer, "filters": row.filters,
            "source": row.where,
        }
        data["extra"] = dict(row.extra)
        return data


def replay(pipeline: "Pipeline", rows: Sequence[EvalRow], config: QueryConfig, *, retrieval_only: bool = True,
           mode: str = "rows", on_progress: ProgressFn | None = None) -> list[RowResult]:
    """Run one configuration over every row; results come back in dataset order."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if mode == "live" and retrieval_only:
        raise ConfigError("mode 'live' feeds the engine's own answers back as history, so it needs answers: "
                          "drop retrieval-only (or use mode 'rows')")
    session = config.new_session(pipeline)
    if mode == "rows":
        return _replay_rows(session, rows, config, retrieval_only, on_progress)
    return _replay_live(session, rows, config, on_progress)


#: Where a retrieval-only turn stops: the context is assembled, no answer is written.
RETRIEVAL_ONLY_UNTIL = "assemble"


def _apply_row_filter(session: Session, row: EvalRow, current: Any) -> Any:
    """Restrict the session to the row's ``filters`` (on top of the configured one); returns the filter in force."""
    choices = session.pipeline.choices
    wanted = choices.filter(row.filters) if row.filters else choices.filter()
    if wanted != current:
        session.set_filter(wanted)
    return wanted


def _replay_rows(session: Session, rows: Sequence[EvalRow], config: QueryConfig, retrieval_only: bool,
                 on_progress: ProgressFn | None) -> list[RowResult]:
    results = []
    current = session.filter
    for index, row in enumerate(rows):
        turn_input = config.build(row)
        if turn_input.skip_reason:
            results.append(RowResult(config.name, index, row, skipped=turn_input.skip_reason))
        else:
            current = _apply_row_filter(session, row, current)
            history = list(turn_input.chat_history)
            try:
                record = _with_one_retry(lambda: _row_turn(session, turn_input.message, history, retrieval_only), row)
            except Exception as exc:  # noqa: BLE001 - only the LLM server's transient failures reach here
                if not is_unreachable(exc):
                    raise
                logger.warning("%s: skipped after two attempts: %s: %s", row.where, type(exc).__name__, exc)
                results.append(RowResult(config.name, index, row, skipped=f"llm error: {type(exc).__name__}"))
            else:
                seen = tuple((_role(m.role), m.content or "") for m in history)
                results.append(from_record(config.name, index, row, turn_input.message, record, seen))
        if on_progress:
            on_progress(config.name, index + 1, len(rows))
    return results


def _row_turn(session: Session, message: str, history: list[Any], retrieval_only: bool) -> TurnRecord:
    session.reset()  # no memory carried between rows: the row's history is the history
    if retrieval_only:
        return session.run_until(RETRIEVAL_ONLY_UNTIL, message, history)
    stream = session.prepare(message, history)
    stream.text()
    return _recorded(stream.record)


def _with_one_retry(turn: Callable[[], TurnRecord], row: EvalRow) -> TurnRecord:
    """A long evaluation on a busy machine must not die at row 150 on one slow LLM call: the row is
    tried once more, then the caller records it as skipped (the report lists skipped rows)."""
    try:
        return turn()
    except Exception as exc:  # noqa: BLE001
        if not is_unreachable(exc):
            raise
        logger.warning("%s: %s, trying the row once more", row.where, type(exc).__name__)
        return turn()


def _replay_live(session: Session, rows: Sequence[EvalRow], config: QueryConfig,
                 on_progress: ProgressFn | None) -> list[RowResult]:
    conversations: dict[str, list[tuple[int, EvalRow]]] = {}
    for index, row in enumerate(rows):
        conversations.setdefault(row.conv_id, []).append((index, row))
    results: list[RowResult] = []
    engine = ConversationalRAGEngine(session)  # memory: the engine's own answers become the history
    current = session.filter
    for turns in conversations.values():
        engine.reset()
        current = _apply_row_filter(session, turns[0][1], current)  # one filter per conversation
        transcript: list[tuple[str, str]] = []
        sent = 0  # user messages of this conversation already sent
        for index, row in sorted(turns, key=lambda item: item[1].turn):
            for earlier in row.previous_user_turns()[sent:]:  # turns that are not rows, or were skipped
                response = engine.chat(earlier)
                transcript += [("user", earlier), ("assistant", str(response.response))]
            sent = len(row.previous_user_turns())
            turn_input = config.build(row)
            if turn_input.skip_reason:
                results.append(RowResult(config.name, index, row, skipped=turn_input.skip_reason))
            else:
                seen = tuple(transcript)
                engine.chat(turn_input.message)  # history from the engine's memory
                record = _recorded(session.last_record)
                transcript += [("user", turn_input.message), ("assistant", record.answer)]
                sent += 1
                results.append(from_record(config.name, index, row, turn_input.message, record, seen))
            if on_progress:
                on_progress(config.name, len(results), len(rows))
    return sorted(results, key=lambda r: r.index)


def from_record(config: str, index: int, row: EvalRow, message: str, record: TurnRecord,
                history_seen: tuple[tuple[str, str], ...] = ()) -> RowResult:
    """A row result from the engine's turn record (the structured truth, never the answer text)."""
    return RowResult(
        config=config, index=index, row=row, message=message, query=record.query,
        retrieved_doc_ids=tuple(record.retrieved_doc_ids),
        retrieved_node_ids=tuple(c.node_id for c in record.candidates),
        context_node_ids=tuple(record.context_node_ids), refused=record.refused,
        refusal_reason=record.refusal_reason, answer=record.answer, latency_ms=dict(record.timings_ms),
        llm_calls=record.llm_calls, conflicts=dict(record.conflicts or {}),
        condense_used_llm=record.condense.used_llm, condense_fallback=record.condense.fallback_reason,
        condense_rule=record.condense.rule, history_seen=history_seen, route=record.route,
        transforms=tuple(record.transforms),
    )


def _recorded(record: TurnRecord | None) -> TurnRecord:
    if record is None:  # every finished turn is recorded; this guards a future refactor
        raise RuntimeError("the turn finished without a record")
    return record


def _role(role: Any) -> str:
    value = getattr(role, "value", role)
    return "user" if value == "user" else "assistant"
