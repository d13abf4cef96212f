"""Phrase-level abolition cues ("không còn áp dụng", "no longer", "superseded").

These are phrases, never the bare word "không". In Vietnamese, "không" and
"chưa" are also question particles ("Nhân viên có được nghỉ không?") and parts
of ordinary words ("không khí", "không gian"). A cue fires only as a whole
phrase, bounded by word edges, in NFC text and ignoring case.

Decision on "chưa từng" / "chưa bao giờ" (and English "has never"): they are
not cues. They report a past that never happened ("the company has never
charged this fee"). They do not say a rule was abolished. "không bao giờ" and
a bare "never" stay cues, as in the seed ("không bao giờ", "không còn", "hủy bỏ").
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

logger = logging.getLogger(__name__)

__all__ = ["Cue", "CUE_PHRASES", "find_abolition_cues", "has_abolition_cue"]


@dataclass(frozen=True)
class Cue:
    """One cue: ``phrase`` is the canonical form (e.g. "hủy bỏ" for "huỷ bỏ"),
    ``span`` indexes the NFC-normalised text."""

    phrase: str
    span: tuple[int, int]


_S = r"\s+"  # between syllables or words; phrases may wrap lines
_SL = r"[^\S\n]+"  # same line only: "... không\nCòn lại ..." is a question then a new sentence

# (canonical phrase, pattern). Longer phrases win where matches overlap.
_CUES: tuple[tuple[str, str], ...] = (
    ("không còn áp dụng", "không" + _SL + "còn" + _S + r"(?:được\s+)?áp" + _S + "dụng"),
    ("không còn hiệu lực", "không" + _SL + "còn" + _S + r"(?:có\s+)?hiệu" + _S + "lực"),
    ("không còn", "không" + _SL + "còn"),
    ("không bao giờ", "không" + _SL + "bao" + _S + "giờ"),
    ("bãi bỏ", "bãi" + _S + "bỏ"),
    ("hủy bỏ", r"h(?:ủy|uỷ)" + _S + "bỏ"),
    ("ngừng", "ngừng"),
    ("ngưng", "ngưng"),
    ("hết hiệu lực", "hết" + _S + "hiệu" + _S + "lực"),
    ("được thay thế bởi", r"(?:được|bị)" + _S + "thay" + _S + "thế" + _S + r"(?:bởi|bằng)"),
    ("thay thế cho", "thay" + _S + "thế" + _S + "cho"),
    ("no longer", "no" + _S + "longer"),
    ("discontinued", "discontinued"),
    ("revoked", "revoked"),
    ("deprecated", "deprecated"),
    ("never", "never"),
    ("superseded", "superseded"),
    ("abolished", "abolished"),
    ("rescinded", "rescinded"),
    ("repealed", "repealed"),
    ("replaced by", "replaced" + _S + "by"),
    ("is withdrawn", r"(?:is|are|was|were|has\s+been|have\s+been)" + _S + "withdrawn"),
)

# Expressions that contain a cue but do not abolish anything. A cue overlapping
# one of these is dropped.
_BLOCKERS: tuple[str, ...] = (
    "không" + _SL + r"(?:ngừng|ngưng)",  # "không ngừng": ceaselessly
    "ngừng" + _S + r"(?:việc|trệ)",  # "trợ cấp ngừng việc": work-stoppage pay
    "ngưng" + _S + "tụ",  # condensation
    "tạm" + _S + r"(?:ngừng|ngưng)",  # "tạm ngưng": a temporary suspension the rule describes, not an abolition
    "không" + _SL + "còn" + _S + "nghi" + _S + "ngờ",  # "no doubt"
    "không" + _SL + "còn" + _S + "cách" + _S + "nào",  # "no other way"
    "no" + _S + "longer" + _S + "than",  # "no longer than 30 days": a limit
    r"(?:has|have|had)" + _S + r"(?:\w+\s+)?never",  # "has never": the past, like "chưa từng"
)


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + pattern + r")(?!\w)", re.IGNORECASE)


_CUE_RES = tuple((phrase, _compile(p)) for phrase, p in _CUES)
_BLOCKER_RES = tuple(_compile(p) for p in _BLOCKERS)

CUE_PHRASES: tuple[str, ...] = tuple(phrase for phrase, _ in _CUES)


def find_abolition_cues(text: str) -> list[Cue]:
    """Abolition/negation cues in ``text``, left to right, never overlapping."""
    norm = unicodedata.normalize("NFC", text)
    blocked = [m.span() for rx in _BLOCKER_RES for m in rx.finditer(norm)]
    found = [
        Cue(phrase, m.span())
        for phrase, rx in _CUE_RES
        for m in rx.finditer(norm)
        if not any(s < m.end() and m.start() < e for s, e in blocked)
    ]
    # Earliest first; at the same start, the longest phrase wins.
    found.sort(key=lambda c: (c.span[0], -(c.span[1] - c.span[0])))
    out: list[Cue] = []
    for cue in found:
        if not out or cue.span[0] >= out[-1].span[1]:
            out.append(cue)
    return out


def has_abolition_cue(text: str) -> bool:
    """Shortcut for callers that only need a yes/no answer."""
    return bool(find_abolition_cues(text))

