"""Evaluation rows: every bad line is named with file:line and field; buckets; the sanity count."""

from __future__ import annotations

import json

import pytest

from engines.errors import DocumentError, TurnragError
from evals.buckets import turn_bucket, turn_buckets, turn_position
from evals.dataset import (
    EvalDataError,
    all_bucket_keys,
    load_rows,
    parse_rows,
    row_bucket_keys,
    sanity,
)

GOOD = {"conv_id": "hr-01", "turn": 2, "history": [["user", "Nhân viên thử việc nghỉ mấy ngày?"], ["bot", "Không có."]],
        "question": "Còn thời vụ thì sao?", "type": "non_standalone", "gold_doc_ids": ["leave-seasonal"]}


def line(**changes) -> str:
    row = {**GOOD, **changes}
    return json.dumps({k: v for k, v in row.items() if v is not ...}, ensure_ascii=False)


def test_valid_row_is_loaded_with_bot_as_assistant_and_extras_carried(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(line(must_contain=["1 ngày"], rewrite="Thời vụ nghỉ mấy ngày?", domain="hr", lang="vi") + "\n\n",
                    encoding="utf-8")
    [row] = load_rows(path)
    assert row.history[1] == ("assistant", "Không có.")
    assert row.must_contain == ("1 ngày",) and row.rewrite == "Thời vụ nghỉ mấy ngày?"
    assert row.extra == {"domain": "hr", "lang": "vi"}
    assert row.where == f"{path}:1" and row.answerable and row.previous_user_turns() == ["Nhân viên thử việc nghỉ mấy ngày?"]


@pytest.mark.parametrize("changes, field", [
    ({"turn": 0}, "turn"),
    ({"turn": "2"}, "turn"),
    ({"turn": True}, "turn"),
    ({"conv_id": ""}, "conv_id"),
    ({"type": "follow_up"}, "type"),
    ({"question": "  "}, "question"),
    ({"history": [["system", "x"]]}, "history"),
    ({"history": [["user"]]}, "history"),
    ({"history": "user: hi"}, "history"),
    ({"gold_doc_ids": []}, "gold_doc_ids"),  # answerable without gold
    ({"gold_doc_ids": "leave-seasonal"}, "gold_doc_ids"),
    ({"type": "unanswerable"}, "gold_doc_ids"),  # unanswerable with gold
    ({"must_contain": "1 ngày"}, "must_contain"),
    ({"must_contain": ["1 ngày", " "]}, "must_contain"),
    ({"stale_value": 3}, "stale_value"),
    ({"filters": ["hr"]}, "filters"),
    ({"gold_doc_ids": ...}, "gold_doc_ids"),  # missing
])
def test_bad_field_is_named_with_file_and_line(tmp_path, changes, field):
    path = tmp_path / "rows.jsonl"
    path.write_text(line(turn=1, history=[]) + "\n" + line(**changes) + "\n", encoding="utf-8")
    with pytest.raises(EvalDataError) as info:
        load_rows(path)
    assert f"{path}:2: field '{field}'" in str(info.value)
    assert isinstance(info.value, DocumentError) and isinstance(info.value, TurnragError)


def test_an_empty_must_contain_means_nothing_to_check(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(line(turn=1, history=[], must_contain=[]) + "\n", encoding="utf-8")
    (row,) = load_rows(path)
    assert row.must_contain == ()
    from evals.metrics import must_contain_ok

    assert must_contain_ok("any answer", row.must_contain) is None  # not scored, not failed


def test_all_problems_are_listed_at_once():
    with pytest.raises(EvalDataError) as info:
        parse_rows(["{not json", line(type="x"), line(turn=2)], source="set.jsonl")
    message = str(info.value)
    assert "set.jsonl:1: invalid JSON" in message
    assert "set.jsonl:2: field 'type'" in message
    assert "set.jsonl:3" not in message  # the one good line


def test_duplicate_turn_names_the_first_line():
    with pytest.raises(EvalDataError, match=r"rows:2: field 'turn': .*already appears on line 1"):
        parse_rows([line(), line()], source="rows")


def test_non_object_and_empty_file(tmp_path):
    with pytest.raises(EvalDataError, match="x:1: expected a JSON object"):
        parse_rows(["[1, 2]"], source="x")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="no rows"):
        load_rows(empty)
    with pytest.raises(EvalDataError, match="does not exist"):
        load_rows(tmp_path / "missing.jsonl")


def test_unanswerable_row_with_empty_gold_and_null_rewrite_is_valid():
    [row] = parse_rows([line(type="unanswerable", gold_doc_ids=[], rewrite=None)])
    assert not row.answerable and row.rewrite is None


@pytest.mark.parametrize("turn, bucket, buckets, position", [
    (1, "turn1", ("all", "turn1"), "1"),
    (2, "turn2", ("all", "turn2", "turn2+"), "2"),
    (3, "turn3+", ("all", "turn3+", "turn2+"), "3"),
    (7, "turn3+", ("all", "turn3+", "turn2+"), "5+"),
])
def test_turn_buckets(turn, bucket, buckets, position):
    assert turn_bucket(turn) == bucket
    assert turn_buckets(turn) == buckets
    assert turn_position(turn) == position


def test_turn_zero_is_rejected():
    with pytest.raises(ValueError):
        turn_bucket(0)


def test_row_bucket_keys_cover_type_and_all():
    keys = row_bucket_keys("non_standalone", 3)
    assert set(keys) == {"all/all", "all/turn3+", "all/turn2+", "non_standalone/all",
                         "non_standalone/turn3+", "non_standalone/turn2+"}
    assert row_bucket_keys("unanswerable", 3) == []
    assert set(keys) <= set(all_bucket_keys()) and len(all_bucket_keys()) == 15


def test_sanity_counts_and_warns_on_a_demo_shaped_set():
    rows = parse_rows([line(conv_id=f"c{i}", turn=1, history=[], type="standalone") for i in range(10)])
    report = sanity(rows)
    assert report.counts["standalone"]["1"] == 10 and report.n_conversations == 10
    warnings = " ".join(report.warnings)
    assert "100% of rows are turn 1" in warnings and "100% of rows are standalone" in warnings
    assert "no unanswerable rows" in warnings


def test_sanity_is_quiet_on_a_balanced_set():
    rows = parse_rows([
        line(turn=1, history=[], type="standalone"),
        line(turn=2),
        line(turn=3, type="unanswerable", gold_doc_ids=[]),
    ])
    report = sanity(rows)
    assert report.warnings == []
    assert report.counts["non_standalone"]["2"] == 1 and report.counts["unanswerable"]["3"] == 1
