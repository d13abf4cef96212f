"""Which sentences of one body of text reappear in another: the proof that no evaluation sentence
reached the training data. Sentences are compared after folding case and spaces; short ones
("Điều 1.", "| 2 | 3 |") are skipped since any two corpora share them."""

from __future__ import annotations

import re
from collections.abc import Iterable

MIN_WORDS = 6
_SPLIT = re.compile(r"(?<=[.!?;:])\s+|\n+|\s*\|\s*")


def sentences(text: str, min_words: int = MIN_WORDS) -> set[str]:
    out = set()
    for part in _SPLIT.split(text):
        words = part.lower().replace("*", " ").replace("#", " ").split()
        if len(words) >= min_words:
            out.add(" ".join(words).rstrip(".!?;:"))
    return out


def leaked(training: Iterable[str], protected: Iterable[str], min_words: int = MIN_WORDS) -> set[str]:
    """The protected sentences found among the training texts' sentences."""
    seen: set[str] = set()
    for text in training:
        seen |= sentences(text, min_words)
    found: set[str] = set()
    for text in protected:
        found |= sentences(text, min_words) & seen
    return found
