"""`python -m evals.formats ROWS --corpus DIR`: the same corpus as Markdown, HTML, DOCX and PDF, side by side.

A team's documents arrive as PDF and Word; retrieval must not get worse for it. Each Markdown file
of ``--corpus`` (front matter: doc_id, title, date) is turned into the other formats by the tools
those files come from: pandoc writes a standalone HTML page (``<title>``, a date ``<meta>``) and a
DOCX (core properties), headless Chromium prints the page to PDF. Every format is ingested into
its own index by the product's own readers (engines.corpus.converted), the file named by its
doc_id, and the rows are replayed with their reference rewrites (no LLM): hit@5 by turn bucket,
per format, with the difference from Markdown.

    python -m evals.formats data/eval/heldout/test/conversations.jsonl --corpus data/eval/heldout/corpus
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.table import Table

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_models, build_pipeline, ingest_path, open_index
from app.console import ProgressBars
from app.logging_setup import configure_logging
from engines.errors import ConfigError
from evals.dataset import load_rows
from evals.evaluation import run_evaluation

FORMATS = ("md", "html", "docx", "pdf")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer")
BUCKETS = ("all/all", "all/turn1", "all/turn2+")
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ConfigError(f"{name} is not installed: `apt-get install -y {name}` (it makes the {name} variants)")
    return path


def _run(*args: str) -> None:
    subprocess.run(list(args), check=True, capture_output=True, timeout=180)


def front_matter(text: str) -> dict[str, str]:
    """The simple ``key: value`` lines of a Markdown file's front matter."""
    found = _FRONT.match(text)
    if not found:
        return {}
    out = {}
    for line in found.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip().strip("'\"")
    return out


def convert(corpus: Path, out: Path, fmt: str, progress: Callable[[int, int], None] | None = None) -> Path:
    """``corpus``'s Markdown files as ``fmt`` files in ``out/fmt`` (kept: converted once)."""
    target = out / fmt
    files = sorted(corpus.glob("*.md"))
    if fmt == "md":
        return corpus
    target.mkdir(parents=True, exist_ok=True)
    pandoc = _tool("pandoc")
    chromium = _tool("chromium") if fmt == "pdf" else ""
    for done, path in enumerate(files, start=1):
        meta = front_matter(path.read_text(encoding="utf-8"))
        doc_id = meta.get("doc_id") or path.stem
        final = target / f"{doc_id}.{fmt}"
        if not final.exists():
            page = out / "html" / f"{doc_id}.html"
            date = ["--metadata", f"date={meta['date']}"] if meta.get("date") else []
            if fmt in ("html", "pdf") and not page.exists():
                page.parent.mkdir(parents=True, exist_ok=True)
                _run(pandoc, "--standalone", "--metadata", "lang=vi", *date, "-f", "markdown", str(path),
                     "-o", str(page))
            if fmt == "docx":
                _run(pandoc, *date, "-f", "markdown", str(path), "-o", str(final))
            elif fmt == "pdf":
                _run(chromium, *CHROMIUM_FLAGS, f"--print-to-pdf={final.resolve()}", page.resolve().as_uri())
        if progress:
            progress(done, len(files))
    return target


def measure(rows_path: Path, corpus: Path, work: Path, formats: tuple[str, ...] = FORMATS, *,
            progress: Callable[[str, int, int], None] | None = None, **overrides: Any) -> dict[str, dict[str, float]]:
    """hit@5 (and MRR@5) per format and turn bucket, reference rewrites, one set of models."""
    from app.config import load_settings

    rows = load_rows(rows_path)
    models = None
    out: dict[str, dict[str, float]] = {}
    for fmt in formats:
        folder = convert(corpus, work / "files", fmt, (lambda d, t, f=fmt: progress(f"convert {f}", d, t)) if progress else None)
        settings = load_settings(None, **{"index_dir": work / "idx" / fmt, "log_dir": None, "llm": "fake", **overrides})
        models = models or build_models(settings)
        ingest_path(settings, folder, embed_model=models.embed_model, companion_embed_model=models.companion_embed_model)
        pipeline = build_pipeline(settings, models, open_index(settings))
        result = run_evaluation(pipeline, rows, configs=["reference"], k=5, retrieval_only=True,
                                on_progress=(lambda c, d, t, f=fmt: progress(f"replay {f}", d, t)) if progress else None)
        summary = result.summary["reference"]
        out[fmt] = {f"{bucket} {metric}": round(float(summary[bucket][metric]), 4)
                    for bucket in BUCKETS if bucket in summary for metric in ("hit@5", "mrr@5")}
        out[fmt]["rows"] = sum(1 for r in result.rows["reference"] if not r.skipped)
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals.formats", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="evaluation rows (.jsonl) with reference rewrites")
    parser.add_argument("--corpus", type=Path, required=True, help="the Markdown corpus (front matter) they refer to")
    parser.add_argument("--work", type=Path, help="keep the converted files and indexes here (default: a temp folder)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated, of md,html,docx,pdf")
    parser.add_argument("--out", type=Path, help="write the table as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_common_flags(parser, llm=False)
    return parser


def main(argv: list[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    out = Console(file=stdout or sys.stdout, highlight=False, width=140)
    err = Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    return run_cli(lambda: _run_cli(args, out, err), err, interrupted="interrupted; converted files are kept in --work.")


def _run_cli(args: argparse.Namespace, out: Console, err: Console) -> int:
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"--formats: {', '.join(unknown)} unknown; use some of {', '.join(FORMATS)}")
    overrides = {"embedding": args.embedding} if args.embedding else {}
    settings_from(args)  # a bad --config fails here, before anything is converted
    with tempfile.TemporaryDirectory(prefix="turnrag-formats-") as tmp, \
            ProgressBars(err.file, disable=args.quiet) as bars:
        work = args.work or Path(tmp)
        table = measure(args.dataset, args.corpus, work, formats, progress=bars, **overrides)
    view = Table(title=f"{args.dataset}: hit@5 by format (reference rewrites)")
    view.add_column("format")
    keys = [k for k in next(iter(table.values())) if k != "rows"]
    for key in keys:
        view.add_column(key)
    for fmt, row in table.items():
        base = table.get("md", {})
        view.add_row(fmt, *[f"{row[k]:.3f}" + (f" ({row[k] - base[k]:+.3f})" if fmt != "md" and k in base else "")
                            for k in keys])
    out.print(view)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"dataset": str(args.dataset), "corpus": str(args.corpus), "formats": table},
                                       indent=1), encoding="utf-8")
        out.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
