"""Step 2b, sql: after the condense step, questions about the data take the database road.

The road (``engines.sql.road``) is judged on the standalone question, with the road of the turn
before for terse follow-ups; a data question is answered from one checked, read-only SELECT
(``engines.sql.ask``) and later steps stand aside. A terse follow-up naming another value of a
column the previous data question named ("Còn ở Đà Nẵng thì sao?") is that question with the value
swapped. When the SQL writer finds no statement, the turn goes on to the documents. Runs only when a
database is configured (``TURNRAG_SQL_URL``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import MessageRole

from engines.sql.ask import NO_SQL, REFUSED, SqlOutcome, SqlRoad
from engines.sql.guard import request_problem
from engines.sql.road import SQL, RoadDecision, RoadRouter, is_terse, swap_value
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState


@dataclass(frozen=True)
class Queried(StepOutput):
    decision: RoadDecision | None = None
    outcome: SqlOutcome | None = None
    query: str = ""  # the standalone question the data road rewrote a follow-up into ("" = the condensed one)

    @property
    def answered_here(self) -> bool:
        """The data road wrote the answer (or refused): later steps stand aside."""
        return self.outcome is not None and self.outcome.status != NO_SQL

    def apply(self, state: TurnState) -> TurnState:
        if self.query:
            state = replace(state, query=self.query)
        if not self.answered_here or self.outcome is None:
            return state
        refused = self.outcome.reason if self.outcome.status == REFUSED else None
        return replace(state, draft=Draft(text=self.outcome.text, refusal_reason=refused))

    def record_fields(self) -> dict[str, Any]:
        sql: dict[str, Any] = {"road": self.decision.to_dict() if self.decision else {}}
        if self.outcome is not None:
            sql.update(self.outcome.to_record())
        fields: dict[str, Any] = {"sql": sql, **({"query": self.query} if self.query else {})}
        if self.answered_here:
            fields.update(route=SQL, answer_mode=SQL)
        return fields


class SqlStep(BaseStep):
    name: ClassVar[str] = "sql"

    def __init__(self, road: SqlRoad, router: RoadRouter) -> None:
        self.road = road
        self.router = router
        self._value_columns = road.schema.value_columns()

    def applies(self, state: TurnState) -> bool:
        """Every turn not yet answered, and a request to change the data (or to drop the instructions)
        that the router took for small talk: the direct reply would say "done" ("Đã chuyển đơn 250
        thành completed"). The road then decides: a question about how to change something stays
        with the direct reply."""
        if state.draft is None:
            return True
        return bool(state.draft.messages) and request_problem(state.question) is not None

    def run(self, state: TurnState) -> Queried:
        query = state.query or state.question
        earlier = earlier_turns(state)
        t0 = time.perf_counter()
        decision = self.router.decide(_road_query(state), question=state.question,
                                      previous=self.router.previous_road(earlier))
        timings = {"sql_route": round((time.perf_counter() - t0) * 1000, 2)}
        if decision.road != SQL:
            return Queried(timings_ms=timings, decision=decision)
        follows = decision.signals.terse and decision.signals.previous == SQL and bool(earlier)
        before = (earlier[0][1] or earlier[0][0]) if follows else ""
        swapped = swap_value(before, state.question, self._value_columns) if follows else None
        # a terse follow-up of a data turn edits the statement that answered it
        outcome = self.road.answer(swapped or query, state.language, words=state.question,
                                   only=state.options.sql_tables, earlier=before,
                                   previous_sql=state.previous_sql if follows else "")
        return Queried(llm_calls=outcome.llm_calls, timings_ms={**timings, **outcome.timings_ms}, decision=decision,
                       outcome=outcome, query=swapped or "")


def _road_query(state: TurnState) -> str:
    """What the road is judged on: the standalone question, or the user's own words when the condense step fell
    back to putting the earlier question's subject before them and they are not a terse follow-up (the earlier question's
    "bao nhiêu đơn" must not pull "mấy ngày mới nhận được hàng?" onto the data road)."""
    query = state.query or state.question
    condensed = state.output("condense")
    trace = getattr(condensed, "trace", None)
    if getattr(trace, "fallback_reason", None) and not is_terse(state.question):
        return state.question
    return query


def earlier_turns(state: TurnState) -> list[tuple[str, str]]:
    """(question, standalone query) of the earlier turns, newest first: the session's own, else the
    user messages of a history sent whole (the stateless API), each its own query."""
    if state.rewrites:
        return list(state.rewrites)
    users = [m.content or "" for m in state.history if m.role == MessageRole.USER]
    return [(text, text) for text in reversed(users)]
