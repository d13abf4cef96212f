"""Deadlines as values: a date the text sets as a limit ("trước ngày 31/05/2024", "extended to
30 September 2024") is a claim two documents can disagree on, like an amount.

The number parser blocks every date so that "15/11/2023" is never read as a count; this module
reads back only the dates that follow a deadline cue ("hạn", "trước ngày", "đến hết", "by",
"until", "no later than"...), so issue dates, effective dates and dates in headings stay out.
Each becomes a :class:`~engines.conflicts.numbers.Quantity` with unit ``"date"`` and the day's
ordinal as its value, so the claim rules of ``engines.conflicts.claims`` apply unchanged. Pure.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

from engines.conflicts.numbers import Quantity
from engines.conflicts.subjects import sentence_prefix

__all__ = ["DATE_UNIT", "DAY_OF_MONTH_UNIT", "DEADLINE_UNITS", "parse_deadlines"]

DATE_UNIT = "date"
#: A monthly deadline ("đến hết ngày 25", "by the 25th of each month"): the day of the month is the value.
DAY_OF_MONTH_UNIT = "day-of-month"
DEADLINE_UNITS = frozenset({DATE_UNIT, DAY_OF_MONTH_UNIT})

_MONTHS = {name: i for i, names in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")), start=1) for name in names}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))

# (pattern, group order): day-month-year in the three ways the corpora write it.
_DATE_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?![\w/.-]?\d)"), "dmy"),
    (re.compile(r"(?<![\w/.-])(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"(?<!\w)ngày\s+(\d{1,2})\s+tháng\s+(\d{1,2})\s*(?:năm|,)\s*(\d{4})(?!\d)", re.IGNORECASE), "dmy"),
    (re.compile(r"(?<!\w)(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\.?,?\s+(\d{4})(?!\d)",
                re.IGNORECASE), "dMy"),
    (re.compile(r"(?<!\w)(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?!\d)",
                re.IGNORECASE), "Mdy"),
)

# A day of the month with no month after it: "ngày 25" (not "ngày 25/3", "ngày 25 tháng 3"), "the 25th of each month".
_DAY_OF_MONTH_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<!\w)ngày\s+(\d{1,2})(?![\d/.,-]|\s+tháng\s+\d)", re.IGNORECASE),
    re.compile(r"(?<!\w)(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)(?=(?:\s+day)?\s+(?:of\s+)?(?:each|every|the)\s+"
               r"(?:(?:following|next)\s+)?month)", re.IGNORECASE),
)
# A monthly deadline in the month after the one the sentence speaks of ("ngày 05 của tháng kế tiếp",
# "the 10th day of the month following"): a later deadline than the same day of that month.
_NEXT_MONTH_RE = re.compile(
    r"[\s*_]*(?:day\s+)?(?:(?:của|trong)\s+)?(?:tháng\s+(?:kế\s+tiếp|tiếp\s+theo|liền\s+(?:sau|kề)|sau)"
    r"|of\s+the\s+(?:following|next)\s+month|of\s+the\s+month\s+(?:following|after))", re.IGNORECASE)
_MONTH_DAYS = 31

# A deadline cue ends right before the date (a "ngày" between them is allowed).
_CUE_BEFORE_RE = re.compile(
    r"(?<!\w)(?:hạn(?:\s+chót|\s+cuối)?|thời\s+hạn|trước|chậm\s+nhất(?:\s+là)?|muộn\s+nhất(?:\s+là)?|đến\s+hết"
    r"|đến|tới|hết\s+hạn(?:\s+vào)?|kéo\s+dài\s+(?:đến|tới)|gia\s+hạn\s+(?:đến|tới)|không\s+muộn\s+hơn"
    r"|by|before|until|till|through|no\s+later\s+than|deadline(?:\s+is)?|expires?(?:\s+on)?|ends?\s+on"
    r"|extended\s+(?:to|until)|trước\s+hoặc\s+trong|on\s+or\s+before|before\s+or\s+on)"
    r"[\s*_]*(?:vào)?[\s*_]*(?:(?:hết\s+)?ngày|the|on)?[\s*_]*[:,]?[\s*_]*$",  # Markdown emphasis may wrap the date
    re.IGNORECASE,
)
_CUE_WINDOW = 40


def _value(groups: tuple[str, ...], order: str) -> dt.date | None:
    try:
        if order == "dmy":
            d, m, y = (int(g) for g in groups)
        elif order == "ymd":
            y, m, d = (int(g) for g in groups)
        elif order == "dMy":
            d, m, y = int(groups[0]), _MONTHS[groups[1].lower()], int(groups[2])
        else:
            m, d, y = _MONTHS[groups[0].lower()], int(groups[1]), int(groups[2])
        return dt.date(y, m, d)
    except (ValueError, KeyError):
        return None


def _day_of_month(norm: str, m: re.Match[str]) -> int | None:
    """The day (1-31), plus a month's days when the sentence says the month after: "ngày 05 của tháng kế
    tiếp" falls after "ngày 25"."""
    day = int(m.group(1))
    if not 1 <= day <= 31:
        return None
    return day + (_MONTH_DAYS if _NEXT_MONTH_RE.match(norm, m.end()) else 0)


def _deadline(norm: str, m: re.Match[str], value: float, unit: str, context_words: int) -> Quantity | None:
    """The match as a deadline value when a deadline cue ends right before it in its sentence."""
    before = sentence_prefix(norm, m.start())
    if not _CUE_BEFORE_RE.search(before[-_CUE_WINDOW:]):
        return None
    words = re.findall(r"\w+", before)
    return Quantity(value, unit, None, m.span(), m.group(), " ".join(words[-context_words:]), 0.5)


def parse_deadlines(text: str, context_words: int = 8) -> list[Quantity]:
    """Dates set as limits in ``text`` (NFC spans), in reading order; every other date is left out."""
    norm = unicodedata.normalize("NFC", text)
    found: list[Quantity] = []
    matches = [(m, _value(m.groups(), order), DATE_UNIT) for rx, order in _DATE_RES for m in rx.finditer(norm)]
    matches += [(m, _day_of_month(norm, m), DAY_OF_MONTH_UNIT) for rx in _DAY_OF_MONTH_RES for m in rx.finditer(norm)]
    for m, value, unit in matches:  # full dates first: a day of the month inside one is not another value
        if value is None:
            continue
        if any(q.span[0] < m.end() and m.start() < q.span[1] for q in found):
            continue
        number = float(value.toordinal()) if isinstance(value, dt.date) else float(value)
        quantity = _deadline(norm, m, number, unit, context_words)
        if quantity is not None:
            found.append(quantity)
    return sorted(found, key=lambda q: q.span)
