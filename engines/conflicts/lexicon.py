"""What the number parser recognises: number tokens, spans that are never quantities (dates,
phones, versions, codes), currencies, scale words, units with their canonical form, periods and
clock times, in Vietnamese and English. Compiled once at import; no I/O."""

from __future__ import annotations

import re

# A number token: digits with optional "." / "," groups. Not glued to a preceding
# letter or digit ("v1.2", "FY2023", "A1" and the "0" of "v2.0" never start a token).
NUMBER_RE = re.compile(r"(?<!\w)(?<!\w[.,])\d+(?:[.,]\d+)*")

WORD_END = r"(?!\w)"  # word end; Python's \w is Unicode-aware, so it covers Vietnamese

# Spans that are never quantities: dates, phones, versions, document codes.
BLOCKED_RES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"(?<!\w)\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}(?![\w/.-]?\d)",  # 15/11/2023, 15.11.2023
        r"(?<!\w)\d{4}[/.-]\d{1,2}[/.-]\d{1,2}(?!\d)",  # 2023-11-15
        r"(?<!\w)\d{1,2}/\d{4}(?!\d)",  # 11/2023
        r"(?<!\w)\d+(?:/(?-i:[0-9A-ZĐ])[\w-]*)+",  # 05/TD, 145/2020/NĐ-CP, 24/7, 3/4; not 100/phút
        r"ngày\s+\d{1,2}\s+tháng\s+\d{1,2}(?:\s*(?:năm|,)\s*\d{4})?",
        r"tháng\s+\d{1,2}\s*(?:năm|/|-|,)\s*\d{4}",
        r"(?<!\w)(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
        r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
        r"\.?\s+\d{1,4}(?:st|nd|rd|th)?(?:,?\s+\d{4})?" + WORD_END,
        r"(?<!\w)\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?"
        r"|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
        r"|nov(?:ember)?|dec(?:ember)?)" + WORD_END + r"(?:,?\s+\d{4})?",
        r"\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}(?!\d)",  # +84 912 345 678
        r"\(?(?<!\w)0\d{1,3}\)?(?:[\s.-]?\d{3,4}){2}(?!\d)",  # 0912 345 678, (028) 3822 1234
        r"(?<!\w)(?:1[\s.-])?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\d)",  # 555-123-4567
        r"(?:điện\s+thoại|sđt|đt|hotline|tel|phone|fax|di\s+động|mobile)\s*[:.]?\s*\+?[\d().\s-]{6,}\d",
        r"(?<!\w)(?:version|ver\.?|phiên\s+bản|bản|release|build|rev\.?|revision)\s+\d+(?:\.\d+)*",
        r"(?<!\w)(?:iso|tcvn|iec|rfc|pep)\s*\d+(?:[.:-]\d+)*",
    )
)

# A label right before the number makes it a reference, not a claim, unless a unit
# follows: "Điều 4.2" is a reference, "khoản 3 triệu đồng" (an amount) is not.
LABEL_BEFORE_RE = re.compile(
    r"(?<!\w)(?:điều|khoản|điểm|mục|tiểu\s+mục|chương|phần|phụ\s+lục|bước|trang|bảng"
    r"|hình|biểu\s+mẫu|mẫu\s+số|tầng|quý|số\s+hiệu|section|sec\.|clause|article"
    r"|art\.|chapter|part|appendix|annex|paragraph|para\.|item|step|page|p\.|pp\.|table"
    r"|figure|fig\.|line|rule|no\.|room|floor|level|tier|grade|quarter|q)\s*$"
    r"|[§#№]\s*$",
    re.IGNORECASE,
)
# "SKU-4471", "mã_12": a letter glued to the number by a hyphen or underscore.
CODE_BEFORE_RE = re.compile(r"[^\W\d_][-_]$")
DATE_WORD_BEFORE_RE = re.compile(r"(?<!\w)(ngày|tháng)\s+$", re.IGNORECASE)
SENTENCE_END_RE = re.compile(r"[.!?;](?=\s)|\n")
WORD_RE = re.compile(r"\w+(?:[.,'’-]\w+)*")

