"""Subject markers: what a number in a passage is *about*, so two values are compared only when
they concern the same subject (rule 4 of ``engines.conflicts.graph``).

Marker kinds: capitalised names that do not start a sentence ("Illinois", "Acme"); codes
("SKU-4471", a lone "A"/"B", all-caps words that are not common acronyms); fiscal periods
("FY2023", "Q4", "quý 4"); and category terms grouped by dimension (staff type, customer type,
domestic/international, max/min). Pure functions over strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engines.text import FUNCTION_WORDS, detect_language

_SENT_END_RE = re.compile(r"[.!?;][\"'”’)\]]*(?=\s)|\n")  # a closing quote or bracket may follow the stop
_TOKEN_RE = re.compile(r"\w+(?:[.\-]\w+)*")
_INITIAL_CHARS = ".!?:;\n\"'“‘«•*-–—"
_TABLE_RULE = re.compile(r"^\s*\|[\s:|-]*$")  # "|---|:---:|"
_VERSION_RE = re.compile(r"[vV]\d+(?:\.\d+)*")
_PERIOD_TOKEN_RE = re.compile(r"FY\d{2,4}|Q[1-4]|H[12]")
_PERIOD_MARK_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\w)FY\s?'?(\d{4}|\d{2})(?!\w)"), "fy"),
    (re.compile(r"(?:fiscal(?:\s+year)?|năm\s+tài\s+(?:chính|khóa|khoá)|tài\s+kh[óo]a)\s+(\d{4})(?!\w)",
                re.IGNORECASE), "fy"),
    (re.compile(r"(?<!\w)Q([1-4])(?!\w)"), "q"),
    (re.compile(r"(?<!\w)(?:quý|quarter)\s+([1-4]|IV|I{1,3})(?!\w)", re.IGNORECASE), "q"),
    (re.compile(r"(?<!\w)H([12])(?!\w)"), "h"),
)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}

# dimension -> canonical value -> synonyms (vi + en). Only terms that name a
# subcategory; a difference inside one dimension means a different quantity.
_CATEGORIES: dict[str, dict[str, tuple[str, ...]]] = {
    "staff": {
        "probation": ("thử việc", "probation", "probationary"),
        "seasonal": ("thời vụ", "seasonal"),
        "official": ("chính thức", "permanent", "regular"),
        "part_time": ("bán thời gian", "part-time", "part time"),
        "full_time": ("toàn thời gian", "full-time", "full time"),
        "intern": ("thực tập sinh", "thực tập", "intern", "interns", "internship"),
        "contractor": ("cộng tác viên", "contractor", "contractors", "freelancer", "freelancers"),
    },
    "customer": {
        "individual": ("cá nhân", "individual", "individuals", "personal"),
        "business": ("doanh nghiệp", "corporate", "business customers", "business clients"),
    },
    "scope": {
        "domestic": ("trong nước", "nội địa", "domestic"),
        "international": ("quốc tế", "nước ngoài", "international", "overseas", "foreign"),
    },
    "bound": {
        "max": ("tối đa", "maximum", "max", "up to", "at most", "không quá"),
        "min": ("tối thiểu", "minimum", "at least", "ít nhất"),  # not "min": minutes
    },
}
_CATEGORY_RES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (dim, value, re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in syns) + r")(?![\w-])",
        re.IGNORECASE,
    ))
    for dim, values in _CATEGORIES.items()
    for value, syns in values.items()
)

_ACRONYMS = frozenset(
    "USD VND VNĐ EUR API HR FY CEO CFO CTO COO ID PDF URL HTTP HTTPS REST JSON SLA KPI VAT "
    "GDP IT AI OK AM PM GB MB KB TB RPM RPS FAQ NOTE TNHH CP JSC LLC INC LTD CORP".split()
)
_NAME_STOP = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday tháng thứ chủ nhật ngày năm quý i".split()
)


@dataclass(frozen=True)
class Profile:
    """What other passages check their subject markers against."""

    lower_tokens: frozenset[str]
    cased_tokens: frozenset[str]
    periods: frozenset[str]
    categories: frozenset[tuple[str, str]]


def periods(text: str) -> set[str]:
    out = set()
    for rx, prefix in _PERIOD_MARK_RES:
        for m in rx.finditer(text):
            v = m.group(1).lower()
            v = _ROMAN.get(v, v)
            if prefix == "fy" and len(v) == 2:
                v = "20" + v
            out.add(prefix + v)
    return out


def categories(text: str) -> set[tuple[str, str]]:
    return {(dim, value) for dim, value, rx in _CATEGORY_RES if rx.search(text)}


def profile(text: str) -> Profile:
    tokens = _TOKEN_RE.findall(text)
    return Profile(
        lower_tokens=frozenset(t.lower() for t in tokens),
        cased_tokens=frozenset(tokens),
        periods=frozenset(periods(text)),
        categories=frozenset(categories(text)),
    )


def markers(segment: str) -> set[tuple[str, str]]:
    """Subject markers in ``segment``: (kind, key) with kind in name/code/period/category:*."""
    out: set[tuple[str, str]] = {("period", p) for p in periods(segment)}
    out |= {(f"category:{dim}", value) for dim, value in categories(segment)}
    for m in _TOKEN_RE.finditer(segment):
        tok = m.group()
        before = segment[:m.start()].rstrip()
        initial = not before or before[-1] in _INITIAL_CHARS
        has_digit = any(c.isdigit() for c in tok)
        has_alpha = any(c.isalpha() for c in tok)
        if _VERSION_RE.fullmatch(tok) or _PERIOD_TOKEN_RE.fullmatch(tok):
            continue  # versions are the temporal signal, periods are handled above
        if has_digit and has_alpha:
            out.add(("code", tok))
        elif tok.isalpha() and tok.isupper():
            if (len(tok) == 1 and not initial and tok != "I") or (len(tok) > 1 and tok not in _ACRONYMS):
                out.add(("code", tok))
        elif has_alpha and tok[0].isupper() and not initial and tok.lower() not in _NAME_STOP:
            out.add(("name", tok.lower()))
    return out


def present(marker: tuple[str, str], other: Profile) -> bool:
    kind, key = marker
    if kind == "name":
        return key in other.lower_tokens
    if kind == "code":
        return key in other.cased_tokens
    if kind == "period":
        return key in other.periods
    return (kind.removeprefix("category:"), key) in other.categories


def sentence_prefix(text: str, start: int) -> str:
    ends = list(_SENT_END_RE.finditer(text, 0, start))
    return text[ends[-1].end() if ends else 0:start]


def claim_sentence(text: str, start: int, end: int) -> str:
    """The sentence (or table row, or ``;``-separated item) holding ``text[start:end]``: one claim."""
    ends = list(_SENT_END_RE.finditer(text, 0, start))
    following = _SENT_END_RE.search(text, end)
    return text[ends[-1].end() if ends else 0:following.start() if following else len(text)]


def column_header(text: str, start: int) -> str:
    """The header of the table column holding ``text[start]`` ("" outside a Markdown table, or when
    the passage holds no header above the row): in "| Đăng ký thường trú | 25.000 đồng/lần |" the
    value's claim is named by its row *and* its column ("Nộp trực tiếp")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    if not line.lstrip().startswith("|"):
        return ""
    column = text.count("|", line_start, start)
    rows = text[:line_start].split("\n")[:-1]
    header = ""
    for row in reversed(rows):  # the table's first line: the contiguous "|" lines above this one
        if not row.lstrip().startswith("|"):
            break
        header = row
    if not header or _TABLE_RULE.match(header):
        return ""
    cells = header.strip().split("|")
    return cells[column].strip() if 0 < column < len(cells) else ""


