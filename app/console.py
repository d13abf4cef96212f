"""Shared terminal output helpers for the entry points."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def print_error(console: Console, message: object) -> None:
    """One clear line (or block) starting with 'error:', never a traceback, never markup-parsed."""
    console.print(Text("error: ", style="bold red") + Text(str(message)))