CURRENCY_BEFORE_RE = re.compile(
    r"(?:(?<!\w)(?P<code>USD|VND|VNĐ|EUR)\s?|(?P<sym>US\$|\$|€|₫))$", re.IGNORECASE
)
CURRENCIES = frozenset({"VND", "USD", "EUR"})
CURRENCY_CODES = {"usd": "USD", "us$": "USD", "$": "USD", "vnd": "VND", "vnđ": "VND",
                   "₫": "VND", "eur": "EUR", "€": "EUR"}

# Scale words: spaced or glued, case-insensitive.
SCALE_WORDS = (
    (r"(?:nghìn|ngàn)\s+t[ỷỉ]", 1e12),
    (r"t[ỷỉ]", 1e9),
    (r"triệu", 1e6),
    (r"nghìn|ngàn", 1e3),
    (r"trillion", 1e12),
    (r"billion|bn", 1e9),
    (r"million|mln|mn", 1e6),
    (r"thousand", 1e3),
    (r"tr", 1e6),
)
SCALE_WORD_RE = tuple((re.compile(r"\s*(?:" + p + ")" + WORD_END, re.IGNORECASE), m) for p, m in SCALE_WORDS)
# One-letter scales: glued and case-sensitive ("$4.2M", "5k"), never "4 M".
SCALE_LETTER_RE = re.compile(r"(?P<s>[kKMB])(?![A-Za-z\d])")
SCALE_LETTERS = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
SCALE_AFTER_DOLLAR_RE = re.compile(r"(?P<s>[mb])(?![A-Za-z\d])")

# Units: (pattern, canonical unit, multiplier, implied per, glued only).
UNIT_TABLE: tuple[tuple[str, str, float, str | None, bool], ...] = (
    (r"đồng|vnđ|vnd|₫", "VND", 1.0, None, False),
    (r"đ", "VND", 1.0, None, False),
    (r"usd|us\$|đô\s+la(?:\s+mỹ)?|dollars?", "USD", 1.0, None, False),
    (r"eur|euros?|€", "EUR", 1.0, None, False),
    (r"%|phần\s+trăm|percent|per\s+cent", "%", 1.0, None, False),
    (r"rpm", "req", 1.0, "minute", False),
    (r"rps", "req", 1.0, "second", False),
    (r"(?:api\s+)?requests?|reqs?|yêu\s+cầu|lượt\s+gọi|lệnh\s+gọi|lượt\s+truy\s+vấn"
     r"|truy\s+vấn|(?:api\s+)?calls?|queries|query", "req", 1.0, None, False),
    (r"ngày\s+làm\s+việc|(?:business|working|calendar)\s+days?|ngày|days?", "day", 1.0, None, False),
    (r"tuần|weeks?", "week", 1.0, None, False),
    (r"tháng|months?", "month", 1.0, None, False),
    (r"quý|quarters?", "quarter", 1.0, None, False),
    (r"năm|years?|yrs?", "year_duration", 1.0, None, False),
    (r"giờ|tiếng|hours?|hrs?", "hour", 1.0, None, False),
    (r"h", "hour", 1.0, None, True),
    (r"phút|minutes?|mins?", "minute", 1.0, None, False),
    (r"giây|seconds?|secs?", "second", 1.0, None, False),
    (r"người\s+dùng|users?", "user", 1.0, None, False),
    (r"người|nhân\s+viên|people|persons?|employees?", "person", 1.0, None, False),
    (r"lần|lượt|times", "times", 1.0, None, False),
    (r"học\s+kỳ|semesters?", "semester", 1.0, None, False),
    (r"ca(?:\s+trực)?|shifts?", "shift", 1.0, None, False),
    (r"m2|m²", "m2", 1.0, None, False),
    (r"m3|m³", "m3", 1.0, None, False),
    (r"km", "km", 1.0, None, False),
    (r"kg", "kg", 1.0, None, False),
    (r"kb", "byte", 1e3, None, False),
    (r"mb", "byte", 1e6, None, False),
    (r"gb", "byte", 1e9, None, False),
    (r"tb", "byte", 1e12, None, False),
)
UNIT_RES = tuple(
    (re.compile(("" if glued else r"\s*") + "(?:" + p + ")" + WORD_END, re.IGNORECASE), unit, mult, per)
    for p, unit, mult, per, glued in UNIT_TABLE
)

