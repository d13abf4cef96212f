"""`python -m evals.routes`: how well the router separates document questions from small talk and
out-of-scope requests, and which confidence threshold to use.

Rows are ``{"text", "route": "docs|direct|out_of_scope", "lang"}``; every question of an eval set
(``--eval-set``, answerable or not) is added as a DOCS row, because the router must never take a
real question away from retrieval (unanswerable ones are the refusal gate's job). The held-out
texts differ from the router's built-in examples. Prints a threshold sweep and the confusion
table at the chosen threshold; writes JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from engines.conversation.router import (
    DIRECT,
    DOCS,
    OUT_OF_SCOPE,
    ROUTES,
    SemanticRouter,
    decide,
    load_examples,
)
from engines.io import read_jsonl

logger = logging.getLogger(__name__)
MAX_FALSE_DECLINE = 0.01  # at most 1% of document questions may be routed away


def load_route_rows(path: Path, eval_set: Path | None = None) -> list[dict[str, Any]]:
    rows = []
    for line in read_jsonl(path):
        row = line.value
        if line.error is not None or row.get("route") not in ROUTES or not str(row.get("text", "")).strip():
            raise SystemExit(f"{line.where}: need 'text' and 'route' in {ROUTES}")
        rows.append(row)
    if eval_set is not None:
        rows += [{"text": line.value["question"], "route": DOCS, "lang": "eval-set"}
                 for line in read_jsonl(eval_set) if line.error is None]
    return rows


def sweep(scored: list[tuple[dict[str, Any], dict[str, float]]], thresholds: list[float],
          margin: float) -> list[dict[str, Any]]:
    """Per threshold: recall per route and the share of DOCS rows routed away (false declines)."""
    out = []
    for threshold in thresholds:
        confusion = Counter((row["route"], decide(scores, threshold, margin)[0]) for row, scores in scored)
        totals = Counter(row["route"] for row, _ in scored)
        recall = {r: confusion[(r, r)] / totals[r] if totals[r] else None for r in ROUTES}
        out.append({"threshold": threshold, "recall": recall, "false_decline": 1 - (recall[DOCS] or 0.0),
                    "confusion": {f"{a}->{b}": n for (a, b), n in sorted(confusion.items())}})
    return out


def choose(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The threshold catching most small talk and out-of-scope requests within the false-decline budget."""
    allowed = [r for r in results if r["false_decline"] <= MAX_FALSE_DECLINE] or results[-1:]
    return max(allowed, key=lambda r: ((r["recall"][DIRECT] or 0) + (r["recall"][OUT_OF_SCOPE] or 0), -r["threshold"]))


def followup_bar(scored: list[tuple[dict[str, Any], dict[str, float]]], chosen: float) -> float:
    """The mid-conversation bar: the 10th percentile of the held-out small talk's DIRECT scores (never
    below the plain bar), so 90% of "thanks"/"bye" still route away while terse follow-ups stay."""
    import numpy as np

    direct = [scores[DIRECT] for row, scores in scored if row["route"] == DIRECT]
    return max(chosen, round(float(np.percentile(direct, 10)), 2)) if direct else chosen


def measure_llm_router(rows: list[dict[str, Any]], kind: str, console: Console) -> dict[str, Any]:
    """Recall per route and latency of the one-call LLM router on the same rows."""
    import time

    from engines.conversation.router import LLMRouter
    from engines.models.registry import build_llm

    router = LLMRouter(build_llm(kind))
    confusion: Counter = Counter()
    latencies = []
    for row in rows:
        t0 = time.perf_counter()
        confusion[(row["route"], router.route(row["text"]).route)] += 1
        latencies.append((time.perf_counter() - t0) * 1000)
    totals = Counter(row["route"] for row in rows)
    recall = {r: confusion[(r, r)] / totals[r] if totals[r] else None for r in ROUTES}
    latencies.sort()
    result = {"recall": recall, "false_decline": 1 - (recall[DOCS] or 0.0),
              "p50_ms": latencies[len(latencies) // 2], "confusion": {f"{a}->{b}": n for (a, b), n in sorted(confusion.items())}}
    console.print(f"LLM router ({kind}): recall " + ", ".join(f"{k} {v:.2f}" for k, v in recall.items())
                  + f"; false decline {result['false_decline']:.3f}; p50 {result['p50_ms']:.0f} ms per turn")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.routes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("routes", type=Path, help="JSONL of {text, route, lang}")
    parser.add_argument("--eval-set", type=Path, help="an eval set whose questions all count as DOCS")
    parser.add_argument("--embedding", default="e5-small")
    parser.add_argument("--examples", type=Path, help="router examples JSON (default: the built-in ones)")
    parser.add_argument("--margin", type=float, default=0.02)
    parser.add_argument("--llm", help="also measure the LLM router with this LLM kind (local, openai, ...)")
    parser.add_argument("--out", type=Path, help="write the sweep as JSON here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    from engines.models.registry import build_embedding

    rows = load_route_rows(args.routes, args.eval_set)
    router = SemanticRouter(build_embedding(args.embedding), load_examples(args.examples), margin=args.margin)
    scored = [(row, router.scores(row["text"])) for row in rows]
    thresholds = [round(0.30 + 0.01 * i, 2) for i in range(69)]
    results = sweep(scored, thresholds, args.margin)
    best = choose(results)

    console = Console()
    counts = Counter(r["route"] for r in rows)
    console.print(f"{len(rows)} rows: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                  + f"; embedding {args.embedding}, margin {args.margin}")
    table = Table(title="Threshold sweep (recall per route; false decline = docs routed away)")
    for col in ("min confidence", "docs", "direct", "out_of_scope", "false decline"):
        table.add_column(col, justify="right")
    shown = results[::5]
    for r in shown + ([best] if best not in shown else []):
        mark = " *" if r is best else ""
        table.add_row(f"{r['threshold']:.2f}{mark}", *(f"{r['recall'][k]:.2f}" for k in ROUTES), f"{r['false_decline']:.3f}")
    console.print(table)
    console.print(f"chosen: min confidence {best['threshold']:.2f} (most non-docs caught with false decline "
                  f"<= {MAX_FALSE_DECLINE:.0%}); confusion {best['confusion']}")
    followup = followup_bar(scored, best["threshold"])
    console.print(f"mid-conversation bar (p10 of held-out small talk, >= chosen): {followup:.2f}")
    for row, s in scored:
        route = decide(s, best["threshold"], args.margin)[0]
        if row["route"] == DOCS and route != DOCS:
            console.print(f"  docs question routed to {route}: {row['text']}")
    llm_result = None
    if args.llm:
        llm_result = measure_llm_router(rows, args.llm, console)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": len(rows), "embedding": args.embedding, "margin": args.margin,
                                        "sweep": results, "chosen": best, "followup_min_confidence": followup,
                                        "llm_router": llm_result},
                                       ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
