"""Paired comparison of configurations, per bucket: wins/ties/losses and a randomisation test.

Both configurations answered the same rows, so the question is not "whose mean is higher"
but "on how many rows did B beat A, and could the difference be chance". The test is a
two-sided paired sign-flip randomisation test on per-row differences (Fisher's randomisation
test as in ranx ``compare``), computed by ``scipy.stats.permutation_test``: exact when few rows
differ, otherwise Monte Carlo with a fixed seed so reruns give the same p-value. Buckets under
:data:`MIN_N` rows never get a star.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from evals.dataset import all_bucket_keys, row_bucket_keys
from evals.runner import RowResult

TEST_NAME = "paired sign-flip randomisation test, two-sided"
ALPHA = 0.05
MIN_N = 5  # below this a p-value is printed but no significance is claimed
EXACT_MAX_NONZERO = 16  # 2**16 sign patterns: exact and still instant
N_RESAMPLES = 10_000
SEED = 42


@dataclass(frozen=True)
class Comparison:
    """Configuration ``config`` against ``baseline`` on one metric and bucket."""

    baseline: str
    config: str
    metric: str
    bucket: str
    n: int
    wins: int
    ties: int
    losses: int
    baseline_mean: float | None
    config_mean: float | None
    delta: float | None
    p_value: float | None
    significant: bool
    test: str = TEST_NAME

    def to_dict(self) -> dict:
        return asdict(self)


def wins_ties_losses(baseline: Sequence[float], other: Sequence[float]) -> tuple[int, int, int]:
    """Rows where ``other`` scores higher, the same, lower than ``baseline``."""
    if len(baseline) != len(other):
        raise ValueError(f"paired scores need equal lengths, got {len(baseline)} and {len(other)}")
    wins = sum(1 for a, b in zip(baseline, other) if b > a)
    losses = sum(1 for a, b in zip(baseline, other) if b < a)
    return wins, len(baseline) - wins - losses, losses


def paired_randomisation_test(baseline: Sequence[float], other: Sequence[float], *,
                              n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided p-value that the mean paired difference is as large as observed by chance.

    Under the null each row's two scores are exchangeable, i.e. each difference's sign is a
    coin flip. Rows with equal scores cannot change the statistic and are dropped.
    """
    diffs = np.asarray(other, dtype=float) - np.asarray(baseline, dtype=float)
    diffs = diffs[diffs != 0]
    if diffs.size <= 1:  # none or one row differs: both signs are as extreme as the observed one
        return 1.0
    exact = diffs.size <= EXACT_MAX_NONZERO
    result = stats.permutation_test(
        (diffs,), lambda d, axis: np.mean(d, axis=axis), permutation_type="samples",  # one sample: sign flips
        n_resamples=np.inf if exact else n_resamples, alternative="two-sided", random_state=seed)
    return float(min(1.0, result.pvalue))


def compare_pair(baseline: str, config: str, metric: str, bucket: str,
                 a: Sequence[float], b: Sequence[float], *, seed: int = SEED) -> Comparison:
    """One comparison from paired per-row scores (same rows, same order)."""
    n = len(a)
    wins, ties, losses = wins_ties_losses(a, b)
    if n == 0:
        return Comparison(baseline, config, metric, bucket, 0, 0, 0, 0, None, None, None, None, False)
    mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
    p = paired_randomisation_test(a, b, seed=seed)
    return Comparison(baseline, config, metric, bucket, n, wins, ties, losses, mean_a, mean_b,
                      mean_b - mean_a, p, n >= MIN_N and p < ALPHA)


def compare_configs(rows: Mapping[str, Sequence[RowResult]], baseline: str, metrics: Sequence[str], *,
                    buckets: Sequence[str] | None = None, seed: int = SEED) -> list[Comparison]:
    """Every other configuration against ``baseline``, per metric and bucket.

    Only rows scored under both configurations are paired (a configuration may skip rows,
    e.g. ``reference`` without a rewrite).
    """
    if baseline not in rows:
        raise ValueError(f"baseline {baseline!r} is not among the configurations {list(rows)}")
    buckets = list(buckets or all_bucket_keys())
    base = {r.index: r for r in rows[baseline] if r.scored and r.scores}
    comparisons = []
    for name, results in rows.items():
        if name == baseline:
            continue
        other = {r.index: r for r in results if r.scored and r.scores}
        shared = [i for i in base if i in other]
        for bucket in buckets:
            members = [i for i in shared if bucket in row_bucket_keys(base[i].row.type, base[i].row.turn)]
            for metric in metrics:
                a = [base[i].scores[metric] for i in members]
                b = [other[i].scores[metric] for i in members]
                comparisons.append(compare_pair(baseline, name, metric, bucket, a, b, seed=seed))
    return comparisons
