"""What every command line shares: the common flags, settings from them, and one way to fail.

A :class:`~engines.errors.TurnragError` (bad input, setting, index or model) becomes one
``error:`` line and exit status 2, never a traceback; Ctrl-C exits 130 with a line saying what
state things are in. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from app.config import Settings, load_settings
from app.console import print_error
from engines.errors import TurnragError
from engines.models.registry import embedder_names, llm_names

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 2, 130


def add_common_flags(parser: argparse.ArgumentParser, *, llm: bool = True, index_help: str | None = None) -> None:
    """--config, --index, --embedding, --llm (unless ``llm=False``), -v."""
    parser.add_argument("--config", type=Path, help="TOML settings file (also TURNRAG_CONFIG)")
    parser.add_argument("--index", type=Path, help=index_help or "index folder (default TURNRAG_INDEX_DIR or .turnrag/index)")
    parser.add_argument("--embedding", help=f"embedding model: {' | '.join(embedder_names())}")
    if llm:
        parser.add_argument("--llm", help=f"LLM: {' | '.join(llm_names())}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def settings_from(args: argparse.Namespace, **overrides: Any) -> Settings:
    """Settings with the common flags applied (flags > environment > TOML file > defaults)."""
    return load_settings(getattr(args, "config", None), index_dir=getattr(args, "index", None),
                         embedding=getattr(args, "embedding", None), llm=getattr(args, "llm", None), **overrides)


def run_cli(body: Callable[[], int], console: Console, *, interrupted: str = "interrupted.") -> int:
    """Run ``body``; errors a user can act on become one line and exit 2, Ctrl-C exits 130."""
    try:
        return body()
    except TurnragError as exc:
        print_error(console, exc)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        console.print(interrupted, highlight=False)
        return EXIT_INTERRUPTED
