"""The detector evaluation and the refusal calibration: pure parts, on hand-made data."""

import json

import numpy as np

from evals.calibrate import recommend, sweep
from evals.conflicts import PairRow, load_pairs, predict, ramdocs_pairs, scores


def test_inline_pairs_scored_per_kind(tmp_path):
    rows = [
        {"pair_id": "1", "a": {"text": "The API allows 100 requests per minute.", "date": "2022-01-01"},
         "b": {"text": "The API allows 500 requests per minute.", "date": "2023-01-01"}, "conflict": True,
         "kind": "numeric", "newer": "b"},
        {"pair_id": "2", "a": {"text": "Phí thường niên là 1.500.000 đồng."}, "b": {"text": "Phí thường niên là 1,5 triệu đồng."},
         "conflict": False, "kind": "agreement"},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    pairs = load_pairs(path, None)
    preds = predict(pairs, np.array([0.95, 0.95]), gate=0.68)
    assert [p["detected"] for p in preds] == [True, False]
    assert preds[0]["kept"] == "b"
    table = scores(preds)
    assert table["all"]["precision"] == 1.0 and table["all"]["recall"] == 1.0 and table["all"]["newer_kept"] == 1.0
    assert table["agreement"]["flag_rate"] == 0.0
    assert [p["detected"] for p in predict(pairs, np.array([0.5, 0.5]), gate=0.68)] == [False, False]  # the gate


def test_ramdocs_pair_kinds(tmp_path):
    item = {"question": "q", "documents": [
        {"text": "A has 10 people.", "type": "correct", "answer": "10"},
        {"text": "A has 12 people.", "type": "misinfo", "answer": "12"},
        {"text": "B has 10 people.", "type": "correct", "answer": "10"},
        {"text": "C has 7 people.", "type": "correct", "answer": "7"},
        {"text": "noise", "type": "noise", "answer": ""}]}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(item), encoding="utf-8")
    kinds = sorted(p.kind for p in ramdocs_pairs(path, None))
    assert kinds == ["agreement", "conflict", "conflict", "conflict", "different_entity", "different_entity"]


def test_calibration_sweep_and_recommendation():
    points = sweep([0.9, 0.88, 0.86, 0.84], [0.8, 0.83, 0.87], [0.82, 0.85, 0.9])
    assert [(p.refusal_rate, p.false_refusal_rate) for p in points] == [(1 / 3, 0.0), (2 / 3, 0.25), (1.0, 0.75)]
    assert recommend(points, max_false_refusal=0.05).threshold == 0.82
    assert recommend(points, max_false_refusal=0.30).threshold == 0.85


def test_llm_check_only_asks_same_topic_pairs_the_heuristics_missed():
    from engines.models.fakes import ScriptedLLM
    from evals.conflicts import with_llm_check

    rows = [PairRow(f"p{i}", "x", "y", None, None, True, kind) for i, kind in enumerate(["conflict", "conflict", "agreement"])]
    preds = [
        {"pair_id": "p0", "kind": "conflict", "gold": True, "detected": True, "similarity": 0.95},   # already flagged
        {"pair_id": "p1", "kind": "conflict", "gold": True, "detected": False, "similarity": 0.93},  # asked: NO
        {"pair_id": "p2", "kind": "agreement", "gold": False, "detected": False, "similarity": 0.50},  # off topic
    ]
    llm = ScriptedLLM(["NO"])
    checked, cost = with_llm_check(rows, preds, llm, gate=0.88)
    assert llm.calls == 1 and cost["llm_calls"] == 1
    assert [p["detected"] for p in checked] == [True, True, False]
    assert checked[1]["llm_said_conflict"] and not checked[2]["llm_asked"]
