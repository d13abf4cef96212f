"""`python -m app.ingest PATH [--index DIR] [--prune]`: build or update the index.

Validates the whole corpus first (every bad file or line is listed, nothing is written), then
embeds only new or changed documents, with a progress bar. Safe to interrupt and re-run. Files
left out (unsupported, scans, junk, empty) are listed with their reason, and files that chunk
badly (a giant line) with a warning: nothing disappears silently.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import ingest_path
from app.config import Settings
from app.console import ProgressBars
from app.logging_setup import configure_logging
from engines.answering.gate_calibration import GateCalibration
from engines.corpus.ingestion import IngestReport
from engines.corpus.store import Manifest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app.ingest",
        description="Ingest a folder of documents or a BEIR-style .jsonl corpus (_id, title, text) into the "
                    "hybrid index (Chroma + BM25). Re-running skips unchanged documents.",
        epilog="Formats: .md/.txt (optional YAML front matter: doc_id, title, date, department, active, "
               "supersedes, ...); .pdf (its text layer; chunks name their page), .docx and .html (headings, lists "
               "and tables kept as Markdown; chunks name their section). Title and date come from the "
               "document's properties or its first lines; doc_id is the file name without extension. "
               "Files not ingested are listed with their reason (unsupported type, no text layer, binary or "
               "junk, empty, unreadable); a line over 20,000 characters or a very large file is warned about. "
               "More in docs/documents.md.",
    )
    parser.add_argument("path", type=Path, help="folder of documents, a single document, or a .jsonl corpus")
    parser.add_argument("--prune", action="store_true", help="remove documents that are no longer in PATH")
    parser.add_argument("--chunk-size", type=int, help="chunk size in tokens (default 400)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_common_flags(parser, llm=False)
    return parser


def run_ingest(settings: Settings, path: Path, prune: bool, console: Console, quiet: bool = False) -> IngestReport:
    """Ingest with a progress bar on the console (a line every 30 s when it is not a terminal)."""
    with ProgressBars(console.file, disable=quiet) as bars:
        return ingest_path(settings, path, prune=prune, on_progress=lambda done, total: bars("embedding chunks", done, total),
                           on_companion_progress=lambda done, total: bars("English chunks, second embedder", done, total))


def ensure_index(settings: Settings, corpus: Path, console: Console) -> None:
    """Ingest the bundled (or given) corpus when the index folder has no manifest yet."""
    manifest = Manifest.load(Path(settings.index_dir))
    if manifest is not None and manifest.corpus_hash:
        return  # a finished index (an interrupted first ingest has no corpus hash yet)
    console.print(f"No index in {settings.index_dir}: ingesting {corpus} (first run only)…", markup=False)
    report = run_ingest(settings, corpus, prune=False, console=console)
    console.print(summary(report), markup=False)
    for line in left_out_lines(report):
        console.print(line, markup=False)
    for line in [*replacement_lines(settings), gate_line(settings)]:
        if line:
            console.print(line, markup=False)


def replacement_lines(settings: Settings) -> list[str]:
    """Documents another one replaces (engines.corpus.replacements), and what retrieval does with them."""
    manifest = Manifest.load(Path(settings.index_dir))
    found = (manifest.replacements or []) if manifest is not None else []
    what = ("left out of retrieval unless a question names one (TURNRAG_LEAVE_OUT_REPLACED=false keeps them)"
            if settings.leave_out_replaced else "kept in retrieval (TURNRAG_LEAVE_OUT_REPLACED=true leaves them out)")
    lines = [f"{len(found)} document(s) replaced by a newer one, {what}:"] if found else []
    return lines + [f"  {r['old']} <- {r['new']} ({r['basis']}: {r['evidence'][:100]})" for r in found]


def gate_line(settings: Settings) -> str:
    """What the refusal gate measured on this corpus at ingest (empty when it measured nothing)."""
    manifest = Manifest.load(Path(settings.index_dir))
    calibration = GateCalibration.from_dict(manifest.gate) if manifest is not None else None
    return calibration.summary(settings.refusal_budget) if calibration is not None else ""


def left_out_lines(report: IngestReport) -> list[str]:
    """Files not ingested, each with its reason, then warnings about files that were."""
    lines = [f"{len(report.skipped)} file(s) not ingested (nothing was written for them):"] if report.skipped else []
    lines += [f"  {item}" for item in report.skipped]
    return lines + [f"warning: {warning}" for warning in report.warnings]


def summary(report: IngestReport) -> str:
    return (f"{len(report.added)} added, {len(report.updated)} updated, {len(report.repaired)} repaired, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed; "
            f"{report.total_chunks} chunks in the index ({report.seconds:.1f}s)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    console = Console(stderr=True)

    def body() -> int:
        settings = settings_from(args, chunk_size=args.chunk_size)
        report = run_ingest(settings, args.path, args.prune, console, quiet=args.quiet)
        print(f"{settings.index_dir}: {summary(report)}")
        for line in left_out_lines(report):
            print(line)
        for line in [*replacement_lines(settings), gate_line(settings)]:
            if line:
                print(line)
        return 0

    return run_cli(body, console, interrupted="interrupted; the index is consistent — re-run the same command to finish.")


if __name__ == "__main__":
    sys.exit(main())
