"""A PDF's text layer as Markdown, page by page, with pdfplumber (chosen in docs/documents.md).

pdfplumber gives each character with its position and font size, which is what the rest of the
pipeline needs beyond plain text: ruled tables come out as rows ("| Dưới 5 năm | 12 ngày |"), lines
set larger than the body text become Markdown headings (the clause splitter reads them as
sections), and the wrapped lines of one paragraph are joined again, so a sentence is not cut at
the right margin. A page with no characters has no text layer (a scan).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pdfplumber

#: A line set at least this much larger than the body text is a heading.
HEADING_RATIO = 1.15
#: Lines this close (in line heights) belong to one paragraph.
PARAGRAPH_GAP = 0.6
#: A line that starts a list item or a numbered clause never continues the line above.
_ITEM_START = re.compile(r"^\s*(?:[-*•+▪◦–]\s|\d+(?:\.\d+)*[.)]\s|[a-zđ][.)]\s|\(\w{1,3}\)\s)", re.IGNORECASE)
#: "D:20240315093000+07'00'": a PDF date string.
_PDF_DATE = re.compile(r"^(?:D:)?(?P<y>\d{4})(?P<m>\d{2})?(?P<d>\d{2})?")


@dataclass(frozen=True)
class PdfText:
    """A PDF's pages as Markdown, and the properties it states about itself."""

    pages: list[str]
    title: str
    date: str  # raw /CreationDate (see pdf_date)


def read_pdf(path: Path) -> PdfText:
    """Every page's text as Markdown (empty for a page without a text layer)."""
    with pdfplumber.open(path) as pdf:
        info = pdf.metadata or {}
        body_size = _body_size(pdf.pages)
        heading_levels = _heading_levels(pdf.pages, body_size)
        pages = [_page_markdown(page, body_size, heading_levels) for page in pdf.pages]
    return PdfText(pages=pages, title=_text(info.get("Title")), date=_text(info.get("CreationDate")))


def pdf_date(value: str) -> str:
    """A PDF date string as YYYY-MM-DD ("" when it holds none). Raises ValueError for one that is
    not a calendar day, so the caller can name the file and the field."""
    match = _PDF_DATE.match(value.strip())
    if not match or not match.group("m") or not match.group("d"):
        return ""
    return dt.date(int(match.group("y")), int(match.group("m")), int(match.group("d"))).isoformat()


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return str(value or "").strip()


def _body_size(pages: list[Any]) -> float:
    """The font size most characters are set in."""
    sizes: Counter[float] = Counter()
    for page in pages:
        sizes.update(round(c["size"], 1) for c in page.chars if c["text"].strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _heading_levels(pages: list[Any], body_size: float) -> dict[float, int]:
    """Heading level by font size: the largest size used for headings is level 1."""
    sizes = {round(c["size"], 1) for page in pages for c in page.chars
             if c["text"].strip() and c["size"] >= body_size * HEADING_RATIO}
    return {size: min(level, 6) for level, size in enumerate(sorted(sizes, reverse=True), start=1)}


def _page_markdown(page: Any, body_size: float, heading_levels: dict[float, int]) -> str:
    tables = page.find_tables()
    boxes = [t.bbox for t in tables]

    def outside_tables(obj: dict[str, Any]) -> bool:
        return not any(x0 <= obj["x0"] and obj["x1"] <= x1 and top <= obj["top"] and obj["bottom"] <= bottom
                       for x0, top, x1, bottom in boxes)

    blocks: list[tuple[float, str]] = [(t.bbox[1], _table_markdown(t.extract())) for t in tables]
    lines = page.filter(outside_tables).extract_text_lines(return_chars=True) if boxes else \
        page.extract_text_lines(return_chars=True)
    paragraph: list[str] = []
    paragraph_top = 0.0
    previous: dict[str, Any] | None = None
    for line in lines:
        text = line["text"].strip()
        if not text:
            continue
        level = _line_level(line, heading_levels)
        joins = (previous is not None and paragraph and not level and not _ITEM_START.match(text)
                 and line["top"] - previous["bottom"] <= PARAGRAPH_GAP * (previous["bottom"] - previous["top"]))
        if not joins and paragraph:
            blocks.append((paragraph_top, " ".join(paragraph)))
            paragraph = []
        if level:
            blocks.append((line["top"], "#" * level + " " + text))
            previous = None
            continue
        if not paragraph:
            paragraph_top = line["top"]
        paragraph.append(text)
        previous = line
    if paragraph:
        blocks.append((paragraph_top, " ".join(paragraph)))
    return "\n\n".join(text for _, text in sorted(blocks, key=lambda b: b[0]))


def _line_level(line: dict[str, Any], heading_levels: dict[float, int]) -> int:
    """The heading level of a line (0 for body text): most of its characters at a heading size."""
    sizes = Counter(round(c["size"], 1) for c in line.get("chars", ()) if c["text"].strip())
    if not sizes:
        return 0
    size, count = sizes.most_common(1)[0]
    return heading_levels.get(size, 0) if count * 2 > sum(sizes.values()) and len(line["text"]) <= 200 else 0


def _table_markdown(rows: list[list[str | None]]) -> str:
    """Rows as a Markdown table, the first row as its header; a cell's line breaks become spaces."""
    cells = [[" ".join((cell or "").split()).replace("|", "/") for cell in row] for row in rows if any(row)]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells[1:]])
