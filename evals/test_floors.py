"""Regression floors on the bundled eval set (data/eval/sample_conversations.jsonl, 85 rows),
embedded defaults: e5-small embeddings, the packaged Qwen2.5-1.5B condenser.

Each floor sits just below the value measured with
`python -m evals.replay data/eval/sample_conversations.jsonl --corpus data/sample
 --configs lastturn,history,condense,reference --retrieval-only` (numbers in the README).
hit@5 is near its ceiling on a 35-document corpus (lastturn 0.95 on non_standalone turn 2+), so
the rewrite floor is on MRR@5: the right document must come *first*, which is what a follow-up
without its subject gets wrong. `test_rewrite_floor_catches_rewriting_switched_off` shows the
floor fails for the same engine with rewriting off (lastturn).
"""

import pytest

pytestmark = pytest.mark.e2e

FLOORS = {
    "non_standalone/turn2+ mrr@5": 0.79,  # measured: condense 0.81, lastturn 0.77
    "turn1 hit@5": 0.95,  # measured 1.00
    "unanswerable refusal (retrieval gate)": 0.15,  # measured 0.17; answers add the model's NOT_FOUND
    "false refusal ceiling": 0.10,  # measured 0.08
}


def test_rewrite_floor_on_non_standalone_follow_ups(retrieval_result):
    value = retrieval_result.summary["condense"]["non_standalone/turn2+"]["mrr@5"]
    assert value >= FLOORS["non_standalone/turn2+ mrr@5"], value


def test_rewrite_floor_catches_rewriting_switched_off(retrieval_result):
    value = retrieval_result.summary["lastturn"]["non_standalone/turn2+"]["mrr@5"]
    assert value < FLOORS["non_standalone/turn2+ mrr@5"], value


def test_first_turns_stay_solved(retrieval_result):
    assert retrieval_result.summary["condense"]["all/turn1"]["hit@5"] >= FLOORS["turn1 hit@5"]


def test_refusal_beside_false_refusal(retrieval_result):
    refusal = retrieval_result.summary["condense"]["refusal"]
    assert refusal["refusal_rate"] >= FLOORS["unanswerable refusal (retrieval gate)"], refusal
    assert refusal["false_refusal_rate"] <= FLOORS["false refusal ceiling"], refusal


def test_no_condense_call_on_first_turns(retrieval_result):
    cost = retrieval_result.summary["condense"]["cost"]
    assert cost["llm_calls_by_turn"]["turn1"] == 0


# Full answers by the local LLM on the 8 rows whose right answer is in the newer of two documents.
# Measured: with the conflict postprocessor must_contain 4/6, stale 1/8; switched off 2/6 and 2/8.
STALE_CEILING = 0.15
MUST_CONTAIN_FLOOR = 0.5


def test_conflict_check_keeps_answers_current(stale_results):
    with_conflicts, _ = stale_results
    answers = with_conflicts.summary["reference"]["answers"]
    assert answers["stale_rate"] <= STALE_CEILING, answers
    assert answers["must_contain_rate"] >= MUST_CONTAIN_FLOOR, answers


def test_stale_floor_catches_the_conflict_check_switched_off(stale_results):
    _, without = stale_results
    answers = without.summary["reference"]["answers"]
    assert answers["stale_rate"] > STALE_CEILING or answers["must_contain_rate"] < MUST_CONTAIN_FLOOR, answers
