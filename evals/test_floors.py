"""Regression floors on the bundled eval set's frozen test split (data/eval/bank/test, 44 rows of 11
conversations), embedded defaults: e5-small embeddings, the packaged Qwen2.5-1.5B condenser. The dev
split (41 rows) is replayed beside it and printed in the terminal summary; floors assert on test.

Each floor sits just below the value measured on test with the product defaults (condense, the
`original` transform, the semantic router, inactive documents excluded), answers quoted without the
check (no answer LLM call): `python -m evals.replay data/eval/bank/test/conversations.jsonl --corpus
data/sample --configs lastturn,condense` with `TURNRAG_ANSWER_CHECK=off`. Every floor is also shown
to fail with its feature switched off: rewriting off (lastturn) for the rewrite and answer floors,
the refusal gate off for the refusal floor, the check off for the graded check's floor (the same
rows replayed with ``answer_check=graded``; condense replies cached, so it costs the check's calls).

Note: the whole bundled set chose thresholds and weights before it was split (2026-12-01), so the
test split's numbers are not independent of tuning; the held-out set (data/eval/heldout) is.
"""

import pytest

pytestmark = pytest.mark.e2e

FLOORS = {
    # measured 2026-12-01, test (dev beside): condense 0.807 (0.934), lastturn 0.667 (0.855). The floor
    # leaves the condenser about one row of 19 and fails with rewriting off (lastturn).
    "non_standalone/turn2+ mrr@5": 0.78,
    "turn1 hit@5": 0.95,  # measured 1.00 (8/8), dev 1.00 (8/8)
    # measured 2/7 = 0.29 (dev 0/5: the gate's threshold does not carry over; issue 16), 1/7 since the bar is
    # lower for English questions (2026-12-04); the floor keeps one of 7 and fails with the gate off (0/7)
    "unanswerable refusal (retrieval gate)": 0.14,
    "false refusal ceiling": 0.12,  # measured 3/37 = 0.08 (dev 3/36); 0/37 since 2026-12-04 (dev 3/36)
    # measured 2026-12-04 (night: count bonus, per-language gate, cross-language boost): condense 17/20 =
    # 0.85 (dev 15/24), lastturn 14/20 = 0.70 (dev 14/24), which reached the old floor of 0.70; earlier
    # 15/20 and 13/20. One row of slack, fails with rewriting off
    "turn2+ must_contain (quoted answers)": 0.80,
    # measured 2026-12-02 with answer_check=graded (threshold 0.28, chosen on the dev splits): 6/7 = 0.86
    # unanswerable refused, 5/37 = 0.14 answerable refused, 19/25 answers (off: 2/7, 3/37, 20/25). One row
    # of slack each; the refusal floor fails with the check off (the gate's 2/7)
    "unanswerable refusal (graded check)": 0.71,
    "false refusal ceiling (graded check)": 0.17,
}


@pytest.fixture(scope="module")
def test_split(results):
    return results["test"]


def test_rewrite_floor_on_non_standalone_follow_ups(test_split):
    value = test_split.summary["condense"]["non_standalone/turn2+"]["mrr@5"]
    assert value >= FLOORS["non_standalone/turn2+ mrr@5"], value


def test_rewrite_floor_catches_rewriting_switched_off(test_split):
    value = test_split.summary["lastturn"]["non_standalone/turn2+"]["mrr@5"]
    assert value < FLOORS["non_standalone/turn2+ mrr@5"], value


def test_first_turns_stay_solved(test_split):
    assert test_split.summary["condense"]["all/turn1"]["hit@5"] >= FLOORS["turn1 hit@5"]


def test_refusal_beside_false_refusal(test_split):
    refusal = test_split.summary["condense"]["refusal"]
    assert refusal["refusal_rate"] >= FLOORS["unanswerable refusal (retrieval gate)"], refusal
    assert refusal["false_refusal_rate"] <= FLOORS["false refusal ceiling"], refusal


def test_refusal_floor_catches_the_gate_switched_off(test_split):
    """The same rows with the gate's refusals taken back: what is left is below the floor."""
    unanswerable = [r for r in test_split.rows["condense"] if r.scored and r.row.type == "unanswerable"]
    without_gate = [r.refused and r.refusal_reason != "no_relevant_documents" for r in unanswerable]
    assert unanswerable and sum(without_gate) / len(unanswerable) < FLOORS["unanswerable refusal (retrieval gate)"]


def test_quoted_answers_hold_the_expected_value_on_later_turns(test_split):
    value = test_split.summary["condense"]["answers"]["by_turn"]["turn2+"]["must_contain_rate"]
    assert value >= FLOORS["turn2+ must_contain (quoted answers)"], value


def test_answer_floor_catches_rewriting_switched_off(test_split):
    value = test_split.summary["lastturn"]["answers"]["by_turn"]["turn2+"]["must_contain_rate"]
    assert value < FLOORS["turn2+ must_contain (quoted answers)"], value


def test_no_condense_call_on_first_turns(test_split):
    cost = test_split.summary["condense"]["cost"]
    assert cost["llm_calls_by_turn"]["turn1"] == 0


def test_graded_check_refuses_unanswerable_turns_beside_false_refusal(graded_results):
    refusal = graded_results.summary["condense"]["refusal"]
    assert refusal["refusal_rate"] >= FLOORS["unanswerable refusal (graded check)"], refusal
    assert refusal["false_refusal_rate"] <= FLOORS["false refusal ceiling (graded check)"], refusal


def test_graded_refusal_floor_catches_the_check_switched_off(test_split):
    """The same rows without the check (the default run): only the gate refuses, below the floor."""
    refusal = test_split.summary["condense"]["refusal"]
    assert refusal["refusal_rate"] < FLOORS["unanswerable refusal (graded check)"], refusal
