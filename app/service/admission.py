"""Who may run now, counted by the scarce thing: turns that will have the LLM write their answer
take one of its slots (``slots``; ``queue`` more may wait), every other turn (a quoted answer, a
figure from the data, a refusal) only counts against ``turns`` in flight. Beyond either bound the
client gets 503 with Retry-After at once, never a hang."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Busy(Exception):
    """Every slot is taken and the queue is full."""


class Gate:
    """``slots`` at once, ``queue`` more waiting, the rest refused."""

    def __init__(self, slots: int, queue: int) -> None:
        if slots < 1 or queue < 0:
            raise ValueError(f"need slots >= 1 and queue >= 0, got {slots} and {queue}")
        self.slots, self.queue = slots, queue
        self._semaphore = asyncio.Semaphore(slots)
        self.active = 0
        self.waiting = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.active + self.waiting >= self.slots + self.queue:
            raise Busy()
        self.waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self.waiting -= 1
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            self._semaphore.release()


class Admission:
    """``slot()``: an LLM slot for a turn whose answer the LLM writes; ``turn()``: any turn in flight."""

    def __init__(self, slots: int, queue: int, turns: int = 64) -> None:
        self.llm = Gate(slots, queue)
        self.turns = Gate(max(turns, slots + queue), 0)

    def slot(self):
        return self.llm.slot()

    def turn(self):
        return self.turns.slot()

    @property
    def active(self) -> int:
        return self.llm.active

    @property
    def waiting(self) -> int:
        return self.llm.waiting
