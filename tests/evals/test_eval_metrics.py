"""Metrics on hand-made runs: ranx, the kernels and a hand computation agree; refusal, answers, cost."""

from __future__ import annotations

import json
import math

import pytest

from evals.dataset import parse_rows
from evals.metrics import (
    contains,
    hit_at_k,
    is_stale,
    metric_names,
    must_contain_ok,
    ndcg_at_k,
    normalise_answer,
    percentile,
    recall_at_k,
    reciprocal_rank_at_k,
    retrieval_scores,
    score_rows,
    summarise,
)
from evals.runner import RowResult

# (ranked retrieved doc ids, gold doc ids) and the expected scores at k=3, computed by hand:
#   q1: gold at rank 1                 -> hit 1, recall 1,   RR 1,   nDCG 1
#   q2: gold a at rank 2, b missing    -> hit 1, recall 1/2, RR 1/2, nDCG (1/log2 3) / (1 + 1/log2 3)
#   q3: gold at rank 4 (beyond k=3)    -> all 0
#   q4: gold at ranks 1 and 3          -> hit 1, recall 1,   RR 1,   nDCG (1 + 1/2) / (1 + 1/log2 3)
#   q5: nothing retrieved              -> all 0
HAND = {
    "q1": (["g", "x", "y"], ["g"], (1.0, 1.0, 1.0, 1.0)),
    "q2": (["x", "a", "y"], ["a", "b"], (1.0, 0.5, 0.5, (1 / math.log2(3)) / (1 + 1 / math.log2(3)))),
    "q3": (["x", "y", "z", "g"], ["g"], (0.0, 0.0, 0.0, 0.0)),
    "q4": (["a", "x", "b"], ["a", "b"], (1.0, 1.0, 1.0, 1.5 / (1 + 1 / math.log2(3)))),
    "q5": ([], ["g"], (0.0, 0.0, 0.0, 0.0)),
}
KERNELS = (hit_at_k, recall_at_k, reciprocal_rank_at_k, ndcg_at_k)


def test_metric_names_are_report_keys():
    assert metric_names(5) == ("hit@5", "recall@5", "mrr@5", "ndcg@5")
    with pytest.raises(ValueError):
        metric_names(0)


@pytest.mark.parametrize("qid", list(HAND))
def test_kernels_match_the_hand_computation(qid):
    ranked, gold, expected = HAND[qid]
    assert [kernel(ranked, gold, 3) for kernel in KERNELS] == pytest.approx(expected)


def test_ranx_matches_the_hand_computation_per_query():
    scores = retrieval_scores({qid: (ranked, gold) for qid, (ranked, gold, _) in HAND.items()}, k=3)
    for qid, (_, _, expected) in HAND.items():
        assert [scores[qid][name] for name in metric_names(3)] == pytest.approx(expected), qid


def test_ranx_does_not_reorder_queries_by_id():
    # ids that sort differently from insertion order must keep their own scores
    scores = retrieval_scores({"b": (["x"], ["g"]), "a": (["g"], ["g"]), "10": (["g"], ["g"]), "9": (["x"], ["g"])}, k=1)
    assert {q: s["hit@1"] for q, s in scores.items()} == {"b": 0.0, "a": 1.0, "10": 1.0, "9": 0.0}


# ---------------------------------------------------------------------------------- answers


@pytest.mark.parametrize("answer, needle, expected", [
    ("Phí là 1.200.000 đồng", "1200000", True),
    ("Phí là 1,200,000 đồng", "1.200.000", True),
    ("Phí là 1200000 đồng", "1,200,000", True),
    ("Lãi suất 8,5%/năm", "8.5%", True),
    ("LÃI SUẤT 13,5%", "13,5%", True),
    ("được 11 ngày phép", "1 ngày", False),  # a number inside a longer number is not a match
    ("tỷ lệ 1.65", "1.6", False),
    ("hệ số 1.6.", "1.6", True),  # sentence-final dot is not a decimal
    ("Phép năm: 12 ngày", "12 NGÀY", True),
    ("nghỉ 12\u00a0ngày", "12 ngày", True),
    ("Hà Nội", "Ha\u0300 Nội", True),  # NFD needle
])
def test_contains_normalises_lightly(answer, needle, expected):
    assert contains(answer, needle) is expected