PERIOD_WORDS = {
    "second": r"giây|seconds?",
    "minute": r"phút|minutes?",
    "hour": r"giờ|tiếng|hours?",
    "day": r"ngày|days?",
    "week": r"tuần|weeks?",
    "month": r"tháng|months?",
    "quarter": r"quý|quarters?",
    "year": r"năm|years?|annum",
}
PERIOD_SHORT = {
    "second": r"s|sec", "minute": r"min", "hour": r"h|hr", "day": r"d",
    "week": r"wk", "month": r"mo", "quarter": r"qtr", "year": r"yr",
}


def period_group(table: dict[str, str]) -> str:
    return "|".join(f"(?P<{name}>{pattern})" for name, pattern in table.items())


WORD_PERIODS = period_group(PERIOD_WORDS)
SLASH_PERIODS = "|".join(
    f"(?P<{name}>{PERIOD_WORDS[name]}|{PERIOD_SHORT[name]})" for name in PERIOD_WORDS
)
PER_SLASH_RE = re.compile(r"\s*/\s*(?:1\s+|một\s+)?(?:" + SLASH_PERIODS + ")" + WORD_END, re.IGNORECASE)
PER_WORD_RE = re.compile(
    r"\s+(?:per|a|an|each|every|mỗi|một|trên)\s+(?:" + WORD_PERIODS + ")" + WORD_END, re.IGNORECASE
)
PER_WITHIN_RE = re.compile(
    r"\s+(?:trong|in|within)\s+(?:1|một|one|a|an)\s+(?:" + WORD_PERIODS + ")" + WORD_END, re.IGNORECASE
)
PER_GAP_RE = re.compile(
    r"(?:\s+[^\W\d_]+){1,3}?\s+(?:per|each|every|mỗi|hàng|hằng)\s+(?:" + WORD_PERIODS + ")" + WORD_END,
    re.IGNORECASE,
)
PER_ADVERB_RE = re.compile(
    r"\s+(?:(?P<year>annually|yearly|per\s+annum|p\.a\.|(?:hàng|hằng)\s+năm)"
    r"|(?P<month>monthly|(?:hàng|hằng)\s+tháng)|(?P<week>weekly|(?:hàng|hằng)\s+tuần)"
    r"|(?P<day>daily|(?:hàng|hằng)\s+ngày)|(?P<hour>hourly|(?:hàng|hằng)\s+giờ))(?!\w)",
    re.IGNORECASE,
)
# "lãi suất 8,5% năm": a bare period word after a percentage (not "8,5% năm 2023").
PER_BARE_RE = re.compile(r"\s+(?:(?P<year>năm)|(?P<month>tháng))(?!\w)(?!\s*\d)", re.IGNORECASE)
#: "2.000.000 đồng/lần", "USD 50 per visit": a value per occasion, not per unit of time, so never a
#: period change beside "5.000.000 đồng/ngày".
PER_OCCASION = "occasion"
PER_OCCASION_RE = re.compile(
    r"(?:\s*/\s*|\s+(?:per|each|mỗi|một)\s+)(?:lần|lượt|visits?|claims?|times?|transactions?|trips?)" + WORD_END,
    re.IGNORECASE,
)
#: "8 phiên trực đêm/tháng", "4 sessions a week": a count of things per period whose noun the unit
#: table does not know. The noun is the unit, so a cap whose period changes with it is still one claim.
COUNT_PER_RE = re.compile(
    r"\s+(?P<noun>[^\W\d_]+(?:\s+[^\W\d_]+){0,2}?)"
    r"(?:\s*/\s*(?:1\s+|một\s+)?(?:" + SLASH_PERIODS + ")"
    r"|\s+(?:per|each|every|mỗi|một|trên|hàng|hằng)\s+(?:" + WORD_PERIODS.replace("?P<", "?P<w_") + "))"
    + WORD_END,
    re.IGNORECASE,
)
#: Words that join or bound numbers; never the counted noun ("2 or more times per week").
COUNT_STOPWORDS = frozenset(
    "và hoặc hay đến tới trở lên hơn trên dưới khoảng gần trong or and to more than up of at least about in within "
    "during for".split()
)
PER_BEFORE_RE = re.compile(
    r"(?<!\w)(?:mỗi|hàng|hằng|per|each|every)\s+(?:" + WORD_PERIODS + r")\s*[:,]?\s*$",
    re.IGNORECASE,
)

