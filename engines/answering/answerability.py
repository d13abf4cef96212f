"""How likely the retrieved text answers the question: one number from two weak signals, no labels at run time.

Neither signal alone separates a near-miss question (on topic, answer absent) from an answerable
one: the best passage cosine ranks them with an AUC of about 0.7 on the held-out dev split, the
packaged 1.5B model's hard YES/NO about as well, and both err on different turns. Together they do
better (docs/answers.md, "A graded check"):

* ``p_yes``: the model's probability of YES over YES + NO for "do these excerpts state the answer?",
  read from the first token's log-probabilities (any OpenAI-compatible server that returns
  ``logprobs``); a server that returns none gives its reply's YES or NO as 1 or 0.
* ``percentile``: where the turn's best cosine falls among the corpus's own sentences asked as
  questions (the pseudo-queries measured at ingest, ``engines.answering.gate_calibration``), so the number
  means the same on any corpus and embedder.

The answerability is their mean (``p_yes`` alone when the index has no calibration).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence

_YES = ("YES", "CÓ")
_NO = ("NO", "KHÔNG")


def _label(token: str) -> str | None:
    word = token.strip().strip("*_`\"'.:").upper()
    return "yes" if word in _YES else "no" if word in _NO else None


def yes_probability(top_logprobs: Iterable[tuple[str, float]]) -> float | None:
    """P(YES) / (P(YES) + P(NO)) from ``(token, logprob)`` alternatives of the first token ("Yes", " YES"
    and "có" count as YES); None when neither answer is among them."""
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in top_logprobs:
        label = _label(token)
        if label:
            mass[label] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


def reply_yes_probability(reply: str) -> float | None:
    """1 or 0 for a reply that starts with YES or NO (a server without log-probabilities), else None."""
    words = (reply or "").split()
    label = _label(words[0]) if words else None
    return None if label is None else float(label == "yes")


def corpus_percentile(cosine: float, pseudo_scores: Sequence[float]) -> float | None:
    """Share of the corpus's pseudo-queries (sorted best cosines) scoring at most ``cosine``; None without any."""
    if not pseudo_scores:
        return None
    return bisect.bisect_right(pseudo_scores, cosine) / len(pseudo_scores)


def answerability(p_yes: float | None, percentile: float | None) -> float | None:
    """The mean of the signals present; None when there is neither."""
    present = [x for x in (p_yes, percentile) if x is not None]
    return sum(present) / len(present) if present else None