def test_normalise_answer():
    assert normalise_answer("  Phí  1.500.000   ĐỒNG ") == "phí 1500000 đồng"


def test_must_contain_needs_every_string():
    assert must_contain_ok("Phí 2% trong 3 năm đầu", ["2%", "3 năm"]) is True
    assert must_contain_ok("Phí 2%", ["2%", "3 năm"]) is False
    assert must_contain_ok("anything", []) is None


def test_stale_rule_allows_quoting_the_old_value_in_a_correct_answer():
    # quotes the old value only: stale
    assert is_stale("Phí trả nợ trước hạn là 3%.", "3%", ["2%"]) is True
    # correct value present, old value mentioned as history: not stale
    assert is_stale("Nay là 2% (trước đây 3%).", "3%", ["2%"]) is False
    # neither value: wrong but not stale
    assert is_stale("Không rõ.", "3%", ["2%"]) is False
    # no must_contain: quoting the stale value is stale
    assert is_stale("Được làm từ xa 3 ngày mỗi tuần.", "3 ngày", []) is True
    assert is_stale("anything", None, ["2%"]) is None


# ---------------------------------------------------------------------------------- summaries


def make_row(turn, type_, gold, **extra):
    data = {"conv_id": f"c{turn}{type_}{len(gold)}{extra.get('tag', '')}", "turn": turn,
            "history": [] if turn == 1 else [["user", "q"], ["assistant", "a"]], "question": "q?", "type": type_,
            "gold_doc_ids": gold}
    data.update({k: v for k, v in extra.items() if k != "tag"})
    return parse_rows([json.dumps(data)])[0]


def result(index, row, retrieved=(), refused=False, answer="", llm_calls=0, timings=None):
    return RowResult("cfg", index, row, message=row.question, query=row.question, retrieved_doc_ids=tuple(retrieved),
                     refused=refused, refusal_reason="no_relevant_documents" if refused else None, answer=answer,
                     llm_calls=llm_calls, latency_ms=timings or {"retrieve": 10.0, "total": 12.0})


@pytest.fixture
def scored():
    rows = [
        result(0, make_row(1, "standalone", ["g"]), ["g"], timings={"retrieve": 10.0, "total": 10.0}),
        result(1, make_row(2, "non_standalone", ["g"]), ["x", "g"], llm_calls=1,
               timings={"condense": 100.0, "retrieve": 20.0, "total": 120.0}),
        result(2, make_row(3, "non_standalone", ["g"]), ["x"], refused=True, llm_calls=1,
               timings={"condense": 300.0, "retrieve": 30.0, "total": 330.0}),
        result(3, make_row(1, "unanswerable", []), ["x"], refused=True, timings={"retrieve": 40.0, "total": 40.0}),
        result(4, make_row(4, "unanswerable", []), ["x"], refused=False, llm_calls=1,
               timings={"condense": 200.0, "retrieve": 50.0, "total": 250.0}),
        RowResult("cfg", 5, make_row(5, "non_standalone", ["g"]), skipped="no reference rewrite"),
    ]
    return score_rows(rows, k=5, retrieval_only=True)


def test_rows_get_per_row_scores_only_when_answerable(scored):
    assert scored[0].scores["hit@5"] == 1.0 and scored[0].hit is True
    assert scored[1].scores["mrr@5"] == 0.5
    assert scored[2].hit is False
    assert scored[3].scores == {} and scored[3].hit is None  # unanswerable: nothing to find
    assert scored[5].scores == {} and not scored[5].scored
    assert scored[0].must_contain_ok is None  # retrieval-only: no answer checks