def claim_words(sentence: str) -> frozenset[str]:
    """What a claim is about, its values masked: content words without the numbers."""
    return frozenset(w for w in content_words(sentence) if not any(c.isdigit() for c in w))


def claim_terms(sentence: str) -> frozenset[tuple[str, ...]]:
    """The words of a sentence, numbers left out, as comparable terms: English words one by one,
    Vietnamese syllables in adjacent pairs, since Vietnamese names things in syllable pairs ("sinh
    nhật", "trả trước"): one shared syllable says little, a shared pair a lot."""
    words = [w for w in (t.lower() for t in _TOKEN_RE.findall(sentence))
             if len(w) >= 2 and any(c.isalpha() for c in w) and not any(c.isdigit() for c in w)
             and w not in FUNCTION_WORDS]
    if detect_language(sentence) == "vi":
        return frozenset(zip(words, words[1:]))
    return frozenset((w,) for w in words)


def sentences(text: str) -> list[str]:
    """Sentences, table rows and ``;`` items: the units a claim is stated in."""
    return [text[a:b] for a, b in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`sentences` are in ``text`` (each with its closing stop)."""
    spans, start = [], 0
    for m in _SENT_END_RE.finditer(text):
        if text[start:m.end()].strip():
            spans.append((start, m.end()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def subjects_differ(
    markers_a: set[tuple[str, str]], prof_a: Profile,
    markers_b: set[tuple[str, str]], prof_b: Profile,
) -> bool:
    """True when each side names something of one kind the other never mentions."""
    only_a = {kind for kind, key in markers_a if not present((kind, key), prof_b)}
    only_b = {kind for kind, key in markers_b if not present((kind, key), prof_a)}
    return bool(only_a & only_b)


def content_words(context: str) -> set[str]:
    return {
        t for t in (w.lower() for w in _TOKEN_RE.findall(context))
        if len(t) >= 2 and any(c.isalpha() for c in t) and t not in FUNCTION_WORDS
    }
