"""PDF, DOCX and HTML files read into Markdown text with a title, a date and page/section anchors.

What a team hands over is rarely Markdown with front matter. These documents state their title and
date in their own properties (PDF metadata, DOCX core properties, ``<title>`` and ``<meta>``) or in
their first lines, and their structure in layout; this module turns each into what a front-matter
file gives: text the clause splitter can read, a title, a date, and where each part sits (a PDF's
pages, every format's headings) so a chunk can name its page or section. A file with nothing to
ingest (a scan without a text layer, junk, a damaged file) raises :class:`NotIngestible`.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engines.corpus.anchors import Anchor, heading_anchors
from engines.corpus.document_names import dates_in
from engines.corpus.screening import EMPTY, NO_TEXT_LAYER, UNREADABLE, NotIngestible, screen_bytes, screen_text
from engines.errors import DocumentError
from engines.text import normalize

logger = logging.getLogger(__name__)

PDF_SUFFIXES = (".pdf",)
DOCX_SUFFIXES = (".docx",)
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
CONVERTED_SUFFIXES = PDF_SUFFIXES + DOCX_SUFFIXES + HTML_SUFFIXES
#: Lines of the opening searched for a title or a date the document writes itself.
OPENING_LINES = 6
MAX_TITLE_CHARS = 160
_ISO_DATE = re.compile(r"(?<![\d/.-])\d{4}-\d{2}-\d{2}(?![\d/.-])")
#: Property titles that name a file or a template, not the document.
_NO_TITLE = re.compile(r"(?i)^(?:untitled|document\d*|microsoft word - .*|.*\.(?:docx?|pdf|html?|odt|rtf|txt))$")


@dataclass(frozen=True)
class Converted:
    """A converted document: Markdown text, its title and ISO date ("" if none), anchors, warnings."""

    text: str
    title: str
    date: str
    anchors: tuple[Anchor, ...] = ()
    warnings: list[str] = field(default_factory=list)


def convert_document(file: Path) -> Converted:
    """Read a .pdf, .docx or .html file. Raises NotIngestible (left out, with why) or DocumentError
    (a stated property is wrong: named with file, field and value)."""
    suffix = file.suffix.lower()
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{file}: cannot be read ({exc.strerror}). Check its permissions.") from exc
    if (empty := screen_bytes(raw)) is not None and empty.reason == EMPTY:
        raise empty  # NUL bytes are normal inside a PDF or a DOCX: only an empty one is left out here
    if suffix in PDF_SUFFIXES:
        return _convert_pdf(file)
    if suffix in DOCX_SUFFIXES:
        return _convert_docx(file)
    if (binary := screen_bytes(raw)) is not None:
        raise binary
    return _convert_html(file, raw)


def _convert_pdf(file: Path) -> Converted:
    from engines.corpus.pdf import PDF_ERRORS, pdf_date, read_pdf  # pdfplumber loads only when a PDF is read

    try:
        pdf = read_pdf(file)
    except PDF_ERRORS as exc:
        raise NotIngestible(UNREADABLE, f"the PDF cannot be opened ({type(exc).__name__}: {exc}). "
                                        "If it is password-protected, save an unprotected copy.") from exc
    texts: list[str] = []
    anchors: list[Anchor] = []
    offset = 0
    blank = []
    for number, page in enumerate(pdf.pages, start=1):
        page = normalize(page).strip()
        if not page:
            blank.append(number)
            continue
        anchors.append((offset, "page", number))
        anchors.extend(heading_anchors(page, offset))
        texts.append(page)
        offset += len(page) + 2
    text = "\n\n".join(texts)
    if not text.strip():
        raise NotIngestible(NO_TEXT_LAYER, f"none of its {len(pdf.pages)} page(s) has text (a scan or images). "
                                           "Run OCR first (e.g. ocrmypdf) and ingest the result.")
    if (junk := screen_text(text, source="the PDF's text layer")) is not None:
        raise junk
    warnings = [f"page(s) {', '.join(map(str, blank))} of {len(pdf.pages)} have no text layer (scanned?): "
                "their content is not searchable. OCR the file to include it."] if blank else []
    date = _stated_date(file, text, "", "") or _property_date(file, pdf.date, "PDF /CreationDate", pdf_date)
    return Converted(text=text, title=_title(file, pdf.title, text), date=date, anchors=tuple(anchors),
                     warnings=warnings)


def _convert_docx(file: Path) -> Converted:
    from engines.corpus.markup import DOCX_ERRORS, read_docx

    try:
        doc = read_docx(file)
    except DOCX_ERRORS as exc:
        raise NotIngestible(UNREADABLE, f"the DOCX cannot be opened ({type(exc).__name__}: {exc}). "
                                        "Open and re-save it in Word or LibreOffice.") from exc
    return _from_markup(file, doc.markdown, doc.title, "", "", doc.date, doc.date_field)


def _convert_html(file: Path, raw: bytes) -> Converted:
    from engines.corpus.markup import read_html

    page = read_html(raw)
    return _from_markup(file, page.markdown, page.title, page.date, page.date_field, "", "")


def _from_markup(file: Path, markdown: str, title: str, stated: str, stated_field: str,
                 stamped: str, stamped_field: str) -> Converted:
    text = normalize(markdown)
    if (problem := screen_text(text, source="its text")) is not None:
        raise problem
    date = (_stated_date(file, text, stated, stated_field)
            or _property_date(file, stamped, stamped_field, _iso_prefix))
    return Converted(text=text, title=_title(file, title, text), date=date, anchors=tuple(heading_anchors(text)))


def _title(file: Path, stated: str, text: str) -> str:
    """The title a document states (its properties), else its first heading, else its first line."""
    stated = normalize(" ".join(stated.split()))
    lines = [line.strip() for line in text.splitlines() if line.strip()][:OPENING_LINES]
    heading = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), "")
    if stated and stated.casefold() != file.stem.casefold() and not _NO_TITLE.match(stated):
        # "Quy chế X | Ngân hàng ABC": the page's own heading, when the <title> adds a site's name to it
        return heading if heading and heading in stated and len(heading) < len(stated) else stated
    first = heading or (lines[0].lstrip("-*| ").strip() if lines else "")
    return first[:MAX_TITLE_CHARS].rstrip() or file.stem


def _stated_date(file: Path, text: str, value: str, field_name: str) -> str:
    """A date the author stated: the property, else the first date written in the opening lines.
    The property's date is checked (a wrong one is named); a date in the text that is no calendar
    day is passed over, as text may say anything."""
    if value:
        return _property_date(file, value, field_name, _written_date)
    opening = "\n".join([line for line in text.splitlines() if line.strip()][:OPENING_LINES])
    written = [(m.start(), m.group(0)) for m in _ISO_DATE.finditer(opening)]
    written += [(start, iso) for start, _, iso in dates_in(opening)]
    for _, iso in sorted(written):
        try:
            return dt.date.fromisoformat(iso).isoformat()
        except ValueError:
            continue
    return ""


def _property_date(file: Path, value: str, field_name: str, parse: Callable[[str], str]) -> str:
    """``value`` of a property as YYYY-MM-DD; "" when it holds no date; DocumentError when it names
    a day the calendar does not have."""
    if not value:
        return ""
    try:
        return parse(value)
    except ValueError as exc:
        raise DocumentError(
            f"{file}: {field_name} is {value!r}, which is not a day of the calendar ({exc}). "
            "Correct the document's date property (YYYY-MM-DD), or re-export the file.") from exc


def _iso_prefix(value: str) -> str:
    """"2024-05-20T08:00:00Z" -> "2024-05-20"; "" when it does not start with a date."""
    match = re.match(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})", value)
    return dt.date(*map(int, match.groups())).isoformat() if match else ""


def _written_date(value: str) -> str:
    """An ISO date, or one written the Vietnamese or English way ("15/03/2024", "15 tháng 3 năm 2024")."""
    if iso := _iso_prefix(value):
        return iso
    for _, _, iso in dates_in(normalize(value)):
        return dt.date.fromisoformat(iso).isoformat()
    logger.debug("date %r names no day; left out", value)
    return ""
