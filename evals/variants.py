"""`python -m evals.variants ROWS --corpus DIR --variant NAME:key=value,... ...`: settings side by side.

One index, one set of models and (with ``--llm-cache``) one condense cache; each variant builds its
own pipeline from the settings it overrides and replays every row with answers. The table gives,
per variant, answers holding the expected value by turn bucket, refusal beside false refusal, stale
answers and hit@k: the sweep behind a default, to run on a **dev** split only.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.table import Table

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_models, build_pipeline, ingest_path, open_index, with_reranker
from app.config import Settings
from app.console import ProgressBars
from app.logging_setup import configure_logging
from engines.corpus.store import Index
from engines.errors import ConfigError
from engines.models import Models
from evals.configs import resolve_configs
from evals.dataset import load_rows
from evals.evaluation import run_evaluation
from evals.losses import STAGES

#: Settings a variant cannot change: the models and the index are shared by all variants.
SHARED = ("embedding", "llm", "llm_model", "llm_api_base", "llm_api_key", "condense_llm", "condense_llm_model",
          "index_dir", "chunk_size", "chunk_overlap", "chroma_host", "chroma_port")


#: Settings whose value is a list, written with commas inside a variant ("transforms=original,translate").
_LIST_SETTINGS = frozenset({"transforms", "steps"})


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    """"off+slot:answer_check=off,clause_slot_weight=0.05" -> ("off+slot", {...}); "base:" -> no overrides;
    an item without "=" continues the list before it ("tr:transforms=original,translate")."""
    name, sep, body = text.partition(":")
    if not sep or not name.strip():
        raise ConfigError(f"--variant {text!r}: write NAME:key=value,key=value (NAME: alone for the defaults)")
    overrides: dict[str, str] = {}
    key = ""
    for item in filter(None, (part.strip() for part in body.split(","))):
        if "=" not in item and key in _LIST_SETTINGS:  # a list value: "transforms=original,translate"
            overrides[key] += "," + item
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--variant {name}: {item!r} is not key=value")
        key = key.strip().lower().removeprefix("turnrag_")
        if key in SHARED:
            raise ConfigError(f"--variant {name}: {key!r} is shared by every variant (models and index); "
                              "run evals.variants once per value instead")
        overrides[key] = value.strip()
    return name.strip(), overrides


def summarize(summary: dict[str, Any], k: int) -> dict[str, Any]:
    """The cells of one variant's row (counts, not rates, where the set is small)."""
    answers = summary["answers"]["by_turn"]
    refusal = summary["refusal"]
    cell = lambda bucket: (answers[bucket]["must_contain_hits"], answers[bucket]["n_must_contain"])  # noqa: E731
    return {"must_contain": {b: cell(b) for b in ("all", "turn1", "turn2+")},
            "unanswerable_refused": refusal["refusal_rate"], "n_unanswerable": refusal.get("n_unanswerable"),
            "answerable_refused": refusal["false_refusal_rate"],
            "stale": (answers["all"].get("stale_count"), answers["all"].get("n_stale")),
            f"hit@{k}": summary["all/all"][f"hit@{k}"],
            "lost_at": {b: counts for b, counts in (summary["answers"].get("lost_at") or {}).items()
                        if b in ("turn1", "turn2+")}}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals.variants", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example: python -m evals.variants data/eval/heldout/dev/conversations.jsonl "
                                            "--corpus data/eval/heldout/corpus --variant default: "
                                            "--variant yesno:answer_check=yesno --llm-cache runs/dev-condense.jsonl")
    parser.add_argument("dataset", type=Path, help="evaluation rows (.jsonl); a dev split")
    parser.add_argument("--corpus", type=Path, required=True, help="documents the rows refer to; ingested first")
    parser.add_argument("--variant", action="append", required=True, metavar="NAME:key=value,...",
                        help="settings overridden for one variant (setting names as in app/config.py); repeat")
    parser.add_argument("--query-config", default="condense", help="query configuration (default %(default)s)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--llm-cache", type=Path, help="JSONL cache of condense replies shared by the variants")
    parser.add_argument("--out", type=Path, help="write the table and every row's result as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_common_flags(parser)
    return parser


def main(argv: list[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    out = Console(file=stdout or sys.stdout, highlight=False, width=160)
    err = Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    return run_cli(lambda: _run(args, out, err), err, interrupted="interrupted; nothing written.")


def models_and_index(settings: Settings, corpus: Path, llm_cache: Path | None) -> tuple[Models, Index]:
    """The models (condense replies through ``llm_cache`` when given) and the index of ``corpus``, ingested
    first (unchanged files are skipped): what an evaluation command replays its rows against."""
    models = build_models(settings)
    if llm_cache:
        from evals.llm_cache import CachedLLM

        models = replace(models, condense_llm=CachedLLM(models.condense_llm, llm_cache))
    ingest_path(settings, corpus, embed_model=models.embed_model, companion_embed_model=models.companion_embed_model)
    return models, open_index(settings)


def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    variants = dict(parse_variant(v) for v in args.variant)  # bad flags fail before any model loads
    rows = load_rows(args.dataset)
    configs = resolve_configs([args.query_config])
    base = settings_from(args)
    models, index = models_and_index(base, args.corpus, args.llm_cache)
    table_rows: dict[str, Any] = {}
    results: dict[str, Any] = {}
    for name, overrides in variants.items():
        settings = settings_from(args, **overrides)
        pipeline = build_pipeline(settings, with_reranker(models, settings), index)
        with ProgressBars(err.file, disable=args.quiet) as bars:
            result = run_evaluation(pipeline, rows, configs, k=args.k, retrieval_only=False,
                                    on_progress=lambda config, done, total: bars(name, done, total))
        config = configs[0].name
        table_rows[name] = {"overrides": overrides, **summarize(result.summary[config], args.k)}
        results[name] = [r.to_dict() for r in result.rows[config]]
    out.print(_table(table_rows, args.k))
    out.print(_losses_table(table_rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"dataset": str(args.dataset), "variants": table_rows, "rows": results},
                                       ensure_ascii=False, indent=1), encoding="utf-8")
        out.print(f"wrote {args.out}")
    return 0


def _table(rows: dict[str, Any], k: int) -> Table:
    table = Table(title="answers by variant (must_contain hits / rows; refusal beside false refusal)")
    for column in ("variant", "all", "turn 1", "turn 2+", "unanswerable refused", "answerable refused", "stale only",
                   f"hit@{k}"):
        table.add_column(column)
    for name, r in rows.items():
        mc = r["must_contain"]
        table.add_row(name, *(f"{h}/{n}" for h, n in (mc["all"], mc["turn1"], mc["turn2+"])),
                      f"{r['unanswerable_refused']:.2f} ({r['n_unanswerable']})", f"{r['answerable_refused']:.2f}",
                      "{}/{}".format(*r["stale"]), f"{r[f'hit@{k}']:.2f}")
    return table


def _losses_table(rows: dict[str, Any]) -> Table:
    table = Table(title="where the expected value was lost (answerable rows; evals.losses)")
    for column in ("variant", "turns", *STAGES):
        table.add_column(column)
    for name, r in rows.items():
        for bucket, label in (("turn1", "turn 1"), ("turn2+", "turn 2+")):
            counts = r["lost_at"].get(bucket) or {}
            table.add_row(name, label, *(str(counts.get(stage, 0)) for stage in STAGES))
    return table


if __name__ == "__main__":
    sys.exit(main())
