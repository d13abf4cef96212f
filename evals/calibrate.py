"""`python -m evals.calibrate DATASET.jsonl --corpus PATH`: choose the refusal threshold from data.

For every row, retrieve with the row's reference rewrite (or the question on turn 1) and take
the best raw cosine before fusion. Answerable rows should clear the threshold, unanswerable ones
should not. Prints refusal rate on unanswerable rows beside false-refusal rate on answerable rows
for a sweep of thresholds and recommends the one with the best balanced accuracy among those
whose false-refusal rate stays within ``--max-false-refusal``.

Beside the sweep it checks the label-free gates against the labels: the threshold measured on the
corpus at ingest (``engines.answering.gate_calibration``) at several budgets and the embedder's registered
value, each with refusal, false refusal and, with ``--off-topic ROUTES.jsonl``, the share of that
file's out-of-scope questions it refuses.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

from app.cli import run_cli
from app.compose import build_models, ingest_path, open_pipeline
from app.config import load_settings
from app.logging_setup import configure_logging
from engines.answering.gate_calibration import GateCalibration
from engines.io import read_jsonl
from engines.models.registry import calibration_for
from engines.text import detect_language


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float
    refusal_rate: float  # on unanswerable rows (higher is better)
    false_refusal_rate: float  # on answerable rows (lower is better)

    @property
    def balanced_accuracy(self) -> float:
        return (self.refusal_rate + 1.0 - self.false_refusal_rate) / 2


def sweep(answerable: list[float], unanswerable: list[float], thresholds: list[float]) -> list[ThresholdPoint]:
    """Refusal/false-refusal at each threshold (refuse when best score < threshold)."""
    ans, una = np.asarray(answerable), np.asarray(unanswerable)
    return [ThresholdPoint(float(t), float((una < t).mean()) if len(una) else 0.0,
                           float((ans < t).mean()) if len(ans) else 0.0) for t in thresholds]


def recommend(points: list[ThresholdPoint], max_false_refusal: float) -> ThresholdPoint:
    allowed = [p for p in points if p.false_refusal_rate <= max_false_refusal] or points
    return max(allowed, key=lambda p: (p.balanced_accuracy, -p.false_refusal_rate))


def row_scores(pipeline, rows: list[dict]) -> list[float]:
    """Each row's best raw cosine, retrieved with its reference rewrite (or its question)."""
    retriever = pipeline.retriever()
    return [max((n.raw_scores.get("vector", -1.0) for n in retriever.retrieve(row.get("rewrite") or row["question"])),
                default=-1.0) for row in rows]


def language_offset(rows: list[dict], scores: list[float], quantile: float = 5.0) -> dict[str, tuple[int, float]]:
    """Per question language, (answerable rows, their ``quantile`` percentile best cosine): how far one
    language's questions score below the other's on this embedder (``Calibration.refusal_english_offset``)."""
    out = {}
    for lang in ("vi", "en"):
        xs = [s for s, r in zip(scores, rows) if r["type"] != "unanswerable" and detect_language(r["question"]) == lang]
        if xs:
            out[lang] = (len(xs), float(np.percentile(xs, quantile)))
    return out


def off_topic_scores(pipeline, routes: list[dict]) -> list[float]:
    """Best cosine of each out-of-scope utterance of a routes file (the router bypassed)."""
    retriever = pipeline.retriever()
    return [max((n.raw_scores.get("vector", -1.0) for n in retriever.retrieve(r["text"])), default=-1.0)
            for r in routes if r.get("route") == "out_of_scope"]


def gate_table(settings, manifest, answerable: list[float], unanswerable: list[float],
               off_topic: list[float]) -> list[dict]:
    """Each label-free gate's threshold and what it does to the labelled rows."""
    gates = {"model (registered)": calibration_for(settings.embedding).refusal_min_vector}
    calibration = GateCalibration.from_dict(manifest.gate) if manifest is not None else None
    if calibration is not None:
        for budget in (0.02, 0.05, 0.10):
            gates[f"corpus, budget {budget:.2f}"] = calibration.min_vector(budget)
    rate = lambda xs, t: float(np.mean(np.asarray(xs) < t)) if xs else None
    return [{"gate": name, "threshold": round(t, 4), "refusal": rate(unanswerable, t),
             "false_refusal": rate(answerable, t), "off_topic_refused": rate(off_topic, t)}
            for name, t in gates.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--index", type=Path)
    parser.add_argument("--embedding")
    parser.add_argument("--max-false-refusal", type=float, default=0.05)
    parser.add_argument("--off-topic", type=Path, help="routes .jsonl whose out_of_scope rows are off-topic questions")
    parser.add_argument("--out", type=Path, help="write the sweep as JSON here")
    args = parser.parse_args(argv)
    configure_logging()
    return run_cli(lambda: _run(args), Console(stderr=True))


def _run(args: argparse.Namespace) -> int:
    settings = load_settings(index_dir=args.index, embedding=args.embedding, llm="fake", log_dir=None, conflicts=False)
    ingest_path(settings, args.corpus)
    pipeline = open_pipeline(settings, build_models(settings))
    rows = [line.value for line in read_jsonl(args.dataset) if line.error is None]
    scores = row_scores(pipeline, rows)
    answerable = [s for s, r in zip(scores, rows) if r["type"] != "unanswerable"]
    unanswerable = [s for s, r in zip(scores, rows) if r["type"] == "unanswerable"]
    thresholds = [round(t, 3) for t in np.arange(0.0, 0.96, 0.01)]
    points = sweep(answerable, unanswerable, thresholds)
    best = recommend(points, args.max_false_refusal)
    print(f"{len(answerable)} answerable, {len(unanswerable)} unanswerable rows; embedding {settings.embedding}")
    print(f"best cosine  answerable p5={np.percentile(answerable, 5):.3f} min={min(answerable):.3f} | "
          f"unanswerable max={max(unanswerable, default=float('nan')):.3f} median={np.median(unanswerable):.3f}")
    by_language = language_offset(rows, scores)
    print("answerable p5 by question language: " + ", ".join(f"{lang} {p5:.3f} (n={n})" for lang, (n, p5) in by_language.items())
          + (f"; English offset {by_language['vi'][1] - by_language['en'][1]:.3f}" if len(by_language) == 2 else ""))
    print("threshold  refusal(unanswerable)  false_refusal(answerable)")
    for p in points:
        mark = "  <- recommended" if p == best else ""
        print(f"{p.threshold:9.2f}  {p.refusal_rate:21.2f}  {p.false_refusal_rate:25.2f}{mark}")
    routes = [line.value for line in read_jsonl(args.off_topic) if line.error is None] if args.off_topic else []
    off_topic = off_topic_scores(pipeline, routes)
    table = gate_table(settings, pipeline.index.manifest, answerable, unanswerable, off_topic)
    print(f"\nlabel-free gates ({len(off_topic)} off-topic questions)\n"
          "gate                   threshold  refusal  false_refusal  off_topic_refused")
    fmt = lambda x: "   –" if x is None else f"{x:5.2f}"
    for g in table:
        print(f"{g['gate']:22} {g['threshold']:9.3f}  {fmt(g['refusal'])}    {fmt(g['false_refusal'])}          "
              f"{fmt(g['off_topic_refused'])}")
    if args.out:
        args.out.write_text(json.dumps({"answerable": answerable, "unanswerable": unanswerable, "off_topic": off_topic,
                                        "recommended": best.threshold, "gates": table}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
