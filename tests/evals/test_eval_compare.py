"""Paired comparison: W/T/L counts, the randomisation test against scipy, small-bucket caution."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from evals.compare import (
    MIN_N,
    compare_configs,
    compare_pair,
    paired_randomisation_test,
    wins_ties_losses,
)
from evals.dataset import parse_rows
from evals.runner import RowResult


def test_wins_ties_losses_from_the_config_side():
    assert wins_ties_losses([0, 1, 1, 0, 0.5], [1, 1, 0, 0, 0.75]) == (2, 2, 1)
    with pytest.raises(ValueError):
        wins_ties_losses([1], [1, 0])


def _scipy_exact(a, b):
    res = stats.permutation_test((np.asarray(b, float), np.asarray(a, float)),
                                 lambda x, y, axis: np.mean(x - y, axis=axis),
                                 permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    return res.pvalue


@pytest.mark.parametrize("a, b", [
    ([0, 0, 0, 0, 0, 0, 1, 1], [1, 1, 1, 1, 1, 0, 1, 1]),  # 5 wins, 1 loss
    ([0.2, 0.5, 0.1, 0.9, 0.4, 0.3], [0.6, 0.4, 0.3, 0.95, 0.8, 0.1]),
    ([1, 0, 1, 0], [0, 1, 1, 0]),
])
def test_exact_test_agrees_with_scipy(a, b):
    assert paired_randomisation_test(a, b) == pytest.approx(_scipy_exact(a, b))


def test_no_difference_gives_p_one():
    assert paired_randomisation_test([1, 0, 1], [1, 0, 1]) == 1.0
    assert paired_randomisation_test([1, 0, 1], [1, 1, 1]) == pytest.approx(_scipy_exact([1, 0, 1, 0], [1, 1, 1, 0]))
    assert paired_randomisation_test([1, 0, 1], [1, 1, 1]) == 1.0  # one row differs: either sign is as extreme


def test_large_samples_use_a_seeded_monte_carlo_that_is_reproducible():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.where(rng.random(60) < 0.3, 1.0, a)
    p1 = paired_randomisation_test(a, b)
    assert p1 == paired_randomisation_test(a, b)  # fixed seed
    assert 0 < p1 <= 1
    wins, _, losses = wins_ties_losses(a, b)
    # binary scores: the sign-flip test is the exact sign test on the discordant rows
    exact = stats.binomtest(wins, wins + losses, 0.5).pvalue
    assert p1 == pytest.approx(exact, abs=0.02)


def test_small_buckets_never_get_a_star():
    small = compare_pair("lastturn", "condense", "hit@5", "non_standalone/turn3+", [0, 0, 0, 0], [1, 1, 1, 1])
    assert small.n == 4 < MIN_N and small.p_value == pytest.approx(0.125) and not small.significant
    big = compare_pair("lastturn", "condense", "hit@5", "all/all", [0] * 8, [1] * 8)
    assert big.p_value == pytest.approx(2 / 256) and big.significant
    assert big.wins == 8 and big.delta == 1.0


def test_empty_bucket():
    empty = compare_pair("a", "b", "hit@5", "non_standalone/turn1", [], [])
    assert empty.n == 0 and empty.p_value is None and not empty.significant


def _row(i, turn, type_):
    return parse_rows([json.dumps({"conv_id": f"c{i}", "turn": turn, "history": [], "question": "q?",
                                   "type": type_, "gold_doc_ids": ["g"]})])[0]


def test_compare_configs_pairs_rows_scored_by_both():
    rows = [_row(i, 1 if i < 2 else 2, "standalone" if i < 2 else "non_standalone") for i in range(5)]
    base = [RowResult("lastturn", i, r, scores={"hit@5": 0.0}) for i, r in enumerate(rows)]
    other = [RowResult("reference", i, r, scores={"hit@5": 1.0}) for i, r in enumerate(rows[:4])]
    other.append(RowResult("reference", 4, rows[4], skipped="no reference rewrite"))
    comparisons = compare_configs({"lastturn": base, "reference": other}, "lastturn", ["hit@5"])
    by_bucket = {c.bucket: c for c in comparisons}
    assert by_bucket["all/all"].n == 4 and by_bucket["all/all"].wins == 4  # the skipped row is not paired
    assert by_bucket["non_standalone/turn2+"].n == 2
    assert by_bucket["non_standalone/turn1"].n == 0
    assert {c.config for c in comparisons} == {"reference"}
    with pytest.raises(ValueError, match="baseline"):
        compare_configs({"lastturn": base}, "condense", ["hit@5"])
