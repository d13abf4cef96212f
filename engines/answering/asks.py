"""What a question asks for, and whether a clause can answer that: a number of days, an amount, a
date, a form code, who, where, yes or no.

A clause that names the right document but not the asked-for kind of fact ("a seniority bonus"
when the question asks how many days) is the commonest wrong quote; knowing the kind lets the
clause choice prefer sentences that carry one. General question words and fact shapes of
Vietnamese and English only: nothing here comes from an evaluation set. Pure functions.
"""

from __future__ import annotations

import re

from engines.text import normalize, singular

ASKS = ("duration", "date", "amount", "count", "code", "who", "where", "procedure", "yesno", "other")

_W = r"(?<!\w)"
_E = r"(?!\w)"


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(_W + "(?:" + "|".join(alternatives) + ")" + _E, re.IGNORECASE)


_UNITS_TIME = r"(?:ngày|tháng|năm|tuần|giờ|phút|days?|months?|years?|weeks?|hours?|minutes?)"
#: Question shapes, most specific first (the first that matches decides).
_QUESTION: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", _rx(r"bao lâu", r"mấy " + _UNITS_TIME, r"bao nhiêu " + _UNITS_TIME, r"trong vòng bao",
                     r"how long", r"how many " + _UNITS_TIME, r"how soon")),
    ("date", _rx(r"khi nào", r"bao giờ", r"ngày nào", r"hạn chót", r"hạn cuối", r"hạn nộp", r"trước ngày nào",
                 r"từ ngày nào", r"đến ngày nào", r"when", r"what date", r"which date", r"deadline", r"by when")),
    ("count", _rx(r"bao nhiêu lần", r"mấy lần", r"how many times", r"how many")),
    ("code", _rx(r"mẫu(?:\s+\w+){0,2}\s+(?:nào|gì)", r"mẫu số", r"mã (?:số )?(?:nào|gì)", r"biểu mẫu", r"mã sản phẩm",
                 r"which form", r"what form", r"form (?:number|code)", r"what code", r"which code")),
    ("who", _rx(r"ai", r"người nào", r"bộ phận nào", r"phòng nào", r"đơn vị nào", r"cấp nào", r"who", r"whom",
                r"which (?:department|team|office|unit|person)")),
    ("where", _rx(r"ở đâu", r"tại đâu", r"nơi nào", r"chỗ nào", r"qua kênh nào", r"where", r"which channel")),
    ("procedure", _rx(r"thế nào", r"như thế nào", r"làm sao", r"ra sao", r"thủ tục", r"quy trình", r"các bước",
                      r"how do", r"how can", r"how to", r"what steps", r"procedure", r"process")),
)
#: A yes/no question: "... có ... không?", "... được không?", "... chưa?", or an English question
#: opening with an auxiliary verb.
_YESNO_VI = re.compile(r"(?iu)(?:(?<!\w)có(?!\w).*(?<!\w)không|được không|phải không|(?<!\w)chưa)\s*[?？]*\s*$")
_YESNO_EN = re.compile(r"(?iu)^\s*(?:is|are|was|were|does|do|did|can|could|may|might|must|should|will|would|has|have)\b")
_AMOUNT_HINT = re.compile(r"(?iu)(?<!\w)(?:bao nhiêu|là bao nhiêu|tối đa|tối thiểu)(?!\w)")

#: A form or product code: "SKU-4471", "HV-02", "05/TD".
CODE_SHAPE = re.compile(r"(?<![\w-])(?:[A-ZĐ]{1,6}-?\d{1,4}[A-Z]?|\d{1,4}/[A-ZĐ]{1,6}(?:-[A-ZĐ]+)?)(?![\w-])")

