"""Shared terminal output helpers for the entry points."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def print_error(console: Console, message: object) -> None:
    """One clear line (or block) starting with 'error:', never a traceback, never markup-parsed,
    never hard-wrapped (a file path broken across lines cannot be copied)."""
    console.print(Text("error: ", style="bold red") + Text(str(message)), soft_wrap=True)  # paths stay copyable


class LineProgress:
    """Progress for logs and pipes (no terminal, so no bar): one line at most every ``every_s``
    seconds with the rate and the time left, so a long background run is never silent."""

    def __init__(self, console: Console, every_s: float = 30.0) -> None:
        import time

        self._console = console
        self._every_s = every_s
        self._clock = time.monotonic
        self._started: dict[str, tuple[float, int]] = {}
        self._last: dict[str, float] = {}

    def __call__(self, label: str, done: int, total: int | None) -> None:
        now = self._clock()
        start, start_done = self._started.setdefault(label, (now, done))
        finished = bool(total) and done >= (total or 0)
        if not finished and now - self._last.get(label, start) < self._every_s:
            return
        self._last[label] = now
        rate = (done - start_done) / (now - start) if now > start else 0.0
        left = f", ~{((total or 0) - done) / rate / 60:.0f} min left" if rate > 0 and total and not finished else ""
        self._console.print(f"{label}: {done}/{total or '?'} ({rate:.1f}/s{left})", highlight=False)
