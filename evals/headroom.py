"""How much a reranker could win: where each answerable turn's expected value sits in the fused pool.

The product replays the rows as it would answer them, with the rerank step's scorer replaced by one that
records each turn's pool and keeps the fused order, so every turn is what the default pipeline does. Then,
per turn bucket: in how many turns a passage among the fused top 5 / top 10 / whole pool holds a
``must_contain`` value and, with ``--reranker``, among the cross-encoder's top 5 of the same pool. A value
in the pool but not in the top 5 is what a reranker can bring to the answer; one outside the pool it cannot.

    python -m evals.headroom data/eval/heldout4/dev/conversations.jsonl --corpus data/eval/heldout4/corpus \\
        --index IDX --llm-cache IDX-condense.jsonl [--reranker FOLDER] [--out headroom.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.table import Table

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_pipeline, build_reranker
from app.console import ProgressBars
from app.logging_setup import configure_logging
from engines.reader.inputs import SEPARATOR, conversation_text
from engines.steps.rerank import PairScorer, blended_order, rerank_order
from evals.buckets import TURN_BUCKETS, turn_buckets
from evals.configs import resolve_configs
from evals.dataset import load_rows
from evals.evaluation import run_evaluation
from evals.metrics import contains
from evals.runner import RowResult
from evals.variants import models_and_index

CUTS = (5, 10)


class PoolRecorder:
    """A rerank scorer that keeps the fused order and remembers each query's pool, in turn order.
    With ``reads_conversation`` it is given what a conversation-reading scorer would be given: the
    question side first, then the history the pipeline had (which evaluation cannot rebuild exactly),
    so such pools are found by that question side (:meth:`take_prefix`)."""

    def __init__(self, reads_conversation: bool = False) -> None:
        self.reads_conversation = reads_conversation
        self.recorded: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.recorded.append((query, list(passages)))
        return [-float(i) for i in range(len(passages))]

    def take(self, query: str) -> list[str] | None:
        """The oldest pool recorded for ``query`` (rows are replayed in order), or None."""
        return self._take(lambda key: key == query)[1]

    def take_prefix(self, prefix: str) -> tuple[str, list[str] | None]:
        """The oldest (query, pool) whose query is ``prefix`` or starts with it and the separator."""
        return self._take(lambda key: key == prefix or key.startswith(prefix + SEPARATOR))

    def _take(self, match) -> tuple[str, list[str] | None]:
        for i, (key, pool) in enumerate(self.recorded):
            if match(key):
                del self.recorded[i]
                return key, pool
        return "", None


@dataclass(frozen=True)
class TurnPool:
    turn: int
    query: str
    passages: tuple[str, ...]
    values: tuple[str, ...]
    reranked: tuple[int, ...] = ()  # the cross-encoder's order of the passages, when one was given
    answerable: bool = True
    best_score: float | None = None  # the cross-encoder's best score of the pool (a refusal signal)
    scores: tuple[float, ...] = ()  # the cross-encoder's score of each passage, in fused order

    def holding(self) -> list[int]:
        """Fused positions (0-based) of the passages holding an expected value."""
        return [i for i, p in enumerate(self.passages) if any(contains(p, v) for v in self.values)]

    def first_holding(self, order: Sequence[int] | None = None) -> int | None:
        """1-based rank of the first passage holding an expected value, in ``order`` (default: fused)."""
        order = range(len(self.passages)) if order is None else order
        return next((rank for rank, i in enumerate(order, start=1)
                     if any(contains(self.passages[i], v) for v in self.values)), None)


@dataclass(frozen=True)
class Headroom:
    pool: int
    turns: tuple[TurnPool, ...] = ()
    not_reached: int = 0  # answerable rows refused or routed away before the rerank step

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for bucket in TURN_BUCKETS:
            chosen = [t for t in self.turns if t.answerable and bucket in turn_buckets(t.turn)]
            ranks = [t.first_holding() for t in chosen]
            row = {"turns": len(chosen), **{f"top{c}": sum(1 for r in ranks if r and r <= c) for c in CUTS},
                   "pool": sum(1 for r in ranks if r)}
            if any(t.reranked for t in chosen):
                reranked = [t.first_holding(t.reranked) for t in chosen]
                row["reranked_top5"] = sum(1 for r in reranked if r and r <= 5)
            out[bucket] = row
        return out


def collect(results: Sequence[RowResult], recorder: PoolRecorder) -> Headroom:
    """The pools of the answerable rows that name a value, and of the unanswerable rows (for refusal),
    matched to the rows' results in order."""
    turns: list[TurnPool] = []
    not_reached = 0
    for result in results:
        values = tuple(result.row.must_contain or ())
        if result.row.answerable and not values:
            continue
        key, passages = result.query, None
        if not result.refused and result.route == "docs":
            if recorder.reads_conversation:
                key, passages = recorder.take_prefix(conversation_text(result.message or result.row.question,
                                                                       result.query))
            else:
                passages = recorder.take(key)
        if passages is None:  # the gate refused or the router sent it away: no pool was fused for it
            not_reached += result.row.answerable
            continue
        turns.append(TurnPool(result.row.turn, key, tuple(passages), values, answerable=result.row.answerable))
    return Headroom(pool=max((len(t.passages) for t in turns), default=0), turns=tuple(turns),
                    not_reached=not_reached)


