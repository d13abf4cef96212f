"""A passage cut into the clauses a quote is made of: sentences with their number, heading and list lead-in,
without the document's frame (its number and date line, legal bases, issuer, the act it was issued under),
table rules, section titles in bold and repeats.

Pure functions; ``engines.answering.extract`` scores and quotes what they give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engines.text import normalize

#: Sentence ends inside a line: ". " followed by an upper-case letter or a digit (Vietnamese
#: capitals included). Decimal commas/points ("8,5%", "4.2") never have a space after them.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-ZĐÀ-ỸÂĂÊÔƠƯ0-9\"“(])")
_HEADING = re.compile(r"^\s*#+\s*")
#: A line in bold and nothing else ("**Điều 4. Thời hạn bảo hành**", "__Scope:__"): a section title in documents
#: converted from word processors, which mark sections in bold instead of with "#". A chunk may cut
#: one in two, so one end's markers suffice ("Phạm vi áp dụng**" opens a chunk).
_BOLD_LINE = re.compile(r"^(?:\*\*|__)?(?P<inner>[^*_]+?)(?:\*\*|__)\s*:?\s*$|^(?:\*\*|__)(?P<head>[^*_]+?)\s*:?\s*$")
#: At most this many words in a bold line that is a title (longer ones are a rule set in bold).
_MAX_TITLE_WORDS = 12
#: A title's own number ("Điều 5.", "Chương II.", "Section 3", "4.2."), which is no value.
#: Words that name a document's divisions before their number ("Điều 4", "khoản 3.1", "Section 5", "Annex 2").
SECTION_WORDS = r"(?:điều|chương|mục|phần|khoản|phụ\s+lục|article|section|chapter|part|annex|clause)"
_SECTION_NUMBER = re.compile(rf"(?iu)^(?:{SECTION_WORDS}\s+)?[\dIVXLC]+(?:\.\d+)*[.):]?\s*")
_BULLET = re.compile(r"^\s*(?:[-*•+]\s+)")
#: "2.1. " / "3) " / "(a) " at the start of a line: kept with the clause, never a sentence end.
CLAUSE_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*[.)]|\([a-zđ0-9]\))\s+", re.IGNORECASE)
MIN_CLAUSE_CHARS = 20
#: A shorter line is a clause when it gives a label a quantity, a number with its unit ("Pin: 12 tháng;", "Ô tô:
#: 50.000 đ"); a bare number after a label is an identifier ("Mã cửa hàng: 0415."), not a rule.
LABELLED_VALUE = re.compile(r"^[^\W\d_][^:：]{1,40}[:：]\s*\d[\d.,]*\s*[^\W\d_]")
#: Lines of an administrative document's frame that state no rule: its number and place-date line
#: ("Số: 12/2025/QĐ-X — Hà Nội, ngày ..."), the legal bases and the proposal it answers ("Căn cứ ...",
#: "Xét đề nghị ..."), the salutation and distribution list ("Kính gửi: ...", "Nơi nhận: ..."). Quoted, they take the place of a clause.
_FRAME_LINE = re.compile(
    r"^\W*(?:(?:số|no\.?)\s*:?\s*\d+/\d{4}/[A-ZĐ]|(?:căn\s+cứ|pursuant\s+to)\s+(?:vào\s+|the\s+)?(?:hiến\s+pháp|bộ\s+luật"
    r"|luật|nghị\s+định|nghị\s+quyết|quyết\s+định|thông\s+tư|công\s+văn|điều\s+lệ|quy\s+chế|chức\s+năng|law|decree"
    r"|decision|circular)|xét\s+đề\s+nghị\b|nơi\s+nhận\s*:|kính\s+gửi\s*:|dear\b[^.]*,$)",
    re.IGNORECASE,
)
#: A lead-in that announces what follows ("..., Giám đốc thông báo:", "... điều chỉnh Điều 4 như sau:", "... as
#: follows:"): the rule is in the lines after it. A lead-in that states a fact before its list ("lao động nam
#: được nghỉ:", "đến hết ngày 15/11/2024 đối với:") is not one.
_LEAD_IN = re.compile(r"(?iu)(?<!\w)(?:thông\s+báo|quyết\s+định|như\s+sau|sau\s+đây|dưới\s+đây|as\s+follows|the\s+following|"
                      r"announces?|decides?)\s*[:：]\s*$")
#: At most this many words in a line typed in capitals that is a frame (an authority, "QUYẾT ĐỊNH:"), not a rule.
_MAX_FRAME_CAPITALS_WORDS = 10
#: A unit of an organisation, named head first in Vietnamese ("Phòng Vé", "Ban Thương mại") and head last in
#: English ("Customer Care Department").
_UNIT_VI = r"(?:Phòng|Ban|Khối|Trung\s+tâm|Văn\s+phòng|Bộ\s+phận|Sở)"
_UNIT_EN = r"(?:Department|Office|Division|Cent(?:re|er)|Unit|Team|Board)"
#: Lines that name who issued a document, and state no rule: "Phòng Vé – Công ty CP Vận tải Phương Lâm.",
#: "Customer Care Department – Bach Thao Pharmacy.", "Logistics Division, X, 3 March 2025.". Scored with the
#: title, such a line matches any question that names the organisation, and was quoted in place of the rule.
#: What follows the unit must open with a capital (checked with ``str.isupper``: an organisation's name).
_ISSUER_LINE = re.compile(
    rf"^\W*(?:{_UNIT_VI}\s[^\d.;:!?,–—]{{1,60}}|(?:[^\W\d_][\w&'’]*\s+){{0,5}}{_UNIT_EN})\s*[–—,-]\s*"
    r"(?P<org>[^\W\d_][^\d.;:!?]{1,70}?)"
    r"(?:,\s*(?:ngày\s+)?(?:\d{1,2}/\d{1,2}/\d{4}|\d{1,2}\s+[^\W\d_]+\s+\d{4}))?\.?\W*$"
)
#: A reference line: under which act the document was issued ("Ban hành kèm theo Quyết định số 15/2023/QĐ-X ngày
#: 01/04/2023 của Giám đốc …", "Thông báo số 02/TB-X ngày 02/01/2025 của …", "Issued with Decision No. 4/2024
#: dated 1 March 2024"), the whole line and nothing more: one that goes on to say from when it applies, what it
#: replaces or any rule is a clause.
_ACT_REFERENCE = (r"(?:quyết\s+định|thông\s+báo|công\s+văn|decision|decree|notice)\s+(?:số|no\.?)\s*:?\s*\S*\d\S*"
                  r"(?:\s+(?:ngày|dated|of)\s+(?:\d{1,2}/\d{1,2}/\d{4}|\d{1,2}\s+[^\W\d_]+\s+\d{4}))?"
                  r"(?:\s*,?\s*(?:của|by)\s+[^\d.;:!?]{2,120}?)?")
_ACT_LINE = re.compile(
    rf"(?iu)^\W*(?:(?:được\s+)?ban\s+hành\s+kèm\s+theo\s+|issued\s+(?:together\s+)?with\s+)?{_ACT_REFERENCE}"
    r"\s*(?:\([^()]{0,80}\))?[.*_\s]*$"
)
#: Most words an issuer line has.
_MAX_ISSUER_WORDS = 16


def is_issuer_line(line: str) -> bool:
    """A line naming who issued the document (short, ``_ISSUER_LINE``) or under which act (``_ACT_LINE``): not a rule."""
    line = line.strip()
    if _ACT_LINE.match(line):
        return True
    issuer = _ISSUER_LINE.match(line) if len(line.split()) <= _MAX_ISSUER_WORDS else None
    return bool(issuer) and issuer.group("org")[0].isupper()


def bold_title(line: str) -> str:
    """The title of a bold-only line that is a section title, "" for any other line: a bold label before a
    rule ("**Điều 3.** Phòng ... chịu trách nhiệm"), a bold sentence and a bold rule with a value are no
    title. Quoted, such a title took the place of a clause ("Quyền lợi nha khoa và thai sản**"), so it is
    never one."""
    m = _BOLD_LINE.match(line.strip())
    if not m:
        return ""
    title = (m.group("inner") or m.group("head") or "").strip().rstrip(":").strip()
    words = title.split()
    if not title or len(words) > _MAX_TITLE_WORDS or (title.endswith((".", "?", "!")) and len(words) > 3):
        return ""
    return "" if any(c.isdigit() for c in _SECTION_NUMBER.sub("", title)) else title  # "**Phí: 50.000 đồng**" is a rule


def is_frame_line(line: str) -> bool:
    """A document's frame, not a statement: see ``_FRAME_LINE`` and ``_LEAD_IN``; or a short line in capitals without
    digits (the issuing authority, "QUYẾT ĐỊNH", a title typed in capitals). Judged per sentence."""
    if _FRAME_LINE.match(line) or _LEAD_IN.search(line):
        return True
    words = [w for w in re.findall(r"[^\W\d_]+", line) if len(w) > 1]
    return (3 <= len(words) <= _MAX_FRAME_CAPITALS_WORDS and not any(c.isdigit() for c in line)
            and all(w.isupper() for w in words) and not line.rstrip().endswith("."))


@dataclass(frozen=True)
class Clause:
    """One quotable sentence, with the passage it came from and the heading above it."""

    text: str
    passage: int  # index into the passages given to :func:`split_clauses`
    position: int  # order inside the passage
    heading: str = ""
    lead: str = ""  # the lead-in of the list this clause is an item of ("nhân viên được nghỉ:")


def split_clauses(passages: Sequence[str], bold_headings: bool = False, lead_ins: bool = False,
                  skip_issuers: bool = False) -> list[Clause]:
    """Sentences of each passage, skipping headings (kept as context), fragments, table rules and repeats
    (overlapping chunks of one document hold the same sentence twice). ``bold_headings``: a bold
    section title ("**Điều 4. Thời hạn bảo hành**") is the heading of the clauses below it, as a Markdown one is.
    ``lead_ins``: the items of a list keep the line or sentence that introduced it (``Clause.lead``), a table's
    rows included. ``skip_issuers``: lines naming the document's issuer or act (``is_issuer_line``) are no clause."""
    clauses: list[Clause] = []
    seen: set[str] = set()
    for index, passage in enumerate(passages):
        heading = ""
        lead = ""
        position = 0
        lines = [line.strip() for line in normalize(passage).splitlines() if line.strip()]
        for n, line in enumerate(lines):
            if _HEADING.match(line):
                heading, lead = _HEADING.sub("", line).strip(), ""
                continue
            if title := bold_title(line):
                heading = title if bold_headings else heading
                continue  # a section title in bold states no rule
            if _TABLE_RULE.match(line):
                continue  # "|---|---|" under a header row
            if n and lines[n - 1].startswith("|") and not line.startswith("|"):
                lead = ""  # the table ended
            line = _BULLET.sub("", line)
            number_match = CLAUSE_NUMBER.match(line)
            number = number_match.group(0) if number_match else ""
            sentences = _SENTENCE_END.split(line[len(number):])
            for i, sentence in enumerate(sentences):
                sentence = ((number if i == 0 else "") + sentence).strip()
                key = " ".join(sentence[len(number) if i == 0 else 0:].lower().split())
                if ((len(sentence) >= MIN_CLAUSE_CHARS or LABELLED_VALUE.match(sentence)) and key not in seen
                        and not is_frame_line(sentence) and not (skip_issuers and is_issuer_line(sentence))):
                    seen.add(key)
                    clauses.append(Clause(sentence, index, position, heading, lead if lead_ins else ""))
                    position += 1
                if i == 0 and len(sentences) > 1:
                    lead = inline_lead(sentence) or lead
            lead = list_lead(line, lead)
    return clauses


#: A Markdown table's rule under its header row: "|---|:---:|", "---|---".
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")


#: A list's lead-in ends with a colon; its items end with ";" (or a comma) and the last one with a full stop.
_LIST_END = (".", "!", "?", "。")


def list_lead(line: str, lead: str) -> str:
    """The lead-in for the lines after ``line``: the line itself when it ends with a colon (it introduces a
    list), none once a line closes the list with a full stop, else ``lead`` unchanged (another item)."""
    stripped = line.rstrip().rstrip("*_").rstrip()
    if stripped.endswith((":", "：")):
        return stripped.rstrip(":：").strip()
    return "" if stripped.endswith(_LIST_END) else lead


def inline_lead(first: str) -> str:
    """The lead-in of a list written on one line ("... trong hai trường hợp: (a) ...; (b) ..."): the first
    sentence up to its last colon, when that sentence is itself an item (it ends with ";"); else ""."""
    if not first.rstrip().endswith(";") or ":" not in first:
        return ""
    return first[: first.rindex(":")].strip()
