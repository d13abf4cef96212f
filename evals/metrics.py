"""Per-row scores first, then bucket aggregates: retrieval, refusal, answers and cost.

Retrieval metrics are document-level and computed by ranx over answerable rows; their names
are the report keys: ``hit@5``, ``recall@5``, ``mrr@5``, ``ndcg@5`` (binary relevance, the list
cut at k). The small kernels below compute the same numbers by hand; tests keep them in step
with ranx, and they document what each number means.

Refusal is read from the structured ``refused`` flag of the turn record, never from answer
text: on unanswerable rows refusing is right (refusal rate), on answerable rows it is a miss
(false-refusal rate). Both are always reported side by side, because better retrieval can
make a bot confidently answer what the documents never say.
"""

from __future__ import annotations

import math
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from evals.buckets import POSITIONS, TURN_BUCKETS, turn_buckets, turn_position
from evals.dataset import all_bucket_keys, row_bucket_keys
from evals.runner import RowResult
from evals.stats import mean as _mean
from evals.stats import percentile

#: Our metric name -> ranx's.
RANX_NAMES = {"hit": "hit_rate", "recall": "recall", "mrr": "mrr", "ndcg": "ndcg"}
#: The turn's steps (engines/steps), then writing the answer; each timed by the pipeline.
LATENCY_STEPS = ("route", "condense", "retrieve", "gate", "rerank", "assemble", "answer", "check", "first_token", "write", "total")


def metric_names(k: int) -> tuple[str, ...]:
    """The retrieval metrics at cutoff k, in report order."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return tuple(f"{name}@{k}" for name in RANX_NAMES)


def hit_metric(k: int) -> str:
    return f"hit@{k}"


# ---------------------------------------------------------------------------------- kernels


def hit_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 when any gold document is in the first k, else 0."""
    wanted = set(gold)
    return float(any(d in wanted for d in ranked[:k]))


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold documents found in the first k."""
    wanted = set(gold)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def reciprocal_rank_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 / rank of the first gold document within the first k (0 if none)."""
    wanted = set(gold)
    return next((1.0 / rank for rank, d in enumerate(ranked[:k], start=1) if d in wanted), 0.0)


def ndcg_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-relevance nDCG: DCG of the first k over the DCG of a perfect list."""
    wanted = set(gold)
    dcg = sum(1.0 / math.log2(rank + 1) for rank, d in enumerate(ranked[:k], start=1) if d in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal if ideal else 0.0


def retrieval_scores(queries: dict[str, tuple[Sequence[str], Sequence[str]]], k: int) -> dict[str, dict[str, float]]:
    """Per-query metrics from ranx: ``{query_id: {"hit@k": .., ...}}``.

    ``queries`` maps an id to (ranked doc ids, gold doc ids); every query needs a gold doc.
    """
    if not queries:
        return {}
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Qrels, Run, evaluate  # heavy (numba): imported only when scoring

    qrels = Qrels({qid: {d: 1 for d in gold} for qid, (_, gold) in queries.items()})
    run = Run({qid: {d: float(len(ranked) - i) for i, d in enumerate(ranked)} for qid, (ranked, _) in queries.items()})
    ours = metric_names(k)
    ranx_metrics = [f"{RANX_NAMES[name.split('@')[0]]}@{k}" for name in ours]
    with warnings.catch_warnings():  # ranx's kernels warn about an int cast when numba first compiles them
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        evaluate(qrels, run, ranx_metrics, return_mean=False, save_results_in_run=True)
    return {qid: {name: float(run.scores[rm][qid]) for name, rm in zip(ours, ranx_metrics)} for qid in queries}


# ---------------------------------------------------------------------------------- answers

_THOUSANDS = re.compile(r"(?<=\d)[.,\u00a0\u202f](?=\d{3}(?!\d))")
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")
_SPACES = re.compile(r"\s+")


def normalise_answer(text: str) -> str:
    """NFC, case-folded, one space between words, numbers without thousands separators and
    with a decimal point: "1.200.000" == "1,200,000" == "1200000", "8,5%" == "8.5%"."""
    text = unicodedata.normalize("NFC", text).casefold()
    text = _THOUSANDS.sub("", text)
    text = _DECIMAL_COMMA.sub(".", text)
    return _SPACES.sub(" ", text).strip()


def contains(answer: str, needle: str) -> bool:
    """Substring match after normalisation; a number must not be part of a longer number
    ("1 ngày" is not in "11 ngày")."""
    wanted = normalise_answer(needle)
    if not wanted:
        return False
    before = r"(?<![\d.])" if wanted[0].isdigit() else ""
    after = r"(?!\.?\d)" if wanted[-1].isdigit() else ""
    return re.search(before + re.escape(wanted) + after, normalise_answer(answer)) is not None


def must_contain_ok(answer: str, needles: Sequence[str]) -> bool | None:
    """All required strings present (None when the row lists none)."""
    return all(contains(answer, n) for n in needles) if needles else None


def is_stale(answer: str, stale_value: str | None, needles: Sequence[str]) -> bool | None:
    """The answer quotes the outdated value and is not otherwise correct (None: no stale label).

    A correct answer may mention the old value it replaces ("now 2%, was 3%"), so quoting it
    only counts as stale when the required strings are not all there.
    """
    if not stale_value:
        return None
    return contains(answer, stale_value) and must_contain_ok(answer, needles) is not True


# ---------------------------------------------------------------------------------- per row


def score_rows(results: Sequence[RowResult], k: int, *, retrieval_only: bool) -> list[RowResult]:
    """New results with retrieval scores (answerable rows) and answer checks (full runs)."""
    queries = {str(r.index): (r.retrieved_doc_ids, r.row.gold_doc_ids)
               for r in results if r.scored and r.row.answerable}
    per_query = retrieval_scores(queries, k)
    hit = hit_metric(k)
    scored = []
    for r in results:
        if not r.scored:
            scored.append(r)
            continue
        scores = per_query.get(str(r.index), {})
        changes: dict[str, Any] = {"scores": scores, "hit": bool(scores[hit]) if scores else None}
        if not retrieval_only:
            changes["must_contain_ok"] = must_contain_ok(r.answer, r.row.must_contain)
            changes["stale"] = is_stale(r.answer, r.row.stale_value, r.row.must_contain)
        scored.append(replace(r, **changes))
    return scored


# ---------------------------------------------------------------------------------- aggregates


def summarise(results: Sequence[RowResult], k: int, *, retrieval_only: bool) -> dict[str, Any]:
    """One configuration's summary from scored rows (see docs/report-schema.md for the keys)."""
    scored = [r for r in results if r.scored]
    names = metric_names(k)
    summary: dict[str, Any] = {}
    for key in all_bucket_keys():
        members = [r for r in scored if key in row_bucket_keys(r.row.type, r.row.turn)]
        summary[key] = bucket_summary(members, names)
    summary["by_position"] = {
        group: {p: bucket_summary([r for r in scored if r.row.answerable and turn_position(r.row.turn) == p
                                   and group in ("all", r.row.type)], names) for p in POSITIONS}
        for group in ("all", "standalone", "non_standalone")
    }
    summary["refusal"] = refusal_summary(scored)
    if not retrieval_only:
        summary["answers"] = answer_summary(scored)
    summary["cost"] = cost_summary(scored)
    summary["condense"] = {
        "used_llm": sum(r.condense_used_llm for r in scored),
        "fallbacks": dict(Counter(r.condense_fallback for r in scored if r.condense_fallback)),
    }
    skipped = Counter(r.skipped for r in results if not r.scored)
    summary.update(n_rows=len(results), n_scored=len(scored), n_skipped=sum(skipped.values()), skipped=dict(skipped))
    return summary