#: Fact shapes a clause may carry.
#: A number that starts where a number starts: never inside another ("2" of "12", "5" of "1.5"), which also
#: keeps a long run of digits from being tried at every position.
_NUMBER = r"(?<!\d)(?<!\d[.,])\d+(?:[.,]\d+)*"
#: Units a rate is counted per.
_PER_UNIT = (r"(?:giây|phút|giờ|ngày|tuần|tháng|quý|năm|second|minute|hour|day|week|month|quarter|year)" + _E)
#: A rate is an amount too: "500 requests per minute", "2 lần mỗi tháng", "3 ngày/tuần", "40 GB a month". Up
#: to two words between the number and "per", each ended by a space or the slash, so a long word is never
#: split two ways; not a day or weekday named by its number ("ngày 5 mỗi tháng", "thứ 2 mỗi tuần").
_RATE = (r"(?<!ngày )(?<!thứ )(?<!day )" + _NUMBER + r"\s*(?:[^\W\d_]+(?:\s+|(?=/))){0,2}?"
         r"(?:(?<!\w)(?:per|a|an|each|every|mỗi|một)\s+|/\s*)" + _PER_UNIT)
_CLAUSE: dict[str, re.Pattern[str]] = {
    "duration": re.compile(_NUMBER + r"\s*(?:-\s*\d+\s*)?" + _UNITS_TIME + r"(?:\s+làm việc)?" + _E, re.IGNORECASE),
    "date": re.compile(r"(?<!\d)\d{1,2}/\d{1,2}(?:/\d{2,4})?(?!\d)|" + _W + r"ngày\s+\d{1,2}\s+tháng\s+\d{1,2}|"
                       + _W + r"(?:january|february|march|april|may|june|july|august|september|october|november|"
                       r"december)\s+\d{1,2}(?!\d)|(?<!\d)\d{1,2}\s+(?:january|february|march|april|may|june|july|august|"
                       r"september|october|november|december)(?!\w)|\d{4}-\d{2}-\d{2}", re.IGNORECASE),
    "amount": re.compile(_NUMBER + r"\s*(?:%|phần trăm|đồng|đ|vnd|vnđ|triệu|tỷ|nghìn|ngàn|usd|\$|percent)" + _E
                         + r"|\$\s*" + _NUMBER + "|" + _RATE, re.IGNORECASE),
    "count": re.compile(_NUMBER + r"\s*(?:lần|times|lượt|người|hồ sơ|bản|thẻ|sim)" + _E, re.IGNORECASE),
    "code": CODE_SHAPE,
    "who": _rx(r"giám đốc", r"trưởng (?:phòng|bộ phận|ban|khoa|đơn vị)", r"bộ phận", r"phòng", r"ban", r"hội đồng",
               r"cán bộ", r"chuyên viên", r"quản lý", r"người (?:phụ trách|đại diện)", r"manager", r"director",
               r"department", r"officer", r"committee", r"team", r"head of", r"approv\w*", r"phê duyệt", r"ký duyệt"),
    "where": _rx(r"tại", r"ở", r"qua", r"cổng", r"website", r"trang web", r"ứng dụng", r"app", r"email", r"chi nhánh",
                 r"quầy", r"văn phòng", r"trụ sở", r"bộ phận một cửa", r"trực tuyến", r"online", r"portal", r"at", r"via"),
    "procedure": _rx(r"nộp", r"gửi", r"đăng ký", r"điền", r"bước", r"kèm theo", r"submit", r"send", r"register",
                     r"fill", r"step", r"attach"),
    "yesno": _rx(r"được", r"không được", r"phải", r"bắt buộc", r"miễn", r"cho phép", r"không áp dụng", r"áp dụng",
                 r"không còn", r"bãi bỏ", r"allowed", r"not", r"must", r"may", r"eligible", r"exempt", r"applies",
                 r"no longer"),
}


_AMOUNT = _rx(r"bao nhiêu tiền", r"bao nhiêu phần trăm", r"bao nhiêu %", r"mức phí", r"mức (?:hỗ trợ|bồi thường|phạt)",
              r"phí", r"lệ phí", r"giá", r"lãi suất", r"hạn mức", r"số tiền", r"chi phí", r"phụ cấp", r"trợ cấp",
              r"how much", r"fee", r"fees", r"cost", r"price", r"rate", r"limit", r"amount", r"allowance")


def asked_for(question: str) -> str:
    """One of :data:`ASKS`: the kind of fact the question wants. Shapes that name the fact come
    first ("bao lâu", "mẫu nào"), then a yes/no frame ("... có phí không?" wants yes or no and why),
    then words that name an amount."""
    text = normalize(question)
    procedure = None
    for kind, pattern in _QUESTION:
        if pattern.search(text):
            if kind != "procedure":
                return kind
            procedure = kind
    if _YESNO_VI.search(text) or _YESNO_EN.match(text):
        return "yesno"
    if _AMOUNT.search(text) or _AMOUNT_HINT.search(text):
        return "amount"
    return procedure or "other"


