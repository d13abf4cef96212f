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

__all__ = ["amends_in_part", "stale_spans", "without_spans"]

#: A title that presents its document as a change to parts of another: "Quyết định sửa đổi, bổ sung một số điều
#: ...", "Thông báo điều chỉnh ...", "... gia hạn ...", "Amendment to ...", "Policy Update 2025". Not "bổ sung" as
#: a noun's modifier ("điều khoản bổ sung BS-02", "khoản bổ sung").
_AMENDING_TITLE = re.compile(
    r"\b(?:sửa\s+đổi|(?<!khoản\s)bổ\s+sung|điều\s+chỉnh|thay\s+đổi|gia\s+hạn|cập\s+nhật|"
    r"amend(?:s|ed|ing|ment)?|updates?|changes?\s+to|extension)\b",
    re.IGNORECASE,
)
#: A sentence saying what the change leaves alone: "Các nội dung khác của Quy chế ... giữ nguyên", "Other
#: provisions remain unchanged", "... remain in force"; or naming the parts it changes: "Sửa đổi khoản 2 Điều 5".
_KEEPS_THE_REST = re.compile(
    r"\b(?:(?:các|những)\s+(?:nội\s+dung|điều(?:\s+khoản)?|quy\s+định|khoản)\s+khác\b[^.\n]{0,160}?"
    r"(?:giữ\s+nguyên|không\s+thay\s+đổi|(?:vẫn|tiếp\s+tục)\s+(?:còn\s+|có\s+)?hiệu\s+lực)|"
    r"(?:sửa\s+đổi|bổ\s+sung)[,\s]+(?:bổ\s+sung\s+)?(?:điểm|khoản|điều|mục|phụ\s+lục)\s+[\dIVXa-z]|"
    r"other\s+(?:provisions|terms|sections|clauses|rules)\b[^.\n]{0,120}?\bremain\s+(?:unchanged|in\s+(?:force|effect))|"
    r"(?:section|clause|article|paragraph)\s+[\d.]+\s+is\s+amended)",
    re.IGNORECASE,
)

#: Left of a passage after its stale sentences are cut, in words, below which it is set aside whole.
MIN_WORDS_LEFT = 8


def amends_in_part(title: str, text: str) -> bool:
    """Whether a passage's document presents itself as a change to parts of another (its title), or the
    passage says which parts it changes or that the rest stays. Such a document replaces the claims
    it speaks to, not the older document's other rules (issue 14, partial supersession)."""
    return bool(_AMENDING_TITLE.search(title) or _KEEPS_THE_REST.search(text))


def stale_spans(loser: Passage, winners: Sequence[Passage], detect: Callable[..., list[Any]]
                ) -> tuple[tuple[int, int], ...] | None:
    """Spans of ``loser``'s sentences that conflict on their own with a winner (``detect`` is
    ``graph.detect_pairs``, passed in to keep the modules acyclic; its default rules, no gate), or
    None when no single sentence does (the conflict lies across sentences: the passage is set aside
    whole) or too little would be left."""
    spans = []
    for start, end in sentence_spans(loser.text):
        part = analyze(f"{loser.id}@{start}", loser.text[start:end], loser.date, title=loser.title,
                       source=loser.source_key, authority=loser.authority)
        if not (part.quantities or part.cues):
            continue
        for winner in winners:
            if detect([part, winner], np.ones((2, 2)), sim_threshold=-1.0):
                spans.append((start, end))
                break
    if not spans:
        return None
    spans = _whole_clauses(loser.text, spans)
    if len(without_spans(loser.text, spans).split()) < MIN_WORDS_LEFT:
        return None
    return tuple(spans)


#: Where a clause ends: a full stop, question or exclamation mark before a space, or a line break (not
#: the ";" that separates the parts of one clause).
_CLAUSE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)|\n")
_NUMBER_ONLY = re.compile(r"^\s*(?:[-*•+]\s*)?(?:\d+(?:\.\d+)*[.)]?|\([a-zđ0-9]\))?\s*$", re.IGNORECASE)


def _whole_clauses(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` widened to the clauses that hold them: a stale part of "A; B; C." takes the whole
    clause with it, so no fragment ("sau 30 ngày ...") is left to be quoted as a rule of its own."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text)] + [len(text)]
    widened: list[tuple[int, int]] = []
    for start, end in spans:
        clause_start = max((e for e in ends if e <= start), default=0)
        line_start = text.rfind("\n", 0, clause_start) + 1
        if _NUMBER_ONLY.match(text[line_start:clause_start]):  # "3.1. " goes with its clause
            clause_start = line_start
        clause_end = next((e for e in ends if e >= end), len(text))
        if widened and clause_start <= widened[-1][1]:
            widened[-1] = (widened[-1][0], max(widened[-1][1], clause_end))
        else:
            widened.append((clause_start, clause_end))
    return widened


def without_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with ``spans`` cut out, blank runs closed up."""
    out, cursor = [], 0
    for start, end in sorted(spans):
        out.append(text[cursor:start])
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return re.sub(r"[ \t]{2,}", " ", re.sub(r"\n{3,}", "\n\n", "".join(out))).strip()