CLOCK_RE = re.compile(
    r"(?P<h>[01]?\d|2[0-3])(?::|h)(?P<m>[0-5]\d)(?!\d)"
    r"(?:\s*(?P<ampm>a\.m\.|p\.m\.|am|pm|sáng|chiều|tối|trưa|đêm)(?!\w))?",
    re.IGNORECASE,
)
AMPM_RE = re.compile(r"(?P<h>1[0-2]|0?[1-9])\s*(?P<ampm>a\.m\.|p\.m\.|am|pm)(?!\w)", re.IGNORECASE)
GIO_RE = re.compile(
    r"(?P<h>[01]?\d|2[0-4])\s*(?:giờ|h)(?:\s*(?P<m>[0-5]?\d)(?:\s*phút)?)?"
    r"(?:\s+(?P<ampm>sáng|chiều|tối|trưa|đêm))?(?!\w)",
    re.IGNORECASE,
)
CLOCK_CUE_BEFORE_RE = re.compile(r"(?<!\w)(?:lúc|từ|đến|tới|at|until|till)\s+$", re.IGNORECASE)

#: A reference to a document by its number ("ban hành kèm theo Quyết định số 12/2024/QĐ-X ngày
#: 01/02/2024", "Decision No. 7/2023"). Administrative documents cite their base document in nearly
#: every sentence, so two documents citing one base share these words whatever each says.
CITATION_RE = re.compile(
    r"(?<!\w)(?:(?:được\s+)?ban\s+hành\s+kèm\s+theo\s+|issued\s+(?:with|under)\s+)?"
    r"(?:quyết\s+định|nghị\s+định|thông\s+tư|công\s+văn|hướng\s+dẫn|thông\s+báo|quy\s+chế|quy\s+định|quy\s+trình"
    r"|decisions?|decrees?|circulars?|guides?|guidelines?|notices?|regulations?|procedures?|policy|policies)\s+"
    r"(?:(?:số|no\.?|number)\s*[\w./-]*\d[\w./-]*|\d+/\d{4}/[A-ZĐ][\w.-]*)"
    r"(?:\s+(?:ngày|dated|of)\s+\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4})?",
    re.IGNORECASE,
)
#: The preamble of a decision: the documents it is based on, not a rule it states.
PREAMBLE_RE = re.compile(
    r"^\W*(?:căn\s+cứ\s+(?:vào\s+)?(?:hiến\s+pháp|bộ\s+luật|luật|nghị\s+định|nghị\s+quyết|quyết\s+định|thông\s+tư"
    r"|công\s+văn|điều\s+lệ|quy\s+chế|quy\s+định|hướng\s+dẫn|thông\s+báo|chức\s+năng)|xét\s+đề\s+nghị"
    r"|pursuant\s+to|having\s+regard\s+to)(?!\w)", re.IGNORECASE)