def carries(clause: str, kind: str) -> bool:
    """Whether ``clause`` has the shape of a ``kind`` fact (always False for "other")."""
    pattern = _CLAUSE.get(kind)
    return bool(pattern and pattern.search(normalize(clause)))


#: "bao nhiêu phiên", "mấy người", "how many night shifts": the thing whose number is asked.
_COUNTED_VI = re.compile(r"(?iu)(?<!\w)(?:bao nhiêu|mấy)\s+(?P<noun>[^\W\d_]+)")
_COUNTED_EN = re.compile(r"(?iu)(?<!\w)how\s+many\s+(?P<noun>[^\W\d_]+(?:\s+[^\W\d_]+)?)")
#: Words after "bao nhiêu"/"how many" that are not the counted thing ("bao nhiêu lâu", "how many of").
_NOT_COUNTED = frozenset("lâu là thì được có nữa tiền phần of do does did can could are is were will would should "
                         "must may per a an the in at for there they we you i".split())


def counted_noun(question: str) -> str | None:
    """The noun whose number the question asks for, singular and lower-cased; None if it asks none.
    Vietnamese names the counted noun right after "bao nhiêu"/"mấy"; English ends its noun phrase
    with it ("how many night shifts")."""
    text = normalize(question)
    m = _COUNTED_VI.search(text)
    if m:
        noun = m.group("noun").lower()
        return None if noun in _NOT_COUNTED else noun
    m = _COUNTED_EN.search(text)
    if not m:
        return None
    words = [w for w in m.group("noun").lower().split()]
    while words and words[-1] in _NOT_COUNTED:
        words.pop()
    if not words:
        return None
    noun = words[-1]
    return singular(noun)


def states_count_of(clause: str, noun: str) -> bool:
    """Whether ``clause`` states a number of ``noun`` ("không quá 2 phiên trực", "3 night shifts")."""
    pattern = r"(?iu)(?<![\w.,])\d+(?:[.,]\d+)*\s+(?:[^\W\d_]+\s+)?" + re.escape(noun) + r"(?:e?s)?(?!\w)"
    return re.search(pattern, normalize(clause)) is not None


#: Numbers that are not a quantity: a leading clause number ("2.4."), a version ("version 1.2", "v2"), a
#: reference ("khoản 4.2", but not "một khoản 2 triệu", a sum), a year, a date, a document or form code
#: ("03/2023/QĐ-HAH", "BM-01"; not a rate "100/day").
_NOT_QUANTITY = re.compile(
    r"(?iu)^[\s*_#>|]*(?:điều\s+|article\s+|section\s+|mục\s+|khoản\s+)?\d+(?:\.\d+)*[.)](?!\d)"
    r"|(?<!\w)(?:version|phiên bản|v|điều|khoản|mục|article|section|clause)\s*\d+(?:\.\d+)*"
    r"(?!\d|[.,]\d|\s*(?:triệu|tỷ|nghìn|ngàn|đồng|đ|vnd|vnđ|usd|%)(?!\w))"
    r"|(?<![\w/.,-])(?:19|20)\d{2}(?![\w/-]|[.,]\d)"
    r"|" + _CLAUSE["date"].pattern +
    r"|(?<![\w-])(?![\d.,]+/\s*" + _PER_UNIT + r")[\w-]*\d[\w-]*(?:/[\w-]+)+"
    r"|(?<![\w-])(?=[\w-]*[^\W\d_])[\w]*-[\w-]*\d[\w-]*"
    r"|(?<![\w-])[A-ZĐ]+[^\W_]*\d\w*")


def states_quantity(clause: str) -> bool:
    """Whether ``clause`` holds a number that could answer "how much / how many / how long": a digit
    left once clause numbers, versions, years, dates and codes are set aside."""
    return re.search(r"\d", _NOT_QUANTITY.sub(" ", normalize(clause))) is not None
