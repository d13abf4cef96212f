"""`python -m evals.replay DATASET.jsonl --corpus PATH`: the multi-turn evaluation CLI.

Ingests the corpus (reusing an up-to-date index), replays every row under each query
configuration on that same index, prints the tables and writes report.json, report.md and
hit_by_turn.png. Input and output streams are parameters so tests can drive it.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import IO

from rich.console import Console

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_models, ingest_path, open_pipeline
from app.console import ProgressBars
from app.ingest import summary as ingest_summary
from app.logging_setup import configure_logging
from evals.configs import DEFAULT_CONFIGS, available_configs, resolve_configs
from evals.dataset import load_rows
from evals.evaluation import run_evaluation
from evals.report import print_report, write_report
from evals.runner import MODES

EVAL_ROOT = Path(".turnrag")
PIPED_WIDTH = 160

EPILOG = """\
configurations (--configs, comma-separated; the first is the baseline of the paired comparison):
  lastturn   the question alone, no rewrite (condense window 0)
  condense   the engine's condense step over the row's history
  history    earlier user turns + question concatenated, no LLM
  reference  the row's reference "rewrite" (rows without one are skipped)

dataset rows (JSONL, one user turn a line):
  {"conv_id", "turn", "history": [["user"|"assistant"|"bot", text], ...], "question",
   "type": "standalone"|"non_standalone"|"unanswerable", "gold_doc_ids": [...]}
  optional: answer, must_contain [..], stale_value, rewrite, filters; other fields are carried
  into the report. Produce mtRAG rows with `python -m evals.datasets.mtrag`.

outputs in --out: report.json (schema in docs/report-schema.md), report.md, hit_by_turn.png.
exit status: 0 done, 2 bad dataset/settings/index (one message, no traceback), 130 interrupted.

example:
  python -m evals.replay data/eval/bank/dev/conversations.jsonl --corpus data/sample \\
      --configs lastturn,history,condense,reference --retrieval-only --llm fake
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.replay",
        description="Replay a multi-turn evaluation set through the chatbot and report retrieval "
                    "(hit/recall/MRR/nDCG@k) by turn and question type, refusal beside false refusal, "
                    "answer checks, cost, paired comparisons between query configurations and an "
                    "audit of the rewritten queries.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, help="evaluation rows (.jsonl)")
    parser.add_argument("--corpus", type=Path, required=True,
                        help="documents the rows refer to (folder of .md/.txt or a BEIR .jsonl); ingested first")
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                        help=f"comma-separated query configurations (default %(default)s; "
                             f"available: {', '.join(available_configs())})")
    parser.add_argument("--baseline", help="configuration the others are compared with (default: the first)")
    parser.add_argument("--k", type=int, default=5, help="metric cutoff in documents (default %(default)s)")
    parser.add_argument("--retrieval-only", action="store_true",
                        help="stop each turn after assembling the context (condense, retrieve, gate, conflicts): "
                             "no answer LLM call, no answer metrics")
    parser.add_argument("--mode", choices=MODES, default="rows",
                        help="rows: each row on its own with the labelled history (default); "
                             "live: each conversation in order with the engine's own answers as history")
    parser.add_argument("--out", type=Path, help=f"report folder (default {EVAL_ROOT}/eval-reports/<timestamp>)")
    parser.add_argument("--limit", type=int, help="use only the first N rows")
    parser.add_argument("--top-k", type=int, help="chunks the engine keeps (default: settings, 5)")
    parser.add_argument("--llm-cache", type=Path, help="JSONL cache of condense/transform replies (greedy decoding "
                        "only): resumes long runs and shares the condense step between configurations; "
                        "latencies of cached calls are not real")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_common_flags(parser, index_help="index folder; made to match --corpus exactly (documents not in it are "
                     f"removed). Default: {EVAL_ROOT}/eval-index/<corpus>-<embedding>, apart from the chat index")
    return parser


def main(argv: list[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.mode == "live" and args.retrieval_only:
        parser.error("--mode live replays the engine's own answers as history, so it cannot be --retrieval-only")
    if args.k < 1 or (args.limit is not None and args.limit < 1):
        parser.error("--k and --limit must be at least 1")
    configure_logging(args.verbose)
    out = Console(file=stdout or sys.stdout, highlight=False)
    if not out.is_terminal:  # piped or captured: wide enough for one column per configuration
        out = Console(file=stdout or sys.stdout, highlight=False, width=PIPED_WIDTH)
    err = Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)  # paths in errors stay whole
    condense_log = logging.getLogger("engines.steps.condense")
    previous_level = condense_log.level
    if not args.verbose:  # fallbacks are counted in the report; one warning per row would drown the tables
        condense_log.setLevel(logging.ERROR)
    try:
        return run_cli(lambda: _run(args, out, err), err, interrupted="interrupted; no report written.")
    finally:
        condense_log.setLevel(previous_level)


def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    rows = load_rows(args.dataset)  # a bad dataset fails before any model loads
    if args.limit:
        rows = rows[: args.limit]
    configs = resolve_configs(name for name in args.configs.split(",") if name.strip())
    settings = settings_from(args, top_k=args.top_k)
    if args.index is None:
        settings.index_dir = EVAL_ROOT / "eval-index" / f"{_slug(args.corpus.resolve().name)}-{_slug(settings.embedding)}"
    models = build_models(settings)
    cache = None
    if args.llm_cache:
        from evals.llm_cache import CachedLLM

        cache = CachedLLM(models.condense_llm, args.llm_cache)
        models = replace(models, condense_llm=cache)
    with ProgressBars(err.file, disable=args.quiet) as bars:
        ingested = ingest_path(settings, args.corpus, prune=True, embed_model=models.embed_model,
                               on_progress=lambda done, total: bars("embedding chunks", done, total),
                               companion_embed_model=models.companion_embed_model)
    err.print(f"{settings.index_dir}: {ingest_summary(ingested)}", highlight=False, soft_wrap=True)
    pipeline = open_pipeline(settings, models)
    meta = {"dataset": str(args.dataset), "dataset_sha256": _sha256(args.dataset), "corpus": str(args.corpus),
            "n_rows": len(rows), "limit": args.limit}
    with ProgressBars(err.file, disable=args.quiet) as bars:
        result = run_evaluation(pipeline, rows, configs, k=args.k, retrieval_only=args.retrieval_only,
                                mode=args.mode, baseline=args.baseline, on_progress=bars, meta=meta)
    print_report(result, out)
    if cache is not None:
        out.print(f"LLM cache {args.llm_cache}: {cache.hits} hits, {cache.misses} new calls "
                  "(condense/transform latencies of hits are not real)", highlight=False)
    out_dir = args.out or EVAL_ROOT / "eval-reports" / time.strftime("%Y%m%d-%H%M%S")
    paths = write_report(result, out_dir)
    out.print(f"wrote {paths.json}, {paths.markdown}, {paths.plot}", highlight=False)
    return 0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "corpus"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


if __name__ == "__main__":
    sys.exit(main())