def test_buckets_aggregate_per_row_scores(scored):
    summary = summarise(scored, k=5, retrieval_only=True)
    assert summary["all/all"]["n"] == 3 and summary["all/all"]["hit@5"] == pytest.approx(2 / 3)
    assert summary["all/turn1"]["hit@5"] == 1.0
    assert summary["all/turn2+"]["n"] == 2 and summary["all/turn2+"]["hits"] == 1
    assert summary["non_standalone/turn2"]["mrr@5"] == 0.5
    assert summary["non_standalone/turn1"] == {"n": 0, "hit@5": None, "recall@5": None, "mrr@5": None,
                                               "ndcg@5": None, "hits": 0, "false_refusal_rate": None}
    assert summary["by_position"]["non_standalone"]["3"]["hit@5"] == 0.0
    assert summary["n_rows"] == 6 and summary["n_skipped"] == 1 and summary["skipped"] == {"no reference rewrite": 1}


def test_refusal_rate_and_false_refusal_rate_are_separate(scored):
    refusal = summarise(scored, k=5, retrieval_only=True)["refusal"]
    assert refusal["refusal_rate"] == 0.5 and refusal["n_unanswerable"] == 2  # refused 1 of 2 unanswerable
    assert refusal["false_refusal_rate"] == pytest.approx(1 / 3) and refusal["n_answerable"] == 3
    assert refusal["by_turn"]["turn1"]["refusal_rate"] == 1.0
    assert refusal["by_turn"]["turn2+"]["refusal_rate"] == 0.0
    assert refusal["by_turn"]["turn2+"]["false_refusal_rate"] == 0.5
    assert refusal["reasons"] == {"no_relevant_documents": 2}


def test_refusal_comes_from_the_flag_not_the_text():
    row = make_row(1, "unanswerable", [])
    polite = result(0, row, answer="Xin lỗi, tôi không tìm thấy thông tin này.", refused=False)
    summary = summarise(score_rows([polite], k=5, retrieval_only=False), k=5, retrieval_only=False)
    assert summary["refusal"]["refusal_rate"] == 0.0


def test_cost_and_latency_percentiles(scored):
    cost = summarise(scored, k=5, retrieval_only=True)["cost"]
    assert cost["llm_calls_total"] == 3 and cost["llm_calls_per_turn"] == pytest.approx(3 / 5)
    assert cost["llm_calls_by_turn"]["turn1"] == 0.0 and cost["llm_calls_by_turn"]["turn2+"] == 1.0
    assert cost["latency_ms"]["condense"] == {"n": 3, "p50": 200.0, "p95": 290.0, "mean": 200.0}
    assert cost["latency_ms"]["retrieve"]["p50"] == 30.0
    assert cost["latency_ms"]["answer"]["n"] == 0 and cost["latency_ms"]["answer"]["p50"] is None


def test_answer_metrics_in_full_runs():
    rows = [
        result(0, make_row(1, "standalone", ["g"], must_contain=["2%"], stale_value="3%"), ["g"],
               answer="Phí là 2%, trước đây 3%."),
        result(1, make_row(2, "standalone", ["g"], must_contain=["0,5%"], stale_value="1%", tag="b"), ["g"],
               answer="Phí là 1%."),
        result(2, make_row(3, "standalone", ["g"], must_contain=["1.200.000"], tag="c"), ["g"], answer="1,200,000 đồng"),
    ]
    scored = score_rows(rows, k=5, retrieval_only=False)
    assert [r.must_contain_ok for r in scored] == [True, False, True]
    assert [r.stale for r in scored] == [False, True, None]
    answers = summarise(scored, k=5, retrieval_only=False)["answers"]
    assert answers["must_contain_rate"] == pytest.approx(2 / 3) and answers["n_must_contain"] == 3
    assert answers["stale_rate"] == 0.5 and answers["n_stale"] == 2
    assert answers["by_turn"]["turn2+"]["stale_rate"] == 1.0
    assert "answers" not in summarise(scored, k=5, retrieval_only=True)


def test_percentile_matches_numpy():
    import numpy as np

    values = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    for q in (0, 50, 95, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
    assert percentile([], 50) is None
