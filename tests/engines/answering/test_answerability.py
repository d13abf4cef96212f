"""The graded check's arithmetic: P(YES) from a server's log-probabilities, the corpus percentile, their mean."""

from __future__ import annotations

import math

import pytest

from engines.answering.answerability import answerability, corpus_percentile, reply_yes_probability, yes_probability


def test_yes_probability_pools_the_spellings_of_yes_and_no_and_ignores_other_tokens() -> None:
    top = [("YES", math.log(0.5)), ("NO", math.log(0.3)), (" Yes", math.log(0.1)), ("Maybe", math.log(0.05)),
           ("không", math.log(0.05))]
    assert yes_probability(top) == pytest.approx(0.6 / 0.95)
    assert yes_probability([("The", -0.1), ("I", -2.0)]) is None  # neither answer among the alternatives


def test_a_reply_without_log_probabilities_counts_as_certain() -> None:
    assert reply_yes_probability("YES") == 1.0 and reply_yes_probability("No.") == 0.0
    assert reply_yes_probability("Có") == 1.0 and reply_yes_probability("I cannot tell") is None
    assert reply_yes_probability("") is None


def test_corpus_percentile_places_a_cosine_among_the_corpus_own_questions() -> None:
    pseudo = [0.80, 0.85, 0.90, 0.95]
    assert corpus_percentile(0.70, pseudo) == 0.0 and corpus_percentile(0.90, pseudo) == 0.75
    assert corpus_percentile(0.99, pseudo) == 1.0 and corpus_percentile(0.9, []) is None


def test_answerability_is_the_mean_of_the_signals_present() -> None:
    assert answerability(0.2, 0.6) == pytest.approx(0.4)
    assert answerability(0.2, None) == 0.2 and answerability(None, None) is None
