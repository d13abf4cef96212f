"""A detected conflict stands only when both sides speak of the same subject and scope.

The claim rules see two values that differ ("6 vé" against "10 vé"), but not that one is the rule
for members and the other for staff, or for another item. The reader's second head was trained on
exactly that question over pairs of claim sentences, so the pair it is shown is the two sentences
that hold the values the evidence names (each with its document's title), not the whole passages.

Pure functions; the judge (``Reader.same_scope``) is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engines.conflicts.subjects import sentences
from engines.reader.inputs import passage_text

#: ``pairs`` of texts -> P(same subject and scope), one per pair.
ScopeJudge = Callable[[Sequence[tuple[str, str]]], list[float]]
#: Characters of a passage shown when no sentence holds the evidence (an abolition, a moved deadline).
FALLBACK_CHARS = 400


@dataclass(frozen=True)
class Side:
    text: str
    title: str = ""


def claim_pairs(evidence: Sequence[str], a: Side, b: Side) -> list[tuple[str, str]]:
    """For each "x vs y" of the evidence, the sentence of ``a`` holding x beside the sentence of
    ``b`` holding y; one pair of passage openings when no evidence names values in both."""
    out = []
    for item in evidence:
        left, sep, right = item.partition(" vs ")
        if not sep:
            continue
        sa, sb = _holding(a.text, left.strip()), _holding(b.text, right.strip())
        if sa and sb:
            out.append((passage_text(sa, a.title), passage_text(sb, b.title)))
    if not out:
        out.append((passage_text(a.text[:FALLBACK_CHARS], a.title), passage_text(b.text[:FALLBACK_CHARS], b.title)))
    return list(dict.fromkeys(out))


def scope_of(evidence_sets: Sequence[Sequence[str]], sides: Sequence[tuple[Side, Side]], judge: ScopeJudge) -> list[float]:
    """Per detected pair, the judge's highest P(same scope) over its claim pairs (one batch)."""
    pairs = [claim_pairs(ev, a, b) for ev, (a, b) in zip(evidence_sets, sides)]
    flat = [p for group in pairs for p in group]
    scores = judge(flat) if flat else []
    out, at = [], 0
    for group in pairs:
        out.append(max(scores[at:at + len(group)]))
        at += len(group)
    return out


def _holding(text: str, value: str) -> str:
    """The first sentence of ``text`` that holds ``value`` as written."""
    if not value:
        return ""
    pattern = re.compile(rf"(?<![\w.,]){re.escape(value)}(?!\w)")  # "6 vé" is not in "16 vé"
    for sentence in sentences(text):
        if pattern.search(sentence):
            return sentence.strip()
    return ""
