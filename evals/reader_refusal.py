"""Could the reader's scores refuse? A bar calibrated on dev, reported on test.

Reads the per-turn pools that ``python -m evals.headroom ... --reranker reader --out FILE`` writes
(each turn: answerable or not, the reader's P(answers) for the 20 fused passages). For each candidate
signal (the best score; how far the best stands above the rest of its pool) the bar is the highest
one that refuses at most ``--budget`` of dev's answerable turns; test is then read with that bar,
unanswerable refused beside answerable refused.

With ``--unknown-terms INDEX_ROOT`` it also reads the rule that uses both signals: refuse a question that
names a word no document uses (``engines.answering.unknown_terms``, over the BM25 vocabulary of the index
the pool was scored on, ``INDEX_ROOT/SPLIT``) only when the reader's best score is also under a bar.

    python -m evals.reader_refusal --dev runs/headroom/r2-*-dev.json --test runs/headroom/r2-*-test.json \
        [--unknown-terms runs/idx]
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

from engines.answering.unknown_terms import Vocabulary, unknown_terms
from engines.corpus.store import load_bm25

#: Each signal reads a pool's logits, best first.
SIGNALS: dict[str, Callable[[list[float]], float]] = {
    "best score": lambda lg: lg[0],
    "best - mean of pool": lambda lg: lg[0] - statistics.fmean(lg),
    "best - median of pool": lambda lg: lg[0] - statistics.median(lg),
    "best - second": lambda lg: lg[0] - lg[1] if len(lg) > 1 else 0.0,
    "best as z-score in pool": lambda lg: (lg[0] - statistics.fmean(lg)) / (statistics.pstdev(lg) or 1.0),
}


def pools(paths: Sequence[Path], index_root: Path | None = None) -> list[Any]:
    """(answerable, logits best first) per turn with a scored pool; with ``index_root``, (answerable, logits, whether
    the query names a word the split's documents never use)."""
    out: list[Any] = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        vocabulary = _vocabulary(index_root / Path(data["dataset"]).parent.parent.name) if index_root else None
        for turn in data["turns"]:
            scores = turn.get("scores") or []
            if scores:
                logits = sorted((_logit(p) for p in scores), reverse=True)
                if vocabulary is None:
                    out.append((bool(turn["answerable"]), logits))
                else:
                    out.append((bool(turn["answerable"]), logits, bool(unknown_terms(turn["query"], vocabulary))))
    return out


def _vocabulary(index_dir: Path) -> Vocabulary:
    bm25 = load_bm25(index_dir)
    if bm25 is None:
        raise ValueError(f"{index_dir}: no BM25 index there (the --index evals.headroom scored the pool on)")
    return Vocabulary.of(bm25.vocabulary(), bm25.tokenizer_settings)


#: Bars on the best logit swept for the rule with both signals.
BOTH_BARS = (-6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0)


def both(dev: list[tuple[bool, list[float], bool]], test: list[tuple[bool, list[float], bool]],
         budget: float) -> dict[str, Any]:
    """Unknown words alone, and unknown words with the best score under each bar (the bar dev allows at ``budget``
    marked): {name: {"dev": ..., "test": ...}}."""
    out: dict[str, Any] = {"unknown words alone": {"dev": _rate(dev, math.inf), "test": _rate(test, math.inf)}}
    allowed = [bar for bar in BOTH_BARS if (_rate(dev, bar)["answerable_refused"] or 0) <= budget]
    for bar in BOTH_BARS:
        mark = " (dev's bar)" if allowed and bar == max(allowed) else ""
        out[f"unknown words and best < {bar:g}{mark}"] = {"dev": _rate(dev, bar), "test": _rate(test, bar)}
    return out


def _rate(rows: list[tuple[bool, list[float], bool]], bar: float) -> dict[str, Any]:
    answerable = [unknown and lg[0] < bar for a, lg, unknown in rows if a]
    unanswerable = [unknown and lg[0] < bar for a, lg, unknown in rows if not a]
    return {"answerable_refused": _share(answerable), "unanswerable_refused": _share(unanswerable),
            "answerable": len(answerable), "unanswerable": len(unanswerable)}


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
    parser.add_argument("--unknown-terms", type=Path, metavar="INDEX_ROOT",
                        help="also read unknown words with the reader's score (each split's index in INDEX_ROOT/SPLIT)")
    args = parser.parse_args(argv)
    for path in [*args.dev, *args.test]:
        if not path.is_file():
            parser.error(f"{path}: no such file (write it with python -m evals.headroom ... --reranker reader --out)")
    try:
        table = report(pools(args.dev), pools(args.test), args.budget)
        if args.unknown_terms:
            table.update(both(pools(args.dev, args.unknown_terms), pools(args.test, args.unknown_terms), args.budget))
    except ValueError as exc:
        parser.error(str(exc))
    print(f"{'signal':26} {'bar':>7}  dev answerable / unanswerable refused   test answerable / unanswerable refused")
    for name, row in table.items():
        d, t = row["dev"], row["test"]
        print(f"{name:26} {row.get('bar', math.nan):7.3f}  {_shown(d['answerable_refused'])} / {_shown(d['unanswerable_refused'])} "
              f"({d['unanswerable']} unanswerable)          {_shown(t['answerable_refused'])} / "
              f"{_shown(t['unanswerable_refused'])} ({t['unanswerable']} unanswerable)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