def bucket_summary(members: Sequence[RowResult], names: Sequence[str]) -> dict[str, Any]:
    """Means of per-row retrieval scores, hits and the false-refusal rate of answerable rows."""
    out: dict[str, Any] = {"n": len(members)}
    for name in names:
        out[name] = _mean(r.scores[name] for r in members)
    out["hits"] = sum(1 for r in members if r.hit)
    out["false_refusal_rate"] = _mean(float(r.refused) for r in members)
    return out


def refusal_summary(scored: Sequence[RowResult]) -> dict[str, Any]:
    """Refusal on unanswerable rows beside false refusal on answerable ones, overall and by turn."""

    def part(rows: Sequence[RowResult]) -> dict[str, Any]:
        unans = [r for r in rows if not r.row.answerable]
        ans = [r for r in rows if r.row.answerable]
        return {
            "refusal_rate": _mean(float(r.refused) for r in unans), "n_unanswerable": len(unans),
            "refused_unanswerable": sum(r.refused for r in unans),
            "false_refusal_rate": _mean(float(r.refused) for r in ans), "n_answerable": len(ans),
            "refused_answerable": sum(r.refused for r in ans),
        }

    out = part(scored)
    out["by_turn"] = {b: part([r for r in scored if b in turn_buckets(r.row.turn)]) for b in TURN_BUCKETS}
    out["reasons"] = dict(Counter(r.refusal_reason for r in scored if r.refused))
    return out


def answer_summary(scored: Sequence[RowResult]) -> dict[str, Any]:
    """must_contain rate and stale rate, overall and by turn."""

    def part(rows: Sequence[RowResult]) -> dict[str, Any]:
        checked = [r for r in rows if r.must_contain_ok is not None]
        stale = [r for r in rows if r.stale is not None]
        return {
            "must_contain_rate": _mean(float(bool(r.must_contain_ok)) for r in checked), "n_must_contain": len(checked),
            "must_contain_hits": sum(bool(r.must_contain_ok) for r in checked),
            "stale_rate": _mean(float(bool(r.stale)) for r in stale), "n_stale": len(stale),
            "stale_count": sum(bool(r.stale) for r in stale),
        }

    out = part(scored)
    out["by_turn"] = {b: part([r for r in scored if b in turn_buckets(r.row.turn)]) for b in TURN_BUCKETS}
    return out


def cost_summary(scored: Sequence[RowResult]) -> dict[str, Any]:
    """LLM calls per turn and latency percentiles per pipeline step."""
    latency = {}
    for step in LATENCY_STEPS:
        values = [r.latency_ms[step] for r in scored if step in r.latency_ms]
        latency[step] = {"n": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95),
                         "mean": _mean(values)}
    return {
        "llm_calls_per_turn": _mean(float(r.llm_calls) for r in scored),
        "llm_calls_total": sum(r.llm_calls for r in scored),
        "llm_calls_by_turn": {b: _mean(float(r.llm_calls) for r in scored if b in turn_buckets(r.row.turn))
                              for b in TURN_BUCKETS},
        "latency_ms": latency,
    }
