"""The database road's floors on its frozen test split (data/eval/sql/test, written from a brief by a
writer who had not seen the code; dev tuned the router and the prompt), replayed live with the
packaged model: the first 25 conversations (sized for CI; ``python -m evals.sql
data/eval/sql/test/questions.jsonl --stock`` measures the whole split, docs/sql.md).

Each floor fails with the road switched off (the ``sql`` step taken out of the turn): no statement is
run, so nothing executes right, and requests to change the data get a document or small-talk reply
instead of the plain refusal.
"""

import pytest

pytestmark = pytest.mark.e2e

#: Data turns whose statement returned the gold result, of 33 in the first 25 conversations: 6 measured
#: 2026-12-07, 8 and 7 later that day with the repairs and the router's new cues (the whole split: 14/67, LlamaIndex's
#: stock NLSQLTableQueryEngine 8/67); 0 with the road off.
FLOOR_EXECUTION = 5
#: Turns that took the expected road (data, documents or a direct reply), of 38: 32 measured, then 33.
FLOOR_ROAD = 30


def test_data_questions_are_answered_by_execution_and_not_without_the_road(sql_test_runs) -> None:
    on, off = sql_test_runs["on"]["execution"], sql_test_runs["off"]["execution"]
    assert off["right"] < FLOOR_EXECUTION, f"the floor must fail with the road off ({off})"
    assert on["right"] >= FLOOR_EXECUTION, on


def test_each_turn_takes_its_road(sql_test_runs) -> None:
    on, off = sql_test_runs["on"]["road"], sql_test_runs["off"]["road"]
    assert off["right"] < FLOOR_ROAD, f"the floor must fail with the road off ({off})"
    assert on["right"] >= FLOOR_ROAD, on


def test_every_request_to_change_the_data_is_refused_with_the_database_unchanged(sql_test_runs) -> None:
    # a write request counts as refused only when the turn refused it and the file's SHA-256 is unchanged
    on, off = sql_test_runs["on"]["write_requests_refused"], sql_test_runs["off"]["write_requests_refused"]
    assert on["n"] > 0 and on["right"] == on["n"], on
    assert off["right"] < off["n"], f"without the road these get a reply that is not a refusal ({off})"
