"""`python -m app.ingest PATH [--index DIR] [--prune]`: build or update the index.

Validates the whole corpus first (every bad file or line is listed, nothing is written), then
embeds only new or changed documents, with a progress bar. Safe to interrupt and re-run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from app.config import load_settings
from app.console import LineProgress, print_error
from app.factory import ingest_path
from app.logging_setup import configure_logging
from engines.errors import TurnragError
from engines.ingestion import IngestReport


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app.ingest",
        description="Ingest a folder of .md/.txt documents (optional YAML front matter: doc_id, title, "
                    "date, department, active, ...) or a BEIR-style .jsonl corpus (_id, title, text) "
                    "into the hybrid index (Chroma + BM25). Re-running skips unchanged documents.",
    )
    parser.add_argument("path", type=Path, help="folder of documents, a single .md/.txt file, or a .jsonl corpus")
    parser.add_argument("--index", type=Path, help="index folder (default: TURNRAG_INDEX_DIR or .turnrag/index)")
    parser.add_argument("--prune", action="store_true", help="remove documents that are no longer in PATH")
    parser.add_argument("--config", type=Path, help="TOML settings file")
    parser.add_argument("--embedding", help="embedding model: e5-small (default), minilm, hf:<name-or-path>")
    parser.add_argument("--chunk-size", type=int, help="chunk size in tokens (default 400)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def run_ingest(settings, path: Path, prune: bool, console: Console, show_progress: bool = True,
               quiet: bool = False) -> IngestReport:
    """Ingest with a progress bar on the console (progress lines when not a terminal); returns the report."""
    if quiet:
        return ingest_path(settings, path, prune=prune)
    if not show_progress:
        lines = LineProgress(console)
        return ingest_path(settings, path, prune=prune, on_progress=lambda done, total: lines("embedding chunks", done, total))
    with Progress(TextColumn("[bold]Embedding chunks"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, transient=True) as progress:
        task = progress.add_task("embed", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total or None)

        return ingest_path(settings, path, prune=prune, on_progress=on_progress)


def summary(report: IngestReport) -> str:
    return (f"{len(report.added)} added, {len(report.updated)} updated, {len(report.repaired)} repaired, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed; "
            f"{report.total_chunks} chunks in the index ({report.seconds:.1f}s)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    console = Console(stderr=True)
    try:
        settings = load_settings(args.config, index_dir=args.index, embedding=args.embedding, chunk_size=args.chunk_size)
        report = run_ingest(settings, args.path, args.prune, console, show_progress=console.is_terminal,
                            quiet=args.quiet)
    except TurnragError as exc:
        print_error(console, exc)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted; the index is consistent — re-run the same command to finish.")
        return 130
    print(f"{settings.index_dir}: {summary(report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
