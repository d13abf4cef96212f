"""Terminal output the entry points share: one error line, progress bars."""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console
from rich.text import Text
from tqdm import tqdm


def print_error(console: Console, message: object) -> None:
    """One clear line (or block) starting with 'error:', never a traceback, never markup-parsed,
    never hard-wrapped (a file path broken across lines cannot be copied)."""
    console.print(Text("error: ", style="bold red") + Text(str(message)), soft_wrap=True)  # paths stay copyable


class ProgressBars:
    """tqdm bars driven by the library's ``(label, done, total)`` callbacks, one bar per label.

    On a terminal they redraw continuously; in a log or a pipe a bar writes at most one line every
    ``every_s`` seconds (with its rate and time left), so a long background run is never silent
    and never floods the log. Use as a context manager; ``disable`` for ``--quiet``.
    """

    def __init__(self, file: IO[str] | None = None, *, every_s: float = 30.0, disable: bool = False) -> None:
        self._file = file or sys.stderr
        interactive = bool(getattr(self._file, "isatty", lambda: False)())
        self._every_s = 0.1 if interactive else every_s
        self._disable = disable
        self._bars: dict[str, Any] = {}

    def __call__(self, label: str, done: int, total: int | None) -> None:
        bar = self._bars.get(label)
        if bar is None:
            bar = self._bars[label] = tqdm(total=total or None, desc=label, file=self._file, mininterval=self._every_s,
                                           dynamic_ncols=True, disable=self._disable, unit="it")
        if total and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
        self._bars.clear()

    def __enter__(self) -> "ProgressBars":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
