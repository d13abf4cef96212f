"""A session: one user's conversation over a shared pipeline.

It holds what belongs to that user alone: the chat memory, the session's choices (access
filter, query transforms, router, condense window) and a bounded window of recent turn records.
It is cheap to create; a pipeline serves any number of them at once. A session itself serves
one conversation: do not share it between threads.

What a session may choose from (:class:`~engines.choices.Choices`) is the pipeline's, built once by
the composition root.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer
from llama_index.core.storage.chat_store import SimpleChatStore

from engines.pipeline import Pipeline
from engines.record import TurnRecord
from engines.retrieval.filters import MetadataFilter
from engines.retrieval.transforms import QueryExpander
from engines.steps.base import TurnOptions
from engines.steps.condense import Condensed
from engines.writing import AnswerStream

#: Turn records a session keeps (the REPL's /record, the swap rule's previous rewrite).
MAX_RECORDS = 32
MEMORY_TOKEN_LIMIT = 8000


class Session:
    """One conversation: memory, choices, recent records."""

    def __init__(self, pipeline: Pipeline, *, memory: BaseMemory | None = None, options: TurnOptions | None = None,
                 session_id: str | None = None, max_records: int = MAX_RECORDS, log_turns: bool = True) -> None:
        self.pipeline = pipeline
        self.log_turns = log_turns  # into the pipeline's turn log (evaluation keeps its own records)
        self.id = session_id or uuid.uuid4().hex
        # A store key of its own: LlamaIndex's default key is shared by every buffer on one store.
        self.memory = memory or ChatMemoryBuffer.from_defaults(
            token_limit=MEMORY_TOKEN_LIMIT, chat_store=SimpleChatStore(), chat_store_key=self.id)
        self.options = options or pipeline.choices.defaults()
        self.records: deque[TurnRecord] = deque(maxlen=max_records)
        #: (question, standalone query) of earlier turns, newest last: the swap rule's "previous question"
        self._rewrites: deque[tuple[str, str]] = deque(maxlen=max_records)

    # ------------------------------------------------------------------ choices

    @property
    def filter(self) -> MetadataFilter:
        return self.options.filter

    def set_filter(self, metadata_filter: MetadataFilter) -> None:
        """Restrict every later turn (both retrievers, the sources, the conflict notes)."""
        self.options = replace(self.options, filter=metadata_filter)

    @property
    def expander(self) -> QueryExpander | None:
        return self.options.expander

    @property
    def transforms(self) -> tuple[str, ...]:
        return self.expander.transforms if self.expander else ()

    def set_expander(self, expander: QueryExpander | None) -> None:
        self.options = replace(self.options, expander=expander if expander is not None and expander.is_active else None)

    @property
    def router(self) -> Any:
        return self.options.router

    def set_router(self, router: Any) -> None:
        self.options = replace(self.options, router=router)

    def set_sql_tables(self, tables: frozenset[str] | None) -> None:
        """The tables the database road may read for this session (an API key's list; None: all configured)."""
        self.options = replace(self.options, sql_tables=None if tables is None else frozenset(tables))

    def set_condense_window(self, window: int | None) -> None:
        """Messages of history the condenser sees for this session (0: never rewrite; None: the pipeline's)."""
        if window is not None and window < 0:
            raise ValueError(f"condense window must be >= 0, got {window}")
        self.options = replace(self.options, condense_window=window)

    # ------------------------------------------------------------------ turns

    @property
    def last_record(self) -> TurnRecord | None:
        return self.records[-1] if self.records else None

    def history(self, message: str, chat_history: Sequence[ChatMessage] | None = None) -> list[ChatMessage]:
        """The explicit history when given (an empty list means none), else the memory's."""
        return self.memory.get(input=message) if chat_history is None else list(chat_history)

    def _start(self, message: str, chat_history: Sequence[ChatMessage] | None) -> Any:
        rewrites = list(reversed(self._rewrites))
        return self.pipeline.start(message, self.history(message, chat_history), options=self.options,
                                   rewrites=rewrites, previous_sql=self._previous_sql() if chat_history is None else "")

    def _previous_sql(self) -> str:
        """The statement that answered the previous turn from the data ("" when it took another road or failed)."""
        last = self.last_record
        if last is None or last.route != "sql" or last.sql.get("status") != "answered":
            return ""
        return str(last.sql.get("statement") or "")

    def prepare(self, message: str, chat_history: Sequence[ChatMessage] | None = None) -> AnswerStream:
        """Every step of the turn; the returned stream writes the answer and records the turn.
        Memory is the caller's to update (the chat engine does)."""
        started = time.perf_counter()
        state = self.pipeline.run(self._start(message, chat_history))
        return AnswerStream(self.pipeline, state, started=started, on_done=self._done)

    def run_until(self, step: str, message: str, chat_history: Sequence[ChatMessage] | None = None) -> TurnRecord:
        """The turn up to and including ``step``, recorded with no answer written (retrieval-only
        evaluation stops after "assemble"). Memory is not touched."""
        started = time.perf_counter()
        state = self.pipeline.run(self._start(message, chat_history), until=step)
        record = self.pipeline.record(state, timings_ms={"total": round((time.perf_counter() - started) * 1000, 2)})
        self._done(record)
        return record

    def condense(self, message: str, chat_history: Sequence[ChatMessage]) -> Condensed:
        """The condense step alone, with this session's choices."""
        condense = self.pipeline.step("condense")
        state = self._start(message, chat_history)
        return condense.run(state)

    def _done(self, record: TurnRecord) -> None:
        self.records.append(record)
        self._rewrites.append((record.question, record.query))
        if self.log_turns:
            self.pipeline.finish(record)

    def restore(self, turns: Sequence[tuple[str, str, str]]) -> None:
        """Continue a stored conversation: (question, answer, query used) per earlier turn, oldest first."""
        for question, answer, query in turns:
            self.memory.put(ChatMessage(role=MessageRole.USER, content=question))
            self.memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))
            self._rewrites.append((question, query))

    def reset(self) -> None:
        """A new conversation; the session's choices stay."""
        self.memory.reset()
        self.records.clear()
        self._rewrites.clear()
