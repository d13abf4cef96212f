"""How one document names another: by its date, or by its title without the decision around it.

Vietnamese administrative writing cites a document as "Quyết định số 45/QĐ-ABC ngày 10/3/2021 của
Giám đốc ... ban hành Quy chế ...": the number is often one the cited document's own text never
states (its header is not in the corpus), but its issue date and title are in its front matter. An
English policy says "the Travel Policy dated 1 April 2022" or "issued on 5 July 2021"; a rate table is
named by the day it took effect ("Biểu lãi suất áp dụng từ ngày 01/4/2022"). A date alone names
nothing for sure (several documents share a day, a deadline is a date too), so a date names a
document only when the sentence also says most of that document's title. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from engines.text import normalize

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
#: A date as documents write it: "10/3/2021", "10-03-2021", "10.3.2021", "10 tháng 3 năm 2021",
#: "10 March 2021", "March 10, 2021".
_DATE = re.compile(
    r"(?P<d>\d{1,2})\s*[/.-]\s*(?P<m>\d{1,2})\s*[/.-]\s*(?P<y>\d{4})|"
    r"(?P<d2>\d{1,2})\s+tháng\s+(?P<m2>\d{1,2}),?\s+năm\s+(?P<y2>\d{4})|"
    r"(?P<d3>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon3>[A-Za-z]+),?\s+(?P<y3>\d{4})|"
    r"(?P<mon4>[A-Za-z]+)\s+(?P<d4>\d{1,2})(?:st|nd|rd|th)?,\s*(?P<y4>\d{4})",
    re.IGNORECASE,
)
#: Where a document states the day it takes effect ("có hiệu lực (thi hành) (kể) từ ngày ...",
#: "áp dụng từ ngày ...", "effective from ...", "takes effect on ...").
_EFFECTIVE = re.compile(
    r"(?:có\s+hiệu\s+lực(?:\s+thi\s+hành)?|áp\s+dụng|effective|takes?\s+effect|in\s+force)"
    r"[^.;\n]{0,40}?(?:từ|kể\s+từ|from|on|as\s+of)\s+(?:ngày\s+)?$",
    re.IGNORECASE,
)
#: Words that make a title a decision *about* the document rather than the document's own name:
#: "Quyết định ban hành Quy chế X" is cited as "Quy chế X".
_DECISION_FRAME = re.compile(
    r"^\s*(?:quyết\s+định|decision)\s*(?:ban\s+hành(?:\s+kèm\s+theo)?|về\s+việc\s+ban\s+hành|về\s+việc|về|on|"
    r"to\s+issue|issuing)?\s*",
    re.IGNORECASE,
)
#: Title words that name no document in particular.
_GENERIC = frozenset("quyết định ban hành về việc của và các cho đối với the of and for on to a an decision".split())
#: Of a title's own words, the share a sentence must say for a date in it to name that document.
MIN_TITLE_SHARE = 0.6


def iso_date(match: re.Match) -> str | None:
    """The ISO date of a :data:`_DATE` match; None when it is not a calendar date."""
    g = match.groupdict()
    day, month, year = g["d"] or g["d2"], g["m"] or g["m2"], g["y"] or g["y2"]
    if not day:
        name = (g["mon3"] or g["mon4"] or "").casefold()
        if name not in _MONTHS and name[:3] not in {m[:3] for m in _MONTHS}:
            return None
        day, year = g["d3"] or g["d4"], g["y3"] or g["y4"]
        month = str(next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name[:3])))
    d, m = int(day), int(month)
    if not (1 <= d <= 31 and 1 <= m <= 12):
        return None
    return f"{int(year):04d}-{m:02d}-{d:02d}"


def dates_in(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, ISO date) of every date ``text`` writes."""
    for match in _DATE.finditer(text):
        iso = iso_date(match)
        if iso:
            yield match.start(), match.end(), iso


def effective_dates(text: str) -> frozenset[str]:
    """The days a document says it takes effect on."""
    folded = normalize(text)
    return frozenset(iso for start, _, iso in dates_in(folded) if _EFFECTIVE.search(folded[max(0, start - 80):start]))


def cited_title(title: str) -> str:
    """The title as other documents cite it: "Quyết định ban hành Quy chế đào tạo" -> "quy chế đào tạo"."""
    key = " ".join(re.findall(r"\w+(?:[./-]\w+)*", normalize(title).casefold()))
    return _DECISION_FRAME.sub("", key).strip()


def title_words(title: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"\w+", normalize(title).casefold()) if w not in _GENERIC and not w.isdigit())


def title_share(sentence: str, title: str) -> float:
    """How much of ``title``'s own words ``sentence`` says."""
    words = title_words(title)
    said = set(re.findall(r"\w+", normalize(sentence).casefold()))
    return len(words & said) / len(words) if words else 0.0


#: "Quyết định số 18/2023/QĐ-ABC ngày ...", "Circular No. 12/2021 dated ...": a number, then its date.
_NUMBER_THEN_DATE = re.compile(r"(?:\bsố|\bno\.?)\s*(?P<number>[^\s,]*\d[^\s,]*)\s*,?\s*(?:ngày|dated|of|issued\s+on)\s+$",
                               re.IGNORECASE)


def dated_references(sentence: str, candidates: Mapping[str, Sequence[str]], titles: Mapping[str, str],
                     exclude: str, issued: Mapping[str, Sequence[str]] | None = None,
                     numbers: Mapping[str, frozenset[str]] | None = None) -> Iterable[tuple[int, int, str]]:
    """(start, end, doc_id) for each date in ``sentence`` that names a document.

    ``candidates`` maps an ISO date to the documents issued or taking effect that day; of those, the
    one whose title the sentence says most of, if it says at least :data:`MIN_TITLE_SHARE`. A number
    and its date ("số 18/2023/QĐ-ABC ngày 16/01/2023") name the one document ``issued`` that day
    without its title, unless its known ``numbers`` (casefolded) say it is another."""
    for start, end, iso in dates_in(sentence):
        shares = [(title_share(sentence, titles[doc]), doc) for doc in candidates.get(iso, ()) if doc != exclude]
        best = max(shares, default=(0.0, ""))
        if best[0] >= MIN_TITLE_SHARE and sum(1 for s, _ in shares if s == best[0]) == 1:
            yield start, end, best[1]
            continue
        cited = _NUMBER_THEN_DATE.search(sentence[:start])
        that_day = [doc for doc in (issued or {}).get(iso, ()) if doc != exclude]
        if cited and len(that_day) == 1:
            known = (numbers or {}).get(that_day[0], frozenset())
            if not known or cited.group("number").casefold().rstrip(".") in known:
                yield start, end, that_day[0]
