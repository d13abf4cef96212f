"""Claims in two languages: a Vietnamese notice and its English counterpart share no words, so the
word-overlap alignment of ``claims`` never pairs their values. Here a value is paired with the value
of the other passage whose *claim sentence* is nearest by a multilingual embedding (and back), and
the pair conflicts when the two disagree. Pure: the cosine matrix comes from the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engines.conflicts import DEFAULT_CROSS_LANGUAGE_GATE_DROP, DEFAULT_MIN_CROSS_CLAIM_MARGIN
from engines.conflicts.claims import PERIOD_DAYS, Facts, Passage, same_rate, same_value
from engines.conflicts.numbers import Quantity
from engines.conflicts.subjects import subjects_differ

#: Cosine between the claim sentences of every value of one passage and every value of the other.
ClaimSimilarity = Callable[[Sequence[str], Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class CrossLanguage:
    """How passages in two languages are compared: the embedder's claim cosine and its thresholds
    (``min_similarity`` is on that embedder's scale: ``Calibration.cross_claim_similarity``)."""

    similarity: ClaimSimilarity
    min_similarity: float
    min_margin: float = DEFAULT_MIN_CROSS_CLAIM_MARGIN
    gate_drop: float = DEFAULT_CROSS_LANGUAGE_GATE_DROP


#: Periods a rate is stated per ("24 per year" and "2 per month" agree), not per use or per person.
_RATE_PERIODS = frozenset(PERIOD_DAYS) - {"second", "minute", "hour"}
#: "costs 250,000 VND" and "300.000 đồng/lượt" both state a price per use.
_PER_USE = frozenset({None, "occasion"})
#: A count with no unit word ("3 per month") and one with a counting word ("24 lượt/năm").
_COUNTS = frozenset({"", "times"})


def comparable(qa: Quantity, qb: Quantity) -> bool:
    """The two values measure the same kind of thing, across the languages' ways of saying it."""
    if qa.unit != qb.unit and not (qa.unit in _COUNTS and qb.unit in _COUNTS):
        return False
    if not (qa.unit and qb.unit) and not (qa.per in _RATE_PERIODS and qb.per in _RATE_PERIODS):
        return False  # a bare number is a label or a cell unless both are rates
    if qa.per == qb.per or (qa.per in _PER_USE and qb.per in _PER_USE):
        return True
    return qa.per in _RATE_PERIODS and qb.per in _RATE_PERIODS


def agree(qa: Quantity, qb: Quantity) -> bool:
    """The same value, or the same rate per day when stated per different periods."""
    if qa.per != qb.per and qa.per in _RATE_PERIODS and qb.per in _RATE_PERIODS:
        return same_rate(qa, qb)
    return same_value(qa, qb, 1e-9)


def _shared(found: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Markers that read the same in both languages: codes, periods and the bilingual categories. A
    capitalised word is a name in one language and an ordinary word ("Roadside Assistance") in the other."""
    return {(kind, key) for kind, key in found if kind != "name"}


def _nearest(row: np.ndarray, candidates: Sequence[int]) -> int:
    return max(candidates, key=lambda j: (float(row[j]), -j))


def cross_language_evidence(pa: Passage, fa: Facts, pb: Passage, fb: Facts, similarity: np.ndarray, *,
                            min_similarity: float, min_margin: float = 0.0,
                            subject_veto: bool = True) -> tuple[str, ...]:
    """Values that change between two passages in different languages: ``similarity[i, j]`` is the
    cosine of value i's claim sentence in ``pa`` and value j's in ``pb``. Value i is compared with
    the comparable value of ``pb`` in the nearest sentence (at least ``min_similarity``, and
    ``min_margin`` above any other sentence with a comparable value: a small multilingual embedder
    tells topics apart better than details) when that value's own nearest comparable sentence in
    ``pa`` is i's, or states i's value."""
    evidence: list[str] = []
    for i, qa in enumerate(pa.quantities):
        candidates = [j for j, qb in enumerate(pb.quantities) if comparable(qa, qb)]
        if not candidates:
            continue
        j = _nearest(similarity[i], candidates)
        if similarity[i, j] < min_similarity:
            continue
        rivals = [similarity[i, k] for k in candidates if fb.claim_texts[k] != fb.claim_texts[j]]
        if rivals and similarity[i, j] - max(rivals) < min_margin:
            continue
        qb = pb.quantities[j]
        back = [k for k, q in enumerate(pa.quantities) if comparable(q, qb)]
        k = _nearest(similarity[:, j], back)
        if agree(qa, qb) or (k != i and agree(pa.quantities[k], qb)):
            continue
        if k != i and similarity[k, j] > similarity[i, j]:
            continue  # pb's value states another claim of pa more nearly
        if subject_veto and subjects_differ(_shared(fa.markers[i]), fa.profile, _shared(fb.markers[j]), fb.profile):
            continue
        item = f"{qa.text} vs {qb.text}"
        if item not in evidence:
            evidence.append(item)
    return tuple(evidence)
