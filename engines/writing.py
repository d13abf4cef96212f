"""Writing one turn's answer: what the steps decided, shown as a stream, then the turn record.

A quote or a refusal is shown as it is; an LLM draft is streamed from the answer LLM through
:class:`~engines.generation.AnswerFilter`, which turns the model's explicit NOT_FOUND into a plain
refusal before the user sees any of it and appends the sources-disagree note. The sync and async
paths share everything but the loop. When the stream ends, :attr:`AnswerStream.record` holds the
turn record and ``on_done`` (the session) has been given it.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole

from engines.answering.generate import AnswerFilter
from engines.record import TurnRecord
from engines.steps.base import TurnState


class TurnRecorder(Protocol):
    """What writing needs of the pipeline (which satisfies it): the answer LLM, and the record built
    from the steps' outputs once the answer is written. Declared here so writing need not import it."""

    models: Any

    def record(self, state: TurnState, *, answer: str | None = None, not_found: bool = False,
               timings_ms: dict[str, float] | None = None) -> TurnRecord: ...


def chunk(full: str, delta: str) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=full), delta=delta)


def word_pieces(text: str) -> list[str]:
    """A written answer (a quote, a figure from the data) as a stream of words, each with the space
    after it, so a client sees it arrive as it would from an LLM; joined, they are the text."""
    return re.findall(r"\s*\S+\s*", text) if text.strip() else [text]


class AnswerStream:
    """Iterate :meth:`chunks` (or ``await`` :meth:`achunks`) for ``ChatResponse`` deltas."""

    def __init__(self, pipeline: TurnRecorder, state: TurnState, *, started: float,
                 on_done: Callable[[TurnRecord], None] | None = None) -> None:
        self.pipeline = pipeline
        self.state = state
        self.record: TurnRecord | None = None
        self._started = started
        self._on_done = on_done
        draft = state.draft
        self._filter = AnswerFilter(state.language, suffix=draft.suffix if draft else "")
        self._write_started: float | None = None
        self._first_token_ms: float | None = None

    @property
    def answering(self) -> bool:
        """Something gets written (a quote or the LLM's answer): the steps did not refuse."""
        draft = self.state.draft
        return draft is not None and not draft.refused and (draft.text is not None or draft.needs_llm)

    @property
    def needs_llm(self) -> bool:
        """The answer is the LLM's to write (not a quote, a figure or a refusal)."""
        draft = self.state.draft
        return self.answering and draft is not None and draft.text is None

    @property
    def query(self) -> str:
        return self.state.query

    # ------------------------------------------------------------------ sync

    def chunks(self) -> Iterator[ChatResponse]:
        """The deltas. An LLM's first chunk is pulled now, so a connection or auth failure raises in
        the caller's thread (where the REPL can explain it), not inside a history-writing thread."""
        return self._emit(self._parts())

    def text(self) -> str:
        """Write the whole answer and return it (the non-streaming path)."""
        for _ in self.chunks():
            pass
        return self.record.answer if self.record else ""

    def _parts(self) -> Iterator[str]:
        draft = self.state.draft
        if not self.answering or draft is None:
            return iter(())
        self._write_started = time.perf_counter()
        if draft.text is not None:
            return iter(word_pieces(draft.text))
        stream = self.pipeline.models.llm.stream_chat(list(draft.messages))
        first = next(stream, None)
        self._first_token_ms = _ms(self._write_started)

        def deltas() -> Iterator[str]:
            if first is not None:
                yield first.delta or ""
            for part in stream:
                yield part.delta or ""

        return deltas()

    def _emit(self, parts: Iterator[str]) -> Iterator[ChatResponse]:
        for delta in parts:
            if (shown := self._feed(delta)) is not None:
                yield shown
        if (last := self._end()) is not None:
            yield last

    # ------------------------------------------------------------------ async

    async def achunks(self) -> AsyncIterator[ChatResponse]:
        """The async deltas (the LLM's first chunk is awaited before this returns)."""
        return self._aemit(await self._aparts())

    async def _aparts(self) -> AsyncIterator[str]:
        draft = self.state.draft
        if not self.answering or draft is None:
            return _aiter(())
        self._write_started = time.perf_counter()
        if draft.text is not None:
            return _aiter(word_pieces(draft.text))
        stream = await self.pipeline.models.llm.astream_chat(list(draft.messages))
        first = await anext(stream, None)
        self._first_token_ms = _ms(self._write_started)

        async def deltas() -> AsyncIterator[str]:
            if first is not None:
                yield first.delta or ""
            async for part in stream:
                yield part.delta or ""

        return deltas()

    async def _aemit(self, parts: AsyncIterator[str]) -> AsyncIterator[ChatResponse]:
        async for delta in parts:
            if (shown := self._feed(delta)) is not None:
                yield shown
        if (last := self._end()) is not None:
            yield last

    # ------------------------------------------------------------------ shared

    def _feed(self, delta: str) -> ChatResponse | None:
        shown = self._filter.feed(delta)
        return chunk(self._filter.text, shown) if shown else None

    def _end(self) -> ChatResponse | None:
        timings: dict[str, float] = {}
        if not self.answering:  # refused before answering: the refusal is the whole answer
            record = self._finish(None, False, timings)
            return chunk(record.answer, record.answer)
        tail = self._filter.finish()
        if self._first_token_ms is not None:
            timings["first_token"] = self._first_token_ms
        if self._write_started is not None:
            timings["write"] = _ms(self._write_started)
        self._finish(self._filter.text, self._filter.not_found, timings)
        return chunk(self._filter.text, tail) if tail or not self._filter.text else None

    def _finish(self, answer: str | None, not_found: bool, timings: dict[str, float]) -> TurnRecord:
        timings["total"] = _ms(self._started)
        self.record = self.pipeline.record(self.state, answer=answer, not_found=not_found, timings_ms=timings)
        if self._on_done is not None:
            self._on_done(self.record)
        return self.record


async def _aiter(items: list[str] | tuple[str, ...]) -> AsyncIterator[str]:
    for item in items:
        yield item


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
