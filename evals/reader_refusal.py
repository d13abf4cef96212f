"""Could the reader's scores refuse? A bar calibrated on dev, reported on test.

Reads the per-turn pools that ``python -m evals.headroom ... --reranker reader --out FILE`` writes
(each turn: answerable or not, the reader's P(answers) for the 20 fused passages). For each candidate
signal (the best score; how far the best stands above the rest of its pool) the bar is the highest
one that refuses at most ``--budget`` of dev's answerable turns; test is then read with that bar,
unanswerable refused beside answerable refused.

    python -m evals.reader_refusal --dev runs/headroom/r2-*-dev.json --test runs/headroom/r2-*-test.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Each signal reads a pool's logits, best first.
SIGNALS: dict[str, Callable[[list[float]], float]] = {
    "best score": lambda lg: lg[0],
    "best - mean of pool": lambda lg: lg[0] - statistics.fmean(lg),
    "best - median of pool": lambda lg: lg[0] - statistics.median(lg),
    "best - second": lambda lg: lg[0] - lg[1] if len(lg) > 1 else 0.0,
    "best as z-score in pool": lambda lg: (lg[0] - statistics.fmean(lg)) / (statistics.pstdev(lg) or 1.0),
}


def pools(paths: Sequence[Path]) -> list[tuple[bool, list[float]]]:
    """(answerable, logits best first) per turn with a scored pool."""
    out = []
    for path in paths:
        for turn in json.loads(path.read_text(encoding="utf-8"))["turns"]:
            scores = turn.get("scores") or []
            if scores:
                logits = sorted((_logit(p) for p in scores), reverse=True)
                out.append((bool(turn["answerable"]), logits))
    return out


def calibrate(dev: list[tuple[bool, list[float]]], signal: Callable[[list[float]], float], budget: float) -> float:
    """The highest bar that refuses at most ``budget`` of dev's answerable turns."""
    values = sorted(signal(lg) for answerable, lg in dev if answerable)
    if not values:
        raise ValueError("the dev files hold no answerable turn with a scored pool: nothing to calibrate on")
    return values[min(int(budget * len(values)), len(values) - 1)]


def refused(rows: list[tuple[bool, list[float]]], signal: Callable[[list[float]], float], bar: float) -> dict[str, Any]:
    answerable = [signal(lg) < bar for a, lg in rows if a]
    unanswerable = [signal(lg) < bar for a, lg in rows if not a]
    return {"answerable_refused": _share(answerable), "unanswerable_refused": _share(unanswerable),
            "answerable": len(answerable), "unanswerable": len(unanswerable)}


def report(dev: list[tuple[bool, list[float]]], test: list[tuple[bool, list[float]]], budget: float) -> dict[str, Any]:
    out = {}
    for name, signal in SIGNALS.items():
        bar = calibrate(dev, signal, budget)
        out[name] = {"bar": round(bar, 3), "dev": refused(dev, signal, bar), "test": refused(test, signal, bar)}
    return out


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def _shown(share: float | None) -> str:
    return "  –  " if share is None else f"{share:.3f}"


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.reader_refusal", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, nargs="+", required=True, help="evals.headroom --out files of dev splits")
    parser.add_argument("--test", type=Path, nargs="+", required=True, help="the same for test splits")
    parser.add_argument("--budget", type=float, default=0.08, help="answerable dev turns the bar may refuse")
    args = parser.parse_args(argv)
    for path in [*args.dev, *args.test]:
        if not path.is_file():
            parser.error(f"{path}: no such file (write it with python -m evals.headroom ... --reranker reader --out)")
    try:
        table = report(pools(args.dev), pools(args.test), args.budget)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"{'signal':26} {'bar':>7}  dev answerable / unanswerable refused   test answerable / unanswerable refused")
    for name, row in table.items():
        d, t = row["dev"], row["test"]
        print(f"{name:26} {row['bar']:7.3f}  {_shown(d['answerable_refused'])} / {_shown(d['unanswerable_refused'])} "
              f"({d['unanswerable']} unanswerable)          {_shown(t['answerable_refused'])} / "
              f"{_shown(t['unanswerable_refused'])} ({t['unanswerable']} unanswerable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
