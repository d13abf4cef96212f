"""Regression floors on the bundled eval set (data/eval/sample_conversations.jsonl, 85 rows),
embedded defaults: e5-small embeddings, the packaged Qwen2.5-1.5B condenser.

Each floor sits just below the value measured with the product defaults (condense, the `original`
transform, the semantic router, inactive documents excluded):
`python -m evals.replay data/eval/sample_conversations.jsonl --corpus data/sample
 --configs lastturn,condense` with `TURNRAG_ANSWER_CHECK=false` (quoted answers, no answer LLM
call; numbers in the README).
hit@5 is near its ceiling on a 35-document corpus (lastturn 0.95 on non_standalone turn 2+), so
the rewrite floor is on MRR@5: the right document must come *first*, which is what a follow-up
without its subject gets wrong. `test_rewrite_floor_catches_rewriting_switched_off` shows the
floor fails for the same engine with rewriting off (lastturn).
"""

import pytest

pytestmark = pytest.mark.e2e

FLOORS = {
    # measured 2026-11-30: condense 0.860, lastturn 0.794 (no LLM, deterministic). The floor sits one row
    # (1/38) above lastturn so it fails with rewriting off, and leaves the LLM condenser about 1.5 rows of
    # slack (greedy decoding with llama.cpp's prompt cache is not bit-reproducible). Before the `original`
    # transform and the inactive-document filter: condense 0.811, lastturn 0.774, floor 0.785.
    "non_standalone/turn2+ mrr@5": 0.82,
    "turn1 hit@5": 0.95,  # measured 1.00
    "unanswerable refusal (retrieval gate)": 0.08,  # measured 0.17 (2/12); answers add the model's NOT_FOUND
    "false refusal ceiling": 0.12,  # measured 0.08 (6/73)
    # measured 2026-11-30 (quoted answers, no yes/no check): condense 29/44 = 0.66, lastturn 26/44 = 0.59.
    # One row of slack for the condenser; fails with rewriting off (lastturn).
    "turn2+ must_contain (quoted answers)": 0.62,
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


def test_quoted_answers_hold_the_expected_value_on_later_turns(retrieval_result):
    value = retrieval_result.summary["condense"]["answers"]["by_turn"]["turn2+"]["must_contain_rate"]
    assert value >= FLOORS["turn2+ must_contain (quoted answers)"], value


def test_answer_floor_catches_rewriting_switched_off(retrieval_result):
    value = retrieval_result.summary["lastturn"]["answers"]["by_turn"]["turn2+"]["must_contain_rate"]
    assert value < FLOORS["turn2+ must_contain (quoted answers)"], value


def test_no_condense_call_on_first_turns(retrieval_result):
    cost = retrieval_result.summary["condense"]["cost"]
    assert cost["llm_calls_by_turn"]["turn1"] == 0

