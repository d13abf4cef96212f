"""How many turns may use the LLM at once, and how many may wait: beyond that the client gets
503 with Retry-After at once, never a hang."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Busy(Exception):
    """Every slot is taken and the queue is full."""


class Admission:
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
