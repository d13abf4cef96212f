"""Numeric claims (value, unit, period) in Vietnamese and English text.

Conflict detection compares values, not strings. "1.500.000 đồng" and "1,5 triệu
đồng" are the same claim. "Điều 4.2", "v1.2", "SKU-4471", "15/11/2023" and phone
numbers are not claims at all. Every function here is pure. Spans index the
NFC-normalised text (the same as the input when the input is already NFC).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from engines.conflicts import lexicon as lx
from engines.text import detect_language, singular

logger = logging.getLogger(__name__)

Lang = Literal["vi", "en"]

__all__ = ["Quantity", "parse_quantities"]


@dataclass(frozen=True)
class Quantity:
    """One numeric claim.

    ``value`` is already scaled and in the canonical unit: "4,2 triệu USD" becomes
    4_200_000.0 with unit "USD". ``per`` is the canonical period of a rate, for
    example "8,5%/năm" gives unit "%" and per "year". ``context`` holds up to a few
    words before the number in the same sentence; it hints at the subject.
    ``resolution`` is half of what the number's last written digit is worth,
    after scaling ("4.2 million" gives 50_000). It lets "$4.2M" agree with
    "$4,213,000".
    """

    value: float
    unit: str
    per: str | None
    span: tuple[int, int]
    text: str
    context: str
    resolution: float = 0.0


# --------------------------------------------------------------------------- helpers


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    return sorted(m.span() for rx in lx.BLOCKED_RES for m in rx.finditer(text))


def _overlaps(span: tuple[int, int], blocked: list[tuple[int, int]]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in blocked)


def _is_code(text: str, start: int) -> bool:
    """True for "SKU-4471"-style numbers glued to a letter."""
    return bool(lx.CODE_BEFORE_RE.search(text[max(0, start - 2):start]))


def _is_labelled(text: str, start: int) -> bool:
    """True after "Điều", "khoản", "section", "§"...: a reference if no unit follows."""
    return bool(lx.LABEL_BEFORE_RE.search(text[max(0, start - 24):start]))


def _vote(raw: str) -> Lang | None:
    """Which convention an unambiguous number implies: "vi" = 1.500,5 / "en" = 1,500.5."""
    seps = re.findall(r"[.,]", raw)
    if not seps:
        return None
    if len(set(seps)) == 2:
        return "vi" if seps[-1] == "," else "en"
    groups = re.split(r"[.,]", raw)
    if len(seps) > 1:
        return "vi" if seps[0] == "." else "en"
    if len(groups[1]) != 3:
        return "vi" if seps[0] == "," else "en"
    return None


def _convention(raws: list[str], text: str, lang: Lang | None) -> Lang:
    """Unambiguous numbers in the text decide first, then the hint, then the script."""
    votes = [v for v in map(_vote, raws) if v is not None]
    vi, en = votes.count("vi"), votes.count("en")
    if vi != en:
        return "vi" if vi > en else "en"
    return lang if lang is not None else detect_language(text)  # type: ignore[return-value]


def _valid_thousands(groups: list[str]) -> bool:
    head = groups[0]
    return 1 <= len(head) <= 3 and not (head.startswith("0")) and all(len(g) == 3 for g in groups[1:])


def _number_value(raw: str, convention: Lang, thousands_bias: bool) -> tuple[float, int] | None:
    """Return (value, decimals) or None when the digit groups are not a number.

    A single separator with exactly three digits after it is the ambiguous case:
    "1.500" is 1500 in Vietnamese and 1.5 in English. ``thousands_bias`` (VND with
    no scale word, where fractions do not exist) forces the thousands reading.
    """
    seps = re.findall(r"[.,]", raw)
    groups = re.split(r"[.,]", raw)
    if not seps:
        return float(int(raw)), 0
    if len(set(seps)) == 2:
        dec = seps[-1]
        if seps.count(dec) != 1 or not _valid_thousands(groups[:-1]):
            return None
        return float(f"{''.join(groups[:-1])}.{groups[-1]}"), len(groups[-1])
    if len(seps) > 1:
        return (float(int("".join(groups))), 0) if _valid_thousands(groups) else None
    head, tail = groups
    ambiguous = len(tail) == 3 and len(head) <= 3 and not head.startswith("0")
    if ambiguous:
        thousands_sep = "." if convention == "vi" else ","
        if thousands_bias or seps[0] == thousands_sep:
            return float(int(head + tail)), 0
    return float(f"{head}.{tail}"), len(tail)


def _match_scale(text: str, pos: int, dollar: bool) -> tuple[float, int]:
    m = lx.SCALE_LETTER_RE.match(text, pos)
    if m:
        return lx.SCALE_LETTERS[m.group("s")], m.end()
    if dollar:
        m = lx.SCALE_AFTER_DOLLAR_RE.match(text, pos)
        if m:
            return 1e6 if m.group("s") == "m" else 1e9, m.end()
    for rx, mult in lx.SCALE_WORD_RE:
        m = rx.match(text, pos)
        if m:
            return mult, m.end()
    return 1.0, pos


def _match_unit(text: str, pos: int) -> tuple[str, float, str | None, int] | None:
    for rx, unit, mult, per in lx.UNIT_RES:
        m = rx.match(text, pos)
        if m:
            return unit, mult, per, m.end()
    return None


def _named_period(m: re.Match[str]) -> str:
    return next(name for name, val in m.groupdict().items() if val is not None and name in lx.PERIOD_WORDS)


def _match_per(text: str, pos: int, unit: str) -> tuple[str | None, int]:
    rxs: list[re.Pattern[str]] = [lx.PER_SLASH_RE, lx.PER_WORD_RE, lx.PER_ADVERB_RE]
    if unit == "req":
        rxs.append(lx.PER_WITHIN_RE)
    if unit == "%":
        rxs.append(lx.PER_BARE_RE)
    if unit:
        rxs.append(lx.PER_GAP_RE)
    for rx in rxs:
        m = rx.match(text, pos)
        if m:
            return _named_period(m), m.end()
    m = lx.PER_OCCASION_RE.match(text, pos)
    if m:
        return lx.PER_OCCASION, m.end()
    return None, pos


def _count_per(text: str, pos: int) -> tuple[str, str, int] | None:
    """ "8 phiên trực đêm/tháng" -> ("count:phiên", "month", end): a count per period of a noun the unit
    table does not know. Vietnamese names the head noun first, English last ("night shifts")."""
    m = lx.COUNT_PER_RE.match(text, pos)
    if m is None:
        return None
    words = m.group("noun").lower().split()
    vietnamese = any(not ch.isascii() for ch in m.group("noun"))
    head = words[0] if vietnamese else words[-1]
    if any(w in lx.COUNT_STOPWORDS for w in words):
        return None
    known = _match_unit(" " + head, 0)
    if known is not None and known[3] == len(head) + 1:
        unit = known[0]
    else:
        unit = "count:" + singular(head)
    period = next(name.removeprefix("w_") for name, val in m.groupdict().items() if val is not None and name != "noun")
    return unit, period, m.end()


def _context(text: str, floor: int, start: int, n_words: int) -> str:
    """The last ``n_words`` words before ``start`` in the same sentence."""
    segment = text[floor:start]
    ends = list(lx.SENTENCE_END_RE.finditer(segment))
    if ends:
        segment = segment[ends[-1].end():]
    words = lx.WORD_RE.findall(segment)
    return " ".join(words[-n_words:]) if n_words else ""


def _clock(text: str, start: int) -> tuple[float, int] | None:
    """A time of day at ``start``: "9:00", "8h30", "5 pm", "lúc 8 giờ", "8 giờ sáng"."""
    m = lx.CLOCK_RE.match(text, start) or lx.AMPM_RE.match(text, start)
    if m is None:
        m = lx.GIO_RE.match(text, start)
        if m is None:
            return None
        cued = lx.CLOCK_CUE_BEFORE_RE.search(text[max(0, start - 8):start])
        if not (cued or m.group("ampm")):
            return None
    hour = int(m.group("h"))
    minute = int(m.groupdict().get("m") or 0)
    ampm = (m.groupdict().get("ampm") or "").lower().replace(".", "")
    if ampm in ("pm", "chiều", "tối") and hour < 12:
        hour += 12
    elif ampm == "trưa" and hour < 11:
        hour += 12
    elif ampm == "đêm" and 6 <= hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    return hour + minute / 60.0, m.end()


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Read:
    quantity: Quantity
    bare_int: bool  # no unit, scale, period or separators: a candidate year or small int


@dataclass(frozen=True)
class _Suffix:
    """What follows a number: scale word, unit and period."""

    scale: float
    letter_scale: bool  # "5B", "4.2M": in "tầng 2B" the letter is part of a name
    unit: str
    mult: float
    per: str | None
    end: int


def _suffix(text: str, end: int, currency: str, dollar: bool) -> _Suffix | None:
    """Read "triệu USD/năm", "M", "requests per minute"... after a number; None for codes."""
    scale, pos = _match_scale(text, end, dollar)
    letter_scale = pos - end == 1
    unit, mult, per = currency, 1.0, None
    hit = _match_unit(text, pos)
    if hit is None and pos == end and text[end:end + 1] == "-" and text[end + 1:end + 2].isalpha():
        hit = _match_unit(text, end + 1)  # "25-year", "3-day"
        if hit is None:
            return None  # "4471-A"
    if hit is not None:
        found, found_mult, found_per, found_pos = hit
        # A currency prefix already names the unit; another word after it stays context.
        if not unit or found == unit or found in lx.CURRENCIES:
            if not unit:
                unit, mult, per = found, found_mult, found_per
            pos = found_pos
    if hit is None and not unit and pos == end:
        counted = _count_per(text, end)
        if counted is not None:
            return _Suffix(scale, letter_scale, counted[0], 1.0, counted[1], counted[2])
    if pos == end and text[end:end + 1].isalpha():
        return None  # "4471A", "3G", "2nd"
    if per is None:
        per, pos = _match_per(text, pos, unit)
    return _Suffix(scale, letter_scale, unit, mult, per, pos)


def _read(text: str, m: re.Match[str], convention: Lang, floor: int, n_words: int) -> _Read | None:
    """The claim starting at number ``m``, or None when it is a reference, code or date."""
    start, end = m.span()
    raw = m.group()
    clock = _clock(text, start)
    if clock is not None:
        value, stop = clock
        q = Quantity(value, "time_of_day", None, (start, stop), text[start:stop],
                     _context(text, floor, start, n_words), 1 / 120)
        return _Read(q, False)

    cur = lx.CURRENCY_BEFORE_RE.search(text[max(0, start - 5):start])
    currency = lx.CURRENCY_CODES[(cur.group("code") or cur.group("sym")).lower()] if cur else ""
    q_start = start - len(cur.group()) if cur else start
    sfx = _suffix(text, end, currency, dollar=bool(cur and cur.group("sym")))
    if sfx is None:
        return None
    per = sfx.per
    if per is None:
        pm = lx.PER_BEFORE_RE.search(text[max(0, q_start - 24):q_start])
        per = _named_period(pm) if pm else None  # "mỗi tuần 3 ngày"
    unscaled = sfx.scale == 1.0
    counted = sfx.unit.startswith("count:")
    if (not sfx.unit or counted) and (unscaled or sfx.letter_scale) and _is_labelled(text, start):
        return None  # "Điều 4.2", "section 3", "§ 12", "tầng 2B"
    date_word = lx.DATE_WORD_BEFORE_RE.search(text[max(0, start - 12):start])
    if date_word and (not sfx.unit or counted) and unscaled and raw.isdigit():
        if 1 <= int(raw) <= (31 if date_word.group(1).lower() == "ngày" else 12):
            return None  # "ngày 15 hàng tháng", "tháng 6": a date, not a count
    parsed = _number_value(raw, convention, thousands_bias=(sfx.unit == "VND" and unscaled))
    if parsed is None:
        return None
    number, decimals = parsed
    q = Quantity(
        value=number * sfx.scale * sfx.mult,
        unit=sfx.unit,
        per=per,
        span=(q_start, sfx.end),
        text=text[q_start:sfx.end],
        context=_context(text, floor, q_start, n_words),
        resolution=0.5 * (10.0 ** -decimals) * sfx.scale * sfx.mult,
    )
    return _Read(q, bare_int=not sfx.unit and unscaled and per is None and raw.isdigit())


def _is_year(r: _Read) -> bool:
    v = r.quantity.value
    return r.bare_int and 1900 <= v <= 2099 and v.is_integer()


def _is_small_int(r: _Read) -> bool:
    v = r.quantity.value
    return r.bare_int and 1 <= v <= 9 and v.is_integer()


def parse_quantities(
    text: str,
    lang: Lang | None = None,
    *,
    skip_years: bool = True,
    skip_small_ints: bool = True,
    context_words: int = 8,
) -> list[Quantity]:
    """Numeric claims in ``text``, in reading order.

    ``lang`` ("vi" or "en") breaks ties on separators; unambiguous numbers in the
    same text decide first ("1.500.000" means "." groups thousands here), then the
    hint, then the script. ``skip_years`` drops bare 1900-2099 and ``skip_small_ints``
    bare 1-9, the seed's noise filter; switch them off to measure what the filter
    costs.
    """
    if lang not in (None, "vi", "en"):
        raise ValueError(f"lang must be None, 'vi' or 'en', got {lang!r}")
    if context_words < 0:
        raise ValueError(f"context_words must be >= 0, got {context_words!r}")
    norm = unicodedata.normalize("NFC", text)
    blocked = _blocked_spans(norm)
    cands = [m for m in lx.NUMBER_RE.finditer(norm) if not _overlaps(m.span(), blocked) and not _is_code(norm, m.start())]
    convention = _convention([m.group() for m in cands if not _is_labelled(norm, m.start())], norm, lang)
    out: list[Quantity] = []
    cursor = 0  # end of the last span consumed; numbers inside it are skipped
    floor = 0  # context never reaches back past the previous claim
    for m in cands:
        if m.start() < cursor:
            continue
        r = _read(norm, m, convention, floor, context_words)
        if r is None:
            continue
        cursor = r.quantity.span[1]
        if (skip_years and _is_year(r)) or (skip_small_ints and _is_small_int(r)):
            continue
        out.append(r.quantity)
        floor = cursor
    logger.debug("parsed %d quantities (convention=%s)", len(out), convention)
    return out
