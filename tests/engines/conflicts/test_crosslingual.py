"""Passages in two languages compared claim by claim: a Vietnamese rule and its English counterpart
share no words, so the word-overlap alignment never compares their values."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pytest

from engines.conflicts.claim_vectors import claim_similarity, cross_language
from engines.conflicts.crosslingual import CrossLanguage, agree, comparable
from engines.conflicts.graph import analyze, detect_pairs, resolve
from engines.conflicts.numbers import Quantity

#: A scripted multilingual embedder: sentences about one topic, in either language, score high.
TOPICS = {"visits": ("tư vấn", "consultation"), "deadline": ("nộp hồ sơ", "submit"), "fee": ("phí", "fee")}


def topic_of(text: str) -> str | None:
    lowered = text.lower()
    return next((t for t, words in TOPICS.items() if any(w in lowered for w in words)), None)


def scripted(texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    return np.array([[0.95 if topic_of(a) and topic_of(a) == topic_of(b) else 0.70 for b in texts_b] for a in texts_a])


CROSS = CrossLanguage(scripted, min_similarity=0.85)
GATE = 0.88


def sim(s: float) -> np.ndarray:
    return np.array([[1.0, s], [s, 1.0]])


def passages(vi: str, en: str) -> list:
    return [analyze("vi", vi, dt.date(2023, 1, 1), lang="vi", source="vi-doc"),
            analyze("en", en, dt.date(2025, 1, 1), lang="en", source="en-doc")]


VI = "Khách hàng nộp hồ sơ bồi thường trong vòng 60 ngày kể từ ngày ra viện. Phí cấp lại thẻ là 50.000 đồng."


def test_a_changed_deadline_across_languages_is_found_and_the_newer_kept():
    pair = passages(VI, "Customers must submit a claim within 90 days of discharge. The card fee is 50,000 VND.")
    assert detect_pairs(pair, sim(0.95), sim_threshold=GATE) == []  # by words alone: nothing shared
    found = detect_pairs(pair, sim(0.95), sim_threshold=GATE, cross_language=CROSS)
    assert [p.evidence for p in found] == [("60 ngày vs 90 days",)]
    assert resolve(pair, found).kept_ids == ("en",)


def test_the_same_values_in_two_languages_agree():
    pair = passages(VI, "Customers must submit a claim within 60 days of discharge. The card fee is 50,000 VND.")
    assert detect_pairs(pair, sim(0.95), sim_threshold=GATE, cross_language=CROSS) == []


def test_two_languages_pass_a_lower_gate_but_one_language_does_not():
    cross = passages(VI, "Customers must submit a claim within 90 days of discharge.")
    assert detect_pairs(cross, sim(0.87), sim_threshold=GATE, cross_language=CROSS)
    assert not detect_pairs(cross, sim(0.85), sim_threshold=GATE, cross_language=CROSS)  # below gate - drop
    same = [analyze("a", VI, dt.date(2023, 1, 1), lang="vi", source="a"),
            analyze("b", VI.replace("60 ngày", "90 ngày"), dt.date(2025, 1, 1), lang="vi", source="b")]
    assert not detect_pairs(same, sim(0.87), sim_threshold=GATE, cross_language=CROSS)
    assert detect_pairs(same, sim(0.90), sim_threshold=GATE, cross_language=CROSS)


def test_an_ambiguous_alignment_is_not_a_conflict():
    # both English sentences are about fees: the scripted embedder cannot tell which one the
    # Vietnamese fee is, so a margin above zero leaves them alone
    pair = passages("Phí cấp lại thẻ là 50.000 đồng.", "The card fee is 70,000 VND. The parking fee is 20,000 VND.")
    scores = np.array([[0.95, 0.95]])
    both = CrossLanguage(lambda a, b: scores, min_similarity=0.85, min_margin=0.01)
    assert not detect_pairs(pair, sim(0.95), sim_threshold=GATE, cross_language=both)
    clear = CrossLanguage(lambda a, b: np.array([[0.95, 0.90]]), min_similarity=0.85, min_margin=0.01)
    assert detect_pairs(pair, sim(0.95), sim_threshold=GATE, cross_language=clear)


@pytest.mark.parametrize("en, conflict", [("Free consultations: 2 per month.", False),
                                          ("Free consultations: 3 per month.", True)])
def test_rates_per_different_periods_compare_per_day(en, conflict):
    pair = passages("Mỗi khách hàng được tư vấn miễn phí 24 lượt/năm.", en)
    assert bool(detect_pairs(pair, sim(0.95), sim_threshold=GATE, cross_language=CROSS)) is conflict


def test_comparable_and_agree_read_units_and_periods():
    vnd = Quantity(250000.0, "VND", None, (0, 1), "250,000 VND", "")
    per_visit = Quantity(300000.0, "VND", "occasion", (0, 1), "300.000 đồng/lượt", "")
    days = Quantity(60.0, "day", None, (0, 1), "60 ngày", "")
    assert comparable(vnd, per_visit) and not agree(vnd, per_visit)
    assert not comparable(vnd, days)
    bare = Quantity(2.1, "", None, (0, 1), "2.1", "")
    assert not comparable(bare, bare)  # a clause label is not a claim
    times = Quantity(3.0, "times", None, (0, 1), "3 lần", "")
    assert not comparable(times, bare) and not comparable(bare, times)  # either way round


class CountingEmbedder:
    def __init__(self) -> None:
        self.embedded: list[str] = []

    def get_text_embedding_batch(self, texts: list[str]) -> list[list[float]]:
        self.embedded += texts
        return [[1.0, float(len(t))] for t in texts]


def test_claim_vectors_are_embedded_once():
    model = CountingEmbedder()
    similarity = claim_similarity(model)
    first = similarity(["a", "bb"], ["bb", "ccc"])
    second = similarity(["bb"], ["a"])
    assert first.shape == (2, 2) and second.shape == (1, 1)
    assert sorted(model.embedded) == ["a", "bb", "ccc"]
    assert first[1, 0] == pytest.approx(1.0)


def test_no_cross_language_comparison_without_a_calibrated_scale():
    assert cross_language(CountingEmbedder(), None) is None
    assert cross_language(None, 0.85) is None
    assert cross_language(CountingEmbedder(), 0.85).min_similarity == 0.85
