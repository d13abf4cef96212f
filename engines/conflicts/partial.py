"""Partial supersession: a newer document replaces the claims it speaks to, not the whole older
passage. For a passage that lost its conflict cluster, each sentence is checked on its own against
the winning passages with the same claim rules; only the sentences that conflict are set aside,
and the rest of the passage (rules the newer document confirms or leaves alone) stays. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engines.conflicts.claims import Passage, analyze
from engines.conflicts.subjects import sentence_spans

__all__ = ["stale_spans", "without_spans"]

#: Left of a passage after its stale sentences are cut, in words, below which it is set aside whole.
MIN_WORDS_LEFT = 8


def stale_spans(loser: Passage, winners: Sequence[Passage], detect: Callable[..., list[Any]]
                ) -> tuple[tuple[int, int], ...] | None:
    """Spans of ``loser``'s sentences that conflict on their own with a winner (``detect`` is
    ``graph.detect_pairs``, passed in to keep the modules acyclic; its default rules, no gate), or
    None when no single sentence does (the conflict lies across sentences: the passage is set aside
    whole) or too little would be left."""
    spans = []
    for start, end in sentence_spans(loser.text):
        part = analyze(f"{loser.id}@{start}", loser.text[start:end], loser.date, title=loser.title,
                       source=loser.source_key)
        if not (part.quantities or part.cues):
            continue
        for winner in winners:
            if detect([part, winner], np.ones((2, 2)), sim_threshold=-1.0):
                spans.append((start, end))
                break
    if not spans:
        return None
    if len(without_spans(loser.text, spans).split()) < MIN_WORDS_LEFT:
        return None
    return tuple(spans)


def without_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with ``spans`` cut out, blank runs closed up."""
    out, cursor = [], 0
    for start, end in sorted(spans):
        out.append(text[cursor:start])
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return re.sub(r"[ \t]{2,}", " ", re.sub(r"\n{3,}", "\n\n", "".join(out))).strip()