def rerank(headroom: Headroom, scorer: PairScorer, fused_weight: float = 0.0) -> Headroom:
    """The same pools in the cross-encoder's order, or its blend with the fused order as the rerank
    step makes it (``fused_weight``; a new object; the fused order is kept beside it)."""
    turns = []
    for t in headroom.turns:
        scores = scorer.score(t.query, list(t.passages))
        order = (blended_order(scores, fused_weight, len(scores)) if fused_weight > 0
                 else rerank_order(t.passages, scores, len(scores)))
        turns.append(replace(t, reranked=order,
                             best_score=max(scores) if scores else None, scores=tuple(round(s, 5) for s in scores)))
    return replace(headroom, turns=tuple(turns))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals.headroom", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="evaluation rows (.jsonl)")
    parser.add_argument("--corpus", type=Path, required=True, help="documents the rows refer to; ingested first")
    parser.add_argument("--pool", type=int, default=20, help="fused chunks per turn (default %(default)s)")
    parser.add_argument("--reranker", help="'reader' (the packaged reader) or a cross-encoder folder (or hub id) whose "
                        "top 5 of each pool is counted too")
    parser.add_argument("--queries", default="condense", help="how each turn's query is made (evals.configs): condense "
                        "(the product's, default) or reference (the rows' own rewrites: no LLM call)")
    parser.add_argument("--llm-cache", type=Path, help="JSONL cache of condense replies")
    parser.add_argument("--out", type=Path, help="write the summary and each turn's ranks as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_common_flags(parser)
    return parser


def main(argv: list[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    out = Console(file=stdout or sys.stdout, highlight=False, width=140)
    err = Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    return run_cli(lambda: _run(args, out, err), err, interrupted="interrupted; nothing written.")


def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    rows = load_rows(args.dataset)
    settings = settings_from(args, rerank_pool=args.pool, reranker="")
    # a bad name fails before the replay
    scorer = build_reranker(settings.model_copy(update={"reranker": args.reranker})) if args.reranker else None
    models, index = models_and_index(settings, args.corpus, args.llm_cache)
    recorder = PoolRecorder(reads_conversation=bool(getattr(scorer, "reads_conversation", False)))
    pipeline = build_pipeline(settings, replace(models, reranker=recorder), index)
    configs = resolve_configs([args.queries])
    with ProgressBars(err.file, disable=args.quiet) as bars:
        result = run_evaluation(pipeline, rows, configs, k=5, retrieval_only=True,
                                on_progress=lambda config, done, total: bars("headroom", done, total))
    headroom = collect(result.rows[args.queries], recorder)
    if scorer is not None:
        headroom = rerank(headroom, scorer, settings.rerank_fused_weight)
    summary = headroom.summary()
    out.print(_table(summary, headroom))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        detail = [{"turn": t.turn, "query": t.query, "answerable": t.answerable, "best_score": t.best_score,
                   "fused_rank": t.first_holding() if t.answerable else None,
                   "reranked_rank": t.first_holding(t.reranked) if t.reranked and t.answerable else None,
                   "holding": t.holding(), "scores": list(t.scores)}
                  for t in headroom.turns]
        args.out.write_text(json.dumps({"dataset": str(args.dataset), "pool": args.pool, "reranker": args.reranker,
                                        "not_reached": headroom.not_reached, "summary": summary, "turns": detail},
                                       ensure_ascii=False, indent=1), encoding="utf-8")
        out.print(f"wrote {args.out}")
    return 0


def _table(summary: dict[str, dict[str, int]], headroom: Headroom) -> Table:
    reranked = any("reranked_top5" in row for row in summary.values())
    table = Table(title=f"the expected value in the fused pool of {headroom.pool} (answerable turns; "
                        f"{headroom.not_reached} refused or routed away before it)")
    for name in ("bucket", "turns", "fused top 5", "fused top 10", "pool", *(["reranked top 5"] if reranked else [])):
        table.add_column(name)
    for bucket, row in summary.items():
        if not row["turns"]:
            continue
        cells = [bucket, str(row["turns"]), str(row["top5"]), str(row["top10"]), str(row["pool"])]
        table.add_row(*cells, *([str(row.get("reranked_top5", "-"))] if reranked else []))
    return table


if __name__ == "__main__":
    raise SystemExit(main())
