"""A number the question names against the ranges a clause states: "người 35 tuổi" falls in the row
"| 18 – 40 tuổi | ... |" of a premium table, not in "| 41 – 55 tuổi | ... |"; "a 10-year-old" falls
under "trẻ dưới 12 tuổi". Table rows of one schedule read almost alike to an embedder, so the row
whose band holds the question's number is told apart here. Pure functions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from engines.text import normalize

#: Unit words by what they measure, in both languages: a band counts only for a number of its kind.
UNIT_GROUPS: dict[str, tuple[str, ...]] = {
    "age": ("tuổi", "year-old", "year old", "years old", "years-old", "aged"),
    "km": ("km", "kilomet", "kilometre", "kilometer"),
    "day": ("ngày", "day", "days"),
    "month": ("tháng", "month", "months"),
    "hour": ("giờ", "hour", "hours"),
    "person": ("người", "people", "person", "persons"),
    "kg": ("kg",),
}
_UNIT_OF = {word: group for group, words in UNIT_GROUPS.items() for word in words}
_UNITS = "|".join(sorted((re.escape(w) for w in _UNIT_OF), key=len, reverse=True))
#: "35", "7,5", "1.200" (a separator before three digits groups thousands), not part of a date or time
_NUMBER = r"(?<![\d/:.,])(\d{1,3}(?:[.,]\d{3})+|\d+(?:[.,]\d{1,2})?)(?![\d/:]|[.,]\d)"
#: "35 tuổi", "45-year-old", "10 years old", "aged 60"; not "ngày 15 tháng 3" (a date)
_QUESTION_NUMBER = re.compile(rf"(?iu)(?<!ngày\s){_NUMBER}\s*-?\s*({_UNITS})(?!\w)(?!\s*\d)|(aged)\s+{_NUMBER}")
_DASH = r"\s*(?:–|—|-|đến|tới|to)\s*"
_CLOSED = re.compile(rf"(?iu){_NUMBER}{_DASH}{_NUMBER}")
_BELOW = re.compile(rf"(?iu)(?<!\w)(?:dưới|under|below|less than|chưa đủ|younger than)\s+{_NUMBER}")
_ABOVE = re.compile(rf"(?iu)(?<!\w)(?:trên|over|above|more than|older than)\s+{_NUMBER}(?!{_DASH}\d)")
_FROM = re.compile(rf"(?iu)(?<!\w)(?:từ đủ|ít nhất|at least)\s+{_NUMBER}(?!{_DASH}\d)")
#: A range of another kind of value ("7,5 - 8,5 %/năm", "5 – 10 triệu đồng"): no band of any unit here.
_OTHER_UNIT_AFTER = re.compile(r"(?iu)^\s*(?:%|phần trăm|percent|đồng|vnd|vnđ|usd|triệu|tỷ|nghìn|million|billion)")
#: A band's unit is read from the few words after it ("18 – 40 tuổi", "dưới 12 tuổi").
_UNIT_AFTER = re.compile(rf"(?iu)^\s*-?\s*({_UNITS})(?!\w)")
_HEADER_UNIT = re.compile(rf"(?iu)(?<!\w)({_UNITS})(?!\w)")


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    group: str

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high


def _value(text: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", text):
        return float(re.sub(r"[.,]", "", text))
    return float(text.replace(",", "."))


def question_numbers(question: str) -> list[tuple[float, str]]:
    """(value, unit group) of each number the question names with a unit word."""
    out = []
    for m in _QUESTION_NUMBER.finditer(normalize(question)):
        if m.group(1):
            out.append((_value(m.group(1)), _UNIT_OF[m.group(2).casefold()]))
        else:
            out.append((_value(m.group(4)), "age"))
    return out


def bands(clause: str, context: str = "") -> list[Band]:
    """The ranges ``clause`` states, each with the unit written after it or, failing that, the only
    unit group named in ``context`` (its document title and heading; not the clause itself, whose other
    words are about other things)."""
    text = normalize(clause)
    fallback = {_UNIT_OF[m.group(1).casefold()] for m in _HEADER_UNIT.finditer(normalize(context))}
    found: list[Band] = []

    def unit_after(end: int) -> str | None:
        if _OTHER_UNIT_AFTER.match(text[end:]):
            return None
        m = _UNIT_AFTER.match(text[end:])
        if m:
            return _UNIT_OF[m.group(1).casefold()]
        return next(iter(fallback)) if len(fallback) == 1 else None

    for m in _CLOSED.finditer(text):
        low, high = sorted((_value(m.group(1)), _value(m.group(2))))
        if (group := unit_after(m.end())) is not None:
            found.append(Band(low, high, group))
    for m in _BELOW.finditer(text):
        if (group := unit_after(m.end())) is not None:
            found.append(Band(-math.inf, _value(m.group(1)) - 1e-9, group))
    for m in _ABOVE.finditer(text):  # "trên 60 tuổi": 60 is not above 60
        if (group := unit_after(m.end())) is not None:
            found.append(Band(_value(m.group(1)) + 1e-9, math.inf, group))
    for m in _FROM.finditer(text):
        if (group := unit_after(m.end())) is not None:
            found.append(Band(_value(m.group(1)), math.inf, group))
    return found


def band_score(numbers: list[tuple[float, str]], clause_bands: list[Band]) -> int:
    """+1 when a band of the clause holds a number of its kind the question names, -1 when the clause
    has bands of that kind and none holds it, 0 otherwise."""
    if any(b.holds(value) for value, group in numbers for b in clause_bands if b.group == group):
        return 1
    return -1 if any(b.group == group for _, group in numbers for b in clause_bands) else 0
