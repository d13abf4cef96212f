"""One question down the database road: refuse a request to change data, ask the LLM for a SELECT,
check it, run it read-only, retry once with the database's error (a second chat turn after the
model's own reply), and write the answer.

Nothing runs that :func:`engines.sql.guard.check_statement` did not pass, and what runs, runs on a
connection that cannot write (``engines.sql.database``). Every attempt (the statement as written,
as run, and the error) is kept for the turn record.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from sqlalchemy.engine import Engine

from engines.sql import answer
from engines.sql.conditions import Condition, conditions_in, with_conditions
from engines.sql.database import DEFAULT_TIMEOUT_S, Rows, StatementFailed, column_values, fetch
from engines.sql.guard import DEFAULT_ROW_LIMIT, INJECTION, UnsafeStatement, check_statement, request_problem
from engines.sql.prompt import parse_sql, retry_message, sql_prompt
from engines.sql.repair import repair
from engines.sql.schema import Schema, notes_for

logger = logging.getLogger(__name__)

ANSWERED, NO_SQL, REFUSED = "answered", "no_sql", "refused"
#: Refusal reasons (the turn record's ``refusal_reason``).
SQL_WRITE_REQUEST, SQL_INJECTION, SQL_UNSAFE, SQL_FAILED, SQL_NO_TABLES = (
    "sql_write_request", "sql_injection", "sql_unsafe", "sql_failed", "sql_no_tables")
#: Rows the turn record (and so /debug, the log and the API) keeps of a result.
RECORDED_ROWS = 20
#: Distinct values of a column looked up to spell a literal as the data does (names, cities).
LOOKED_UP_VALUES = 2000


@dataclass(frozen=True)
class Attempt:
    """One statement: as the LLM wrote it, as it ran (checked, LIMIT added), and what went wrong."""

    written: str = ""
    ran: str = ""
    error: str = ""
    stage: str = ""  # "llm" (no reply), "parse" (no statement in it), "guard" or "database"; "" when it ran
    conditions: tuple[str, ...] = ()  # what the notes required and the statement lacked, added before it ran
    repairs: tuple[str, ...] = ()  # slips mended before it ran: a MySQL date function, a column's table, a value's spelling


@dataclass(frozen=True)
class SqlOutcome:
    status: str  # answered, no_sql (the writer found no statement: the documents may answer), refused
    text: str = ""
    reason: str | None = None  # the refusal reason when refused
    attempts: tuple[Attempt, ...] = ()
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()  # every row fetched (at most the LIMIT)
    truncated: bool = False
    tables: tuple[str, ...] = ()
    llm_calls: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def statement(self) -> str:
        """The statement the answer stands on (or the last one tried)."""
        last = self.attempts[-1] if self.attempts else Attempt()
        return last.ran or last.written

    def to_record(self, recorded_rows: int = RECORDED_ROWS) -> dict[str, Any]:
        """What the turn record shows: the SQL, the attempts, the rows (capped), the tables."""
        return {"status": self.status, "statement": self.statement, "tables": list(self.tables),
                "attempts": [vars(a).copy() for a in self.attempts], "columns": list(self.columns),
                "rows": [[answer.plain(v) for v in row] for row in self.rows[:recorded_rows]],
                "row_count": len(self.rows), "rows_truncated": self.truncated or len(self.rows) > recorded_rows}


class SqlRoad:
    """The database, what it holds, and the LLM that writes statements for it. Thread-safe: it keeps
    no per-turn state (the engine pools connections)."""

    def __init__(self, engine: Engine, schema: Schema, llm: Any, *, row_limit: int = DEFAULT_ROW_LIMIT,
                 timeout_s: float = DEFAULT_TIMEOUT_S, retries: int = 1, note_conditions: bool = True,
                 repairs: bool = True) -> None:
        self.engine = engine
        self.note_conditions = note_conditions
        self.repairs = repairs
        self._values: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._values_lock = threading.Lock()
        self.schema = schema
        self.llm = llm
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        self.retries = retries

    def answer(self, question: str, language: str, *, words: str = "", earlier: str = "",
               only: Sequence[str] | None = None, previous_sql: str = "") -> SqlOutcome:
        """Answer the standalone ``question`` from the tables (``only``: a key's tables; None: all
        configured). ``words``: the user's own message, checked for write requests too; ``earlier``:
        the standalone question a follow-up continues, and ``previous_sql`` the statement that answered it
        (both shown to the SQL writer)."""
        problem = request_problem(words) or request_problem(question)
        if problem is not None:
            reason = SQL_INJECTION if problem == INJECTION else SQL_WRITE_REQUEST
            return SqlOutcome(REFUSED, answer.message(language, "write"), reason)
        tables = self.schema.allowed(only)
        if not tables:
            return SqlOutcome(REFUSED, answer.message(language, "failed"), SQL_NO_TABLES)
        return self._write_and_run(question, language, tables, earlier, previous_sql)

    def warm(self) -> bool:
        """Have the LLM read the schema prompt once (its answer is not run), so llama.cpp's prompt
        cache holds it before the first data question: cold, that prompt costs about a minute of
        the packaged model's time on two cores. False when the LLM did not answer."""
        prompt = self._prompt("How many rows are there?", self.schema.allowed(None))
        try:
            self.llm.chat([ChatMessage(role=MessageRole.USER, content=prompt)])
        except Exception as exc:  # noqa: BLE001 - readiness reports the LLM itself; the warm-up is best effort
            logger.warning("could not warm the SQL writer (%s: %s)", type(exc).__name__, exc)
            return False
        return True

    def _prompt(self, question: str, tables: tuple[str, ...], earlier: str = "", previous_sql: str = "") -> str:
        """The first request: the same long part for every question, then what is particular to it."""
        return sql_prompt(dialect=self.schema.dialect, schema=self.schema.describe(tables), notes=self.schema.notes,
                          question=question, limit=self.row_limit, earlier=earlier, recap=self.schema.recap(tables),
                          previous_sql=previous_sql,
                          rules=notes_for(f"{earlier} {question}" if earlier else question, self.schema.notes))

    def _conditions(self, question: str, tables: tuple[str, ...]) -> list[Condition]:
        """The conditions the notes attach to the terms the standalone question uses (not the earlier one's:
        "bao nhiêu đơn?" after a revenue question counts every order)."""
        if not self.note_conditions:
            return []
        defined = notes_for(question, self.schema.notes, defined_only=True)
        return conditions_in(defined, self.schema.columns(tables), {t: self.schema.tables[t].values for t in tables})

    def _values_of(self, table: str, column: str) -> tuple[Any, ...]:
        """A text column's values, to spell a literal as the data does: the schema's listed ones, else looked up
        (at most :data:`LOOKED_UP_VALUES`; a column with more is not matched) and kept once found. The lock guards
        the dict only: a slow lookup holds no other session up."""
        listed = self.schema.tables[table].values.get(column)
        if listed is not None:
            return listed
        with self._values_lock:
            known = self._values.get((table, column))
        if known is not None:
            return known
        found = column_values(self.engine, table, [column], most=LOOKED_UP_VALUES, timeout_s=self.timeout_s).get(column)
        if not found:  # too many values, or the lookup failed (a timeout): asked again next time, not kept as none
            return ()
        with self._values_lock:
            return self._values.setdefault((table, column), found)

    def _write_and_run(self, question: str, language: str, tables: tuple[str, ...], earlier: str,
                       previous_sql: str = "") -> SqlOutcome:
        attempts: list[Attempt] = []
        required = self._conditions(question, tables)
        timings = {"sql_write": 0.0, "sql_run": 0.0}
        failed: Attempt | None = None
        chat = [ChatMessage(role=MessageRole.USER, content=self._prompt(question, tables, earlier, previous_sql))]
        for _ in range(1 + self.retries):
            if failed is not None:  # a second try is a chat turn: its own statement above, the error below
                statement = failed.ran or failed.written
                chat.append(ChatMessage(role=MessageRole.USER, content=retry_message(
                    failed=statement, error=failed.error, hint=self.schema.hint(failed.error, tables, statement))))
            t0 = time.perf_counter()
            try:
                reply = self.llm.chat(chat).message.content or ""
            except Exception as exc:  # noqa: BLE001 - timeout, context overflow, server down: one plain refusal
                timings["sql_write"] += _ms(t0)
                logger.warning("the SQL writer failed (%s: %s)", type(exc).__name__, exc)
                attempts.append(Attempt(error=f"{type(exc).__name__}: {str(exc)[:300]}", stage="llm"))
                return self._refused(language, SQL_FAILED, attempts, timings)
            timings["sql_write"] += _ms(t0)
            chat.append(ChatMessage(role=MessageRole.ASSISTANT, content=reply))
            written = parse_sql(reply)
            if written is None:
                if failed is None:  # the writer says the tables cannot answer: the documents may
                    return SqlOutcome(NO_SQL, attempts=(Attempt(error=(reply or "").strip()[:200], stage="parse"),),
                                      llm_calls=len(attempts) + 1, timings_ms=_rounded(timings))
                attempts.append(Attempt(error="no statement in the reply", stage="parse"))
                break
            mended = repair(written, dialect=self.schema.dialect, columns=self.schema.columns(tables),
                            joins=self.schema.joins(tables), values_of=self._values_of) if self.repairs else None
            completed, added = with_conditions(mended.sql if mended else written, required, self.schema.dialect)
            notes_added = tuple(c.sql(c.table) for c in added)
            repairs = mended.changes if mended else ()
            try:
                checked = check_statement(completed, dialect=self.schema.dialect, allowed=tables, limit=self.row_limit)
            except UnsafeStatement as exc:
                attempts.append(Attempt(written=written, error=str(exc), stage="guard", conditions=notes_added,
                                        repairs=repairs))
                logger.warning("SQL refused before running (%s): %r", exc, written)
                if not exc.retryable:
                    return self._refused(language, SQL_UNSAFE, attempts, timings)
                failed = attempts[-1]
                continue
            t0 = time.perf_counter()
            try:
                rows: Rows = fetch(self.engine, checked.sql, max_rows=self.row_limit, timeout_s=self.timeout_s)
            except StatementFailed as exc:
                timings["sql_run"] += _ms(t0)
                attempts.append(Attempt(written=written, ran=checked.sql, error=str(exc), stage="database",
                                        conditions=notes_added, repairs=repairs))
                logger.info("SQL failed (%s): %s", exc, checked.sql)
                failed = attempts[-1]
                continue
            timings["sql_run"] += _ms(t0)
            attempts.append(Attempt(written=written, ran=checked.sql, conditions=notes_added, repairs=repairs))
            truncated = rows.truncated or (checked.capped and len(rows.rows) >= checked.limit)
            text = answer.compose(rows.columns, rows.rows, language, truncated=truncated)
            return SqlOutcome(ANSWERED, text, None, tuple(attempts), rows.columns, rows.rows, truncated,
                              checked.tables, llm_calls=len(attempts), timings_ms=_rounded(timings))
        return self._refused(language, SQL_FAILED, attempts, timings)

    def _refused(self, language: str, reason: str, attempts: list[Attempt], timings: dict[str, float]) -> SqlOutcome:
        key = "unsafe" if reason == SQL_UNSAFE else "failed"
        return SqlOutcome(REFUSED, answer.message(language, key), reason, tuple(attempts), llm_calls=len(attempts),
                          timings_ms=_rounded(timings))


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _rounded(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in timings.items()}
