"""Which documents of a corpus replace another one as a whole, read from their own words.

Explicit signals win over inference (issue 14). Besides a ``supersedes:`` front-matter field, real
documents say it in their text — "Quyết định này thay thế Quyết định số 05/2024/QĐ-ABC", "thay thế
Biểu phí dịch vụ năm 2023", "This policy supersedes POL-HR-03", "Quyết định số ... hết hiệu lực" — or
carry a version in the title ("(phiên bản 2.0)", "v3"). Few corpora have front matter; most have these
sentences. Ingest records what it finds in the manifest; with ``leave_out_replaced`` retrieval
leaves a replaced document out like an ``active: false`` one (``engines.retrieval.filters``). That is off by
default: a replaced document still holds what its replacement did not change (docs/answers.md).

What replaces nothing: an amendment or abolition of some articles, clauses or annexes ("Bãi bỏ khoản
2 Điều 4 Quyết định số ..."), a citation ("Căn cứ Quyết định số ..."), a replacement of something
outside the corpus, "thay thế"/"replace" in its ordinary sense (a replacement card), and a
"replacement" of a newer document by an older one. Pure functions over plain records; ingest records
the result in the manifest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engines.corpus.document_names import cited_title, dated_references, effective_dates, title_words
from engines.text import normalize

__all__ = ["READING", "DocumentText", "Replacement", "find_replacements", "replaced_documents", "documents_from_chunks", "names_in"]


#: Raised whenever what :func:`find_replacements` finds changes: ingest reads an index's documents again
#: when its manifest was written by another reading (2: a same-day document is never the one replaced).
READING = 2


@dataclass(frozen=True)
class DocumentText:
    """What the detector reads of one document."""

    doc_id: str
    title: str = ""
    text: str = ""
    date: str = ""  # ISO date, "" when unknown
    declared: tuple[str, ...] = ()  # front matter ``supersedes``


@dataclass(frozen=True)
class Replacement:
    """``new`` replaces ``old`` as a whole; ``basis``: "front matter", "text" or "version"."""

    old: str
    new: str
    basis: str
    evidence: str
    #: how a question names the old document on purpose ("v1.2", "2022", its number): then it is kept
    names: tuple[str, ...] = ()
    old_date: str = ""
    new_date: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "basis": self.basis, "evidence": self.evidence,
                "names": list(self.names), "old_date": self.old_date, "new_date": self.new_date}


#: A document's number or code: "05/2024/QĐ-SVM", "402/QĐ-ĐHDH", "12/HD-VPUBND", "POL-HR-03", "QT-07/2025".
_IDENTIFIER = re.compile(
    r"(?<![\w/.-])(?:\d{1,4}(?:/\d{4})?/[A-ZĐ][\wĐđ]*(?:[-–][\wĐđ]+)*|[A-ZĐ]{2,}(?:-[A-Z0-9Đ]+)+(?:/\d{4})?)(?![\w/-])"
)
#: Words that name a document just before its number ("Quyết định số 45/2023/QĐ-PNB", "procedure QT-07").
_DOCUMENT_NOUN = re.compile(
    r"(?:quyết định|quy định|quy chế|quy trình|thông tư|nghị quyết|nghị định|hướng dẫn|công văn|thông báo|"
    r"chỉ thị|kế hoạch|văn bản|biểu phí|bảng giá|chính sách|policy|procedure|guide|guideline|standard|"
    r"circular|notice|directive|decision|regulation|rules|document|version|no\.?)(?:\s+số)?\s*:?\s*$",
    re.IGNORECASE,
)
#: A whole-document replacement or withdrawal, as a phrase.
_CUE = re.compile(
    r"\b(?:thay\s+thế|bãi\s+bỏ|h[ủu]y\s+bỏ|hết\s+hiệu\s+lực|không\s+còn\s+(?:có\s+)?hiệu\s+lực|"
    r"chấm\s+dứt\s+(?:áp\s+dụng|hiệu\s+lực)|ngừng\s+áp\s+dụng|"
    r"không\s+còn\s+(?:được\s+)?áp\s+dụng|supersedes?|superseded|replaces?|replaced|withdrawn|repealed|"
    r"rescinded|revoked|no\s+longer\s+(?:in\s+force|applies|valid))\b",
    re.IGNORECASE,
)
#: Cues that say what happens to their subject, not to an object: "X hết hiệu lực", "X is withdrawn".
_INTRANSITIVE = re.compile(r"hết|không\s+còn|chấm\s+dứt|ngừng|withdrawn|repealed|rescinded|revoked|no\s+longer|"
                           r"superseded|replaced", re.IGNORECASE)
#: Joins the objects of one cue: "Bãi bỏ Quyết định A và Quyết định B".
_COORDINATOR = re.compile(r"\b(?:và|cùng|and)\b|[,;]", re.IGNORECASE)
#: A part of a document: what is replaced is then that part, not the document.
_PART = re.compile(
    r"\b(?:điều|khoản|điểm|mục|phụ\s+lục|chương|phần|biểu\s+mẫu|mẫu|article|section|clause|paragraph|annex|"
    r"appendix|schedule|part|chapter|item|form)\s+[\dIVXivx]|§|\b(?:phụ\s+lục|annex|appendix)\b|"
    r"\b(?:biểu\s+mẫu|mẫu|form)\s+(?:số\s+)?[A-Z]{1,4}[-\d]",
    re.IGNORECASE,
)
#: Words that end the object of the cue ("thẻ thay thế được cấp theo ...", "replaced by ...", "mức phí tại ...").
_BREAK = re.compile(
    r"\b(?:được|bị|bởi|bằng|do|tại|trong|của|có|theo|thuộc|by|is|are|was|were|will|be|under|per|according|"
    r"pursuant|in|within)\b",
    re.IGNORECASE,
)
#: Words after which a number is another document's: cited, amended, or the place of a rule.
_CITING = re.compile(r"căn\s+cứ|sửa\s+đổi|bổ\s+sung|thay\s+cho|\btại\b|\bamend|pursuant|\bunder\b|\bsee\b|\bper\b",
                     re.IGNORECASE)
#: How a document introduces its own number ("Ban hành kèm theo Quyết định số ...", "issued under ...").
_ISSUED = re.compile(r"ban\s+hành|kèm\s+theo|\bissued\b|\badopted\b", re.IGNORECASE)
_VERSION = re.compile(
    r"[(\[]?\s*\b(?:(?:phiên\s+bản|version|ver\.?|v|issue|lần\s+ban\s+hành\s+thứ|ban\s+hành\s+lần(?:\s+thứ)?)\s*"
    r"(\d+(?:\.\d+)*)|(?:rev(?:ision)?\.?)\s*(\d+|[A-Z])\b)\s*[)\]]?",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[*_(\"“]*[A-ZĐÀ-Ỹ])|\n+")
_LEADING_LABEL = re.compile(r"^\W*(?:điều|article|section)\s+\d+[.:]\W*|^\W*\d+(?:\.\d+)*[.)]\s*", re.IGNORECASE)
#: Words that make the cue a plan, not an act ("dự kiến thay thế", "will replace", "proposed to supersede").
_NOT_YET = re.compile(
    r"\b(?:dự\s+kiến|sẽ|đề\s+xuất|đề\s+nghị|will|would|shall\s+be|to\s+be|expected\s+to|proposed\s+to|"
    r"plans?\s+to|intended\s+to|is\s+to)\s*(?:được\s+)?$",
    re.IGNORECASE,
)
#: A title that makes the whole document a proposal: it replaces nothing yet.
_DRAFT_TITLE = re.compile(r"dự\s+thảo|lấy\s+ý\s+kiến|\bdraft\b|\bconsultation\b|\bproposal\b", re.IGNORECASE)
#: A date or an issuer between a document's number and the cue says which document, not what happens
#: to it: "Quyết định số X ngày 10 tháng 02 năm 2021 của Tổng Giám đốc hết hiệu lực".
_DATE_PHRASE = re.compile(
    r"\bngày\s+\d{1,2}\s+tháng\s+\d{1,2}\s+năm\s+\d{4}|\bngày\s+\d{1,2}[/.-]\d{1,2}[/.-]\d{4}|"
    r"\b(?:dated|issued\s+on|of)\s+\d{1,2}\s+[A-Z][a-z]+\s+\d{4}|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{4}|"
    r"\b(?:năm|in)\s+\d{4}\b",
    re.IGNORECASE,
)
_ISSUER = re.compile(r"\bcủa\s+(?:[A-ZĐÀ-Ỹ][\wĐđ]*\s*){1,6}$")
#: "của Giám đốc ... ban hành", "do Hiệu trưởng ban hành": who issued the document named.
_ISSUED_BY = re.compile(r"\b(?:của|do)\s+(?:\S+\s+){0,10}?ban\s+hành\b", re.IGNORECASE)
#: "<description> ban hành kèm theo Quyết định số X": the description names X's attachment, i.e. X.
_ATTACHED_TO = re.compile(r"\b(?:ban\s+hành\s+)?kèm\s+theo\b|\bban\s+hành\s+theo\b|\bissued\s+(?:with|under)\b",
                          re.IGNORECASE)
_MAX_GAP_WORDS = 10
#: Of the body, where a document states its own number ("Ban hành kèm theo Quyết định số ...").
_PREAMBLE_CHARS = 600


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", normalize(text).casefold()))


def own_identifiers(doc: DocumentText) -> frozenset[str]:
    """The numbers a document is known by: those in its title, and the first one its preamble gives
    after a document noun that no cue precedes ("Ban hành kèm theo Quyết định số 30/2024/QĐ-PNB,
    ..., thay thế Quyết định số 22/2023/QĐ-PNB" is 30/2024)."""
    found = {m.group(0) for m in _IDENTIFIER.finditer(normalize(doc.title))}
    body = normalize(doc.text)[:_PREAMBLE_CHARS]
    for sentence in _SENTENCE_END.split(body):
        for match in _IDENTIFIER.finditer(sentence):
            before = sentence[:match.start()]
            if _CUE.search(before) or _PART.search(before) or _CITING.search(before):
                break  # the rest of the sentence names other documents
            if _CUE.search(sentence[match.end():]) and not _ISSUED.search(before):
                break  # "Quyết định số X hết hiệu lực": X is the document withdrawn, not this one
            if _DOCUMENT_NOUN.search(before):
                return frozenset(found | {match.group(0)})
    return frozenset(found)


def _mentions(sentence: str, targets: Mapping[str, str],
              dated: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """(start, end, doc_id) of each document the sentence names: by a name of ``targets`` (a name ->
    doc_id map, names casefolded) as whole words, or by a date (``dated``). Where two
    overlap, the longer wins ("Quy chế đào tạo theo hệ thống tín chỉ" over "Quy chế đào tạo")."""
    folded = sentence.casefold()
    found: list[tuple[int, int, str]] = list(dated)
    for name, doc_id in targets.items():
        start = 0
        while (at := folded.find(name, start)) >= 0:
            start = at + len(name)
            if (at == 0 or not folded[at - 1].isalnum()) and (start >= len(folded) or not folded[start].isalnum()):
                found.append((at, start, doc_id))
    return [m for m in found if not any(o[0] <= m[0] and m[1] <= o[1] and o[1] - o[0] > m[1] - m[0] for o in found)]


def _references(sentence: str, cue: re.Match, mentions: Sequence[tuple[int, int, str]],
                titles: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    """(doc_id, how it was named) for each mention the sentence makes the object of ``cue``, whole.
    Words of the named document's own title between it and the cue describe it: they do not count."""
    for at, start, doc_id in mentions:
        if at >= cue.end():  # "thay thế [Quyết định số] X"
            if _INTRANSITIVE.search(cue.group(0)):
                continue  # "X hết hiệu lực kể từ ngày ...": what follows is not what ends
            gap = sentence[cue.end():at]
            listed = [end for first, end, other in mentions if other != doc_id and cue.end() <= first and end <= at]
            if listed and _COORDINATOR.search(sentence[max(listed):at]):
                gap = sentence[max(listed):at]  # "Bãi bỏ Quyết định A ... và Quyết định B": B is the cue's too
            passive = False
        elif start <= cue.start():  # "[Quyết định số] X hết hiệu lực"
            gap = sentence[start:cue.start()]
            lead = re.split(r"[,;:]", _LEADING_LABEL.sub("", sentence[:at]))[-1]
            passive = True
            if _PART.search(lead):
                continue  # "Điều 5 Quyết định X được bãi bỏ", "Phụ lục 2 kèm theo X hết hiệu lực": a part of X
        else:
            continue
        if _PART.search(gap) or (not passive and _NOT_YET.search(sentence[:cue.start()])):
            continue
        if passive and _NOT_YET.search(gap):
            continue  # "X sẽ hết hiệu lực khi ...", "X will be withdrawn"
        gap_words = _ISSUED_BY.sub(" ", _DATE_PHRASE.sub(" ", gap))
        if passive:
            gap_words = _ISSUER.sub(" ", gap_words.rstrip())
        elif (attached := list(_ATTACHED_TO.finditer(gap_words))) and \
                _words(gap_words[:attached[-1].start()]) <= 2 * _MAX_GAP_WORDS:
            gap_words = gap_words[attached[-1].end():]  # "thay thế Biểu phí ... ban hành kèm theo [X]"
        own = title_words(titles.get(doc_id, ""))
        if len([w for w in re.findall(r"\w+", gap_words.casefold()) if w not in own]) > _MAX_GAP_WORDS:
            continue
        if not passive and _BREAK.search(gap_words):
            continue  # "thay thế được cấp theo ...", "replaced by X": X is not what is replaced
        if passive and re.search(r"\b(?:bởi|bằng|by|this|này)\b", gap_words, re.I) and \
                re.search(r"thay\s+thế|replace|supersede", cue.group(0), re.I):
            continue  # "X được thay thế bởi ...": X is replaced by something this sentence names
        yield doc_id, sentence[at:start]


def _sentences(text: str) -> list[str]:
    return [s.strip(" *_") for s in _SENTENCE_END.split(normalize(text)) if s.strip(" *_")]


@dataclass(frozen=True)
class DatedNames:
    """What lets a date in a sentence name a document (``engines.corpus.document_names.dated_references``)."""

    by_day: Mapping[str, Sequence[str]]
    titles: Mapping[str, str]
    issued: Mapping[str, Sequence[str]]
    numbers: Mapping[str, frozenset[str]]

    def in_sentence(self, sentence: str, exclude: str) -> list[tuple[int, int, str]]:
        return list(dated_references(sentence, self.by_day, self.titles, exclude, self.issued, self.numbers))


def _text_replacements(doc: DocumentText, names: Mapping[str, str], dates: Mapping[str, str],
                       dated: DatedNames) -> list[Replacement]:
    if _DRAFT_TITLE.search(normalize(doc.title)):
        return []  # a draft or a call for comments announces a replacement; it makes none
    targets = {name: other for name, other in names.items() if other != doc.doc_id}
    found: dict[str, Replacement] = {}
    for sentence in _sentences(doc.text):
        cues = list(_CUE.finditer(sentence))
        if not cues:
            continue
        mentions = _mentions(sentence, targets, dated.in_sentence(sentence, doc.doc_id))
        for cue in cues:
            for old, named in _references(sentence, cue, mentions, dated.titles):
                if old in found or (doc.date and dates.get(old) and dates[old] >= doc.date):
                    continue  # only an older document can be replaced (a same-day date is the new one's own)
                found[old] = Replacement(old, doc.doc_id, "text", sentence[:300])
    return list(found.values())


def _version_of(title: str) -> tuple[str, tuple[int, ...]]:
    """(the title without its version, the version; () when it has none)."""
    match = None
    for match in _VERSION.finditer(normalize(title)):
        pass
    if match is None:
        return _key(title), ()
    base = normalize(title)[:match.start()] + " " + normalize(title)[match.end():]
    number = match.group(1) or match.group(2)
    if not number[0].isdigit():
        return _key(base), (ord(number.upper()) - ord("A") + 1,)  # "Rev. C" is the third
    return _key(base), tuple(int(p) for p in number.split("."))


def _version_replacements(docs: Sequence[DocumentText]) -> list[Replacement]:
    """Two titles equal but for a version: the higher version replaces the lower (no version = 0),
    unless its date says otherwise."""
    series: dict[str, list[tuple[tuple[int, ...], DocumentText]]] = {}
    for doc in docs:
        base, version = _version_of(doc.title)
        if len(base.split()) >= 2:
            series.setdefault(base, []).append((version, doc))
    out = []
    for members in series.values():
        if len(members) < 2 or not any(v for v, _ in members):
            continue
        for v_old, old in members:
            for v_new, new in members:
                if (v_new or (0,)) > (v_old or (0,)) and not (old.date and new.date and new.date < old.date):
                    out.append(Replacement(old.doc_id, new.doc_id, "version", f"{old.title} -> {new.title}"))
    return out


def _versioned_names(doc: DocumentText) -> list[str]:
    """"POL-IT-11 version 2.0", "POL-IT-11 v2": a code shared by a series, named with its version."""
    _, version = _version_of(doc.title)
    if not version:
        return []
    forms = {".".join(map(str, version)), ".".join(map(str, version)).removesuffix(".0")}
    return [f"{ident.casefold()}{sep}{v}" for ident in own_identifiers(doc) for v in forms
            for sep in (" version ", ", version ", " (version ", " v", " v.", " ver. ", " phiên bản ", ", phiên bản ")]


def find_replacements(docs: Sequence[DocumentText], *, from_text: bool = True,
                      from_versions: bool = True) -> list[Replacement]:
    """Every whole-document replacement among ``docs``: declared in front matter, said in the text,
    or implied by a higher version of the same title. Only documents of ``docs`` count.
    ``from_text`` / ``from_versions`` switch the two readings off, for ablations."""
    ids = {d.doc_id for d in docs}
    dates = {d.doc_id: d.date for d in docs}
    claims: dict[str, set[str]] = {}
    for doc in docs:
        title = " ".join(normalize(doc.title).split()).casefold()
        cited = cited_title(doc.title)
        for name in {*(i.casefold() for i in own_identifiers(doc)), *_versioned_names(doc),
                     *(t for t in (title, cited) if len(t.split()) >= 3)}:
            claims.setdefault(name, set()).add(doc.doc_id)
    # a number or title two documents claim names neither for sure
    names = {name: next(iter(owners)) for name, owners in claims.items() if len(owners) == 1}
    names.update({doc.doc_id.casefold(): doc.doc_id for doc in docs})
    by_day: dict[str, list[str]] = {}  # the days each document was issued or took effect: dates name them
    for doc in docs:
        for day in {doc.date, *effective_dates(doc.text)} - {""}:
            by_day.setdefault(day, []).append(doc.doc_id)
    titles = {doc.doc_id: doc.title for doc in docs}
    issued: dict[str, list[str]] = {}
    for doc in docs:
        issued.setdefault(doc.date, []).append(doc.doc_id)
    numbers = {doc.doc_id: frozenset(i.casefold() for i in own_identifiers(doc)) for doc in docs}
    dated = DatedNames(by_day, titles, issued, numbers)
    out: dict[tuple[str, str], Replacement] = {}
    for doc in docs:
        for old in doc.declared:
            if old in ids and old != doc.doc_id:
                out.setdefault((old, doc.doc_id), Replacement(old, doc.doc_id, "front matter", "supersedes: " + old))
        for rep in _text_replacements(doc, names, dates, dated) if from_text else ():
            out.setdefault((rep.old, rep.new), rep)
    for rep in _version_replacements(docs) if from_versions else ():
        out.setdefault((rep.old, rep.new), rep)
    by_id = {d.doc_id: d for d in docs}
    return sorted((replace(r, names=_names(by_id[r.old], by_id[r.new]), old_date=by_id[r.old].date,
                           new_date=by_id[r.new].date) for r in out.values()),
                  key=lambda r: (r.old, r.new))


def _title_tokens(title: str) -> set[str]:
    return {t for t in re.findall(r"\w+(?:[./-]\w+)*", normalize(title).casefold()) if any(c.isdigit() for c in t)}


def _names(old: DocumentText, new: DocumentText) -> tuple[str, ...]:
    """What in a question points at ``old`` rather than its replacement: its own numbers and the
    numbered words of its title that the new title lacks ("v1.2", "2022")."""
    tokens = _title_tokens(old.title) - _title_tokens(new.title)
    tokens |= {t[1:] for t in tokens if re.fullmatch(r"v\d+(?:\.\d+)*", t)}
    return tuple(sorted({i.casefold() for i in own_identifiers(old)} | tokens))


def names_in(query: str, names: Iterable[str]) -> bool:
    """Whether ``query`` says one of ``names`` as a whole word."""
    folded = normalize(query).casefold()
    return any(re.search(r"(?<![\w./-])" + re.escape(n) + r"(?![\w/-]|\.\w)", folded) for n in names if n)


def replaced_documents(replacements: Iterable[Mapping[str, str] | Replacement]) -> frozenset[str]:
    """The doc ids some other document replaces."""
    return frozenset(r.old if isinstance(r, Replacement) else str(r["old"]) for r in replacements)


def documents_from_chunks(chunks: Iterable[Mapping]) -> list[DocumentText]:
    """Documents rebuilt from stored chunks ({id, text, metadata}; chunk ids "doc#n"), in chunk order."""
    parts: dict[str, list[tuple[int, str]]] = {}
    meta: dict[str, Mapping] = {}
    for chunk in chunks:
        metadata = chunk.get("metadata") or {}
        doc_id = str(metadata.get("doc_id") or str(chunk["id"]).rsplit("#", 1)[0])
        tail = str(chunk["id"]).rsplit("#", 1)[-1]
        parts.setdefault(doc_id, []).append((int(tail) if tail.isdigit() else 0, chunk.get("text") or ""))
        meta.setdefault(doc_id, metadata)
    docs = []
    for doc_id, texts in parts.items():
        m = meta[doc_id]
        declared = tuple(i.strip() for i in str(m.get("supersedes") or "").split(",") if i.strip())
        docs.append(DocumentText(doc_id, str(m.get("title") or ""), "\n".join(t for _, t in sorted(texts)),
                                 str(m.get("date") or "")[:10], declared))
    return docs
