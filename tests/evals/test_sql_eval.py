"""The database road's evaluation: results compared by execution, refusals and roads judged."""

import json
import sqlite3
from types import SimpleNamespace

import pytest

from engines.errors import DocumentError
from evals.sql import (
    SqlEvalRow,
    TurnOutcome,
    build_database,
    file_digest,
    judge,
    load_sql_rows,
    run_read_only,
    same_result,
    summarize,
)


@pytest.mark.parametrize(("gold", "got", "order", "expected"), [
    ([(1, "Huế")], [("Huế", 1)], False, True),  # columns in another order
    ([("Huế", 10)], [("Huế", 10, "extra")], False, True),  # an extra helpful column
    ([("a", 1), ("b", 2)], [("b", 2), ("a", 1)], False, True),  # rows as a set
    ([("a", 1), ("b", 2)], [("b", 2), ("a", 1)], True, False),  # ... unless the order was asked for
    ([("a", 1), ("b", 2)], [("a", 2), ("b", 1)], False, False),  # every column right, rows mixed up
    ([(0.25,)], [(25.0,)], False, True),  # a ratio as a percentage
    ([(1234.567,)], [(1234.57,)], False, True),  # rounding
    ([(3,)], [(4,)], False, False),
    ([(1,), (2,)], [(1,)], False, False),  # a row missing
    ([("a", None)], [("a", None)], False, True),
])
def test_a_result_matches_the_gold_by_values_not_by_names_or_column_order(gold, got, order, expected):
    assert same_result(gold, got, order_matters=order) is expected


def _row(**kw):
    base = dict(conv_id="c1", turn=1, lang="vi", question="?", kind="standalone", category="single_table",
                road="sql", gold_sql="SELECT COUNT(*) FROM t", order_matters=False, answerable=True)
    return SqlEvalRow(**{**base, **kw})


@pytest.fixture
def database(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "schema.sql").write_text("CREATE TABLE t (id INTEGER PRIMARY KEY, city TEXT);\n"
                                       "CREATE TABLE u (id INTEGER, t_id INTEGER REFERENCES t(id));\n")
    (folder / "data.sql").write_text("INSERT INTO t VALUES (1, 'Huế'), (2, 'Huế'), (3, 'Hà Nội');\n")
    return build_database(folder, tmp_path / "w.sqlite3")


def _record(route="sql", refused=False, statement="", answer=""):
    return SimpleNamespace(route=route, refused=refused, sql={"statement": statement} if statement else {},
                           answer=answer, query="")


def test_a_data_turn_is_right_when_the_statement_it_ran_returns_the_gold_result(database):
    row = _row(gold_sql="SELECT city, COUNT(*) FROM t GROUP BY city")
    gold = run_read_only(database, row.gold_sql)
    right = "SELECT COUNT(*) AS n, city FROM t GROUP BY city ORDER BY n"
    assert judge(row, _record(statement=right), database, gold, True) == (True, right)
    assert judge(row, _record(statement="SELECT city, 1 FROM t GROUP BY city"), database, gold, True)[0] is False
    assert judge(row, _record(statement="SELECT nonsense FROM t"), database, gold, True)[0] is False  # fails to run
    assert judge(row, _record(route="docs", statement=right), database, gold, True)[0] is False  # wrong road
    assert judge(row, _record(refused=True, statement=right), database, gold, True)[0] is False


def test_refusals_and_the_other_roads_are_judged_by_what_the_user_would_see(database):
    write = _row(category="write_request", gold_sql=None, answerable=False)
    assert judge(write, _record(refused=True), database, None, True)[0] is True
    assert judge(write, _record(refused=True), database, None, False)[0] is False  # the file changed
    assert judge(write, _record(refused=False), database, None, True)[0] is False
    unanswerable = _row(category="unanswerable", gold_sql=None, answerable=False)
    assert judge(unanswerable, _record(route="docs", refused=True), database, None, True)[0] is True
    docs = _row(category="docs", road="docs", gold_sql=None, must_contain=("30",))
    assert judge(docs, _record(route="docs", answer="Đổi trả trong 30 ngày."), database, None, True)[0] is True
    assert judge(docs, _record(route="docs", answer="Đổi trả trong 7 ngày."), database, None, True)[0] is False
    chat = _row(category="small_talk", road="direct", gold_sql=None)
    assert judge(chat, _record(route="out_of_scope"), database, None, True)[0] is True


def test_the_read_only_run_cannot_change_the_database(database):
    before = file_digest(database)
    assert run_read_only(database, "DELETE FROM t") is None
    assert run_read_only(database, "SELECT COUNT(*) FROM t") == [(3,)]
    assert file_digest(database) == before
    assert sqlite3.connect(database).execute("SELECT COUNT(*) FROM t").fetchone() == (3,)


def test_the_shape_comes_from_the_gold_statement_s_tables():
    assert _row(gold_sql="SELECT COUNT(*) FROM t WHERE city = 'Huế'").shape == "single-table"
    assert _row(gold_sql="SELECT COUNT(*) FROM t JOIN u ON u.t_id = t.id").shape == "join"
    assert _row(gold_sql=None, category="docs").shape == ""


def test_a_bad_questions_file_names_each_bad_line(tmp_path):
    path = tmp_path / "q.jsonl"
    good = {"conv_id": "c", "turn": 1, "question": "?", "category": "single_table", "road": "sql",
            "answerable": True, "gold_sql": "SELECT 1"}
    path.write_text(json.dumps(good) + "\n{broken\n" + json.dumps({"conv_id": "c"}) + "\n", encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_sql_rows(path)
    assert ":2" in str(caught.value) and ":3" in str(caught.value)


def _outcome(conv, turn, category, correct, road="sql", expected="sql", shape="single-table", kind="standalone",
             refused=False, seconds=1.0):
    return TurnOutcome(conv, turn, category, kind, "vi", shape, expected, road, refused, correct=correct,
                       seconds=seconds)


def test_the_summary_reports_by_shape_turn_and_road_with_refusals_apart():
    outcomes = [
        _outcome("a", 1, "single_table", True), _outcome("a", 2, "join2", False, shape="join", kind="follow_up"),
        _outcome("b", 1, "docs", True, road="docs", expected="docs"), _outcome("b", 2, "group_by", True),
        _outcome("c", 1, "write_request", True, refused=True), _outcome("d", 1, "unanswerable", False),
    ]
    s = summarize(outcomes)
    assert s["execution"] == {"n": 3, "right": 2, "share": 0.667}
    assert s["by"]["shape join"]["right"] == 0 and s["by"]["shape single-table"]["right"] == 2
    assert s["by"]["turn 2+"]["n"] == 2 and s["by"]["follow_up"]["n"] == 1
    assert s["road"]["n"] == 4 and s["road_mixed"]["n"] == 2  # conversation b mixes docs and data
    assert s["write_requests_refused"]["right"] == 1 and s["unanswerable_refused"]["right"] == 0
    assert s["answerable_refused"]["right"] == 0
