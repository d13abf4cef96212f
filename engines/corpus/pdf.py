"""A PDF's text layer as Markdown, page by page, with pdfplumber (chosen in docs/documents.md).

pdfplumber gives each character with its position and font size, which is what the rest of the
pipeline needs beyond plain text: ruled tables come out as rows ("| Dưới 5 năm | 12 ngày |"), lines
set larger than the body text become Markdown headings (the clause splitter reads them as
sections), and the wrapped lines of one paragraph are joined again, so a sentence is not cut at
the right margin; running headers and footers are dropped. A page with no characters has no text
layer (a scan).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pdfplumber
from pdfminer.psexceptions import PSException
from pdfplumber.utils.exceptions import PdfminerException
from pdfplumber.utils.text import chars_to_textmap

#: What pdfplumber and pdfminer raise for a damaged, truncated or password-protected file.
PDF_ERRORS = (PdfminerException, PSException)

#: A line set at least this much larger than the body text is a heading.
HEADING_RATIO = 1.15
#: A horizontal gap this wide (in ems) between two glyphs of a line separates table cells; a word
#: space is about a quarter of an em, a stretched one in justified text rarely over half.
CELL_GAP = 0.9
WORD_GAP = 0.1
#: Lines this close (in line heights) belong to one paragraph.
PARAGRAPH_GAP = 0.6
#: A line that starts a list item or a numbered clause never continues the line above.
_ITEM_START = re.compile(r"^\s*(?:[-*•+▪◦–]\s|\d+(?:\.\d+)*[.)]\s|[a-zđ][.)]\s|\(\w{1,3}\)\s)", re.IGNORECASE)
#: Longest block taken for a running header or footer.
MAX_RUNNING_CHARS = 200
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
        sizes = _font_sizes(pdf.pages)
        body_size = sizes.most_common(1)[0][0] if sizes else 0.0
        heading_levels = _heading_levels(sizes, body_size)
        pages = []
        for page in pdf.pages:
            pages.append(_page_markdown(page, body_size, heading_levels))
            page.close()  # drop the page's parsed objects: a long PDF is read in bounded memory
    return PdfText(pages=drop_running_lines(pages), title=_text(info.get("Title")), date=_text(info.get("CreationDate")))


def drop_running_lines(pages: list[str]) -> list[str]:
    """Pages without their running header and footer: a first or last block that, numbers aside
    ("Trang 3/12", "3", a printing date), opens or closes at least half the pages (two at least).
    Left in, it would repeat in every chunk and split sentences that run across a page break."""
    def key(block: str) -> str:
        block = block.strip()
        if len(block) > MAX_RUNNING_CHARS or block.startswith(("|", "#")):
            return ""  # a table row or a heading is content, however alike across pages
        return re.sub(r"\d+", "#", block)

    edges: Counter[str] = Counter()
    split = [page.split("\n\n") if page else [] for page in pages]
    for blocks in split:
        edges.update({key(blocks[0]), key(blocks[-1])} if blocks else set())
    running = {k for k, n in edges.items() if k and n >= max(2, (len(pages) + 1) // 2)}
    if not running:
        return pages
    kept = []
    for blocks in split:
        while blocks and key(blocks[0]) in running:
            blocks = blocks[1:]
        while blocks and key(blocks[-1]) in running:
            blocks = blocks[:-1]
        kept.append("\n\n".join(blocks))
    return kept


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


def _font_sizes(pages: list[Any]) -> Counter[float]:
    """How many characters of the document are set in each font size (a first pass over the pages:
    which size is the body's and which are headings' is a whole-document question)."""
    sizes: Counter[float] = Counter()
    for page in pages:
        sizes.update(round(c["size"], 1) for c in page.chars if c["text"].strip())
        page.close()
    return sizes


def _heading_levels(sizes: Counter[float], body_size: float) -> dict[float, int]:
    """Heading level by font size: the largest size set larger than the body is level 1."""
    larger = [size for size in sizes if size >= body_size * HEADING_RATIO]
    return {size: min(level, 6) for level, size in enumerate(sorted(larger, reverse=True), start=1)}


def _page_markdown(page: Any, body_size: float, heading_levels: dict[float, int]) -> str:
    """One page as Markdown blocks, top to bottom: tables (ruled, then borderless), headings, bold
    titles, list items and paragraphs."""
    tables = page.find_tables()
    boxes = [t.bbox for t in tables]

    def outside_tables(obj: dict[str, Any]) -> bool:
        return not any(x0 <= obj["x0"] and obj["x1"] <= x1 and top <= obj["top"] and obj["bottom"] <= bottom
                       for x0, top, x1, bottom in boxes)

    blocks: list[tuple[float, str]] = []
    for table in tables:
        rows = table.extract()
        if max((len(row) for row in rows), default=0) >= 2 and len(rows) >= 2:
            blocks.append((table.bbox[1], _table_markdown(rows)))
        else:  # one column of boxes (a framed note, a callout): its cells are paragraphs, not a table
            blocks.extend((row.bbox[1], " ".join((cells[0] or "").split()))
                          for row, cells in zip(table.rows, rows) if cells)
    lines = _text_lines([c for c in page.chars if outside_tables(c)], page.height)
    marks = [m for m in (*page.curves, *page.rects) if m.get("fill") and outside_tables(m)
             and 0.5 <= m["width"] <= body_size * 0.6 and 0.5 <= m["height"] <= body_size * 0.6]
    runs = _borderless_tables(lines, heading_levels)
    paragraph: list[str] = []
    paragraph_top = 0.0
    previous: dict[str, Any] | None = None
    skip_until = -1
    for n, line in enumerate(lines):
        if n < skip_until:
            continue
        if n in runs:
            skip_until, table = runs[n]
            if paragraph:
                blocks.append((paragraph_top, " ".join(paragraph)))
                paragraph, previous = [], None
            blocks.append((line["top"], table))
            continue
        text = _bulleted(line, marks)
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
        if not joins and _is_bold_title(line):  # "Điều 5. Hiệu lực" in bold at the body's size
            blocks.append((line["top"], f"**{text}**"))
            previous = None
            continue
        if not paragraph:
            paragraph_top = line["top"]
        paragraph.append(text)
        previous = line
    if paragraph:
        blocks.append((paragraph_top, " ".join(paragraph)))
    return "\n\n".join(text for _, text in sorted(blocks, key=lambda b: b[0]) if text)


def _cells(line: dict[str, Any]) -> list[tuple[float, str]]:
    """A line cut where the gap between two glyphs is a column's, not a word's: (x0, text) per cell."""
    cells: list[tuple[float, list[str]]] = []
    previous: dict[str, Any] | None = None
    for char in line.get("chars", ()):
        if not char["text"].strip():
            continue
        gap = char["x0"] - previous["x1"] if previous is not None else 0.0
        if previous is None or gap >= CELL_GAP * char["size"]:
            cells.append((char["x0"], []))
        elif gap > WORD_GAP * char["size"] and cells[-1][1][-1:] != [" "]:
            cells[-1][1].append(" ")
        cells[-1][1].append(char["text"])
        previous = char
    return [(x0, "".join(text).strip()) for x0, text in cells]


def _borderless_tables(lines: list[dict[str, Any]], heading_levels: dict[float, int]) -> dict[int, tuple[int, str]]:
    """Tables drawn without vertical rules (pdfplumber finds ruled ones): two or more consecutive
    lines cut into the same number of cells, a column of which starts at one x in at least two of
    them. {first line: (line after the table, its Markdown)}."""
    found: dict[int, tuple[int, str]] = {}
    cells = [_cells(line) if not _line_level(line, heading_levels) else [] for line in lines]
    n = 0
    while n < len(lines):
        end = n
        while end < len(lines) and len(cells[end]) >= 2 and len(cells[end]) == len(cells[n]):
            end += 1
        rows = cells[n:end]
        size = max((lines[n]["bottom"] - lines[n]["top"]), 1.0)
        aligned = any(sum(1 for row in rows if abs(row[i][0] - other[i][0]) <= size) >= 2
                      for other in rows for i in range(1, len(rows[0]))) if len(rows) >= 2 else False
        if aligned:
            found[n] = (end, _table_markdown([[text for _, text in row] for row in rows]))
            n = end
        else:
            n += 1
    return found


def _text_lines(chars: list[dict[str, Any]], height: float) -> list[dict[str, Any]]:
    """Characters grouped into lines by their baseline. pdfplumber groups by the top of each glyph's
    box, which differs between fonts: a Vietnamese letter the main font lacks is drawn in a fallback
    font whose box sits higher, and a large heading would split into two lines ("ướ ẫ ồ ơ" above
    "H ng d n h s"). Every glyph of a line shares the baseline, so each box is rebuilt from it."""
    aligned = []
    for char in chars:
        matrix = char.get("matrix")
        baseline = height - matrix[5] if matrix else char["bottom"]
        aligned.append(dict(char, top=baseline - char["size"], bottom=baseline,
                            doctop=char["doctop"] - char["top"] + baseline - char["size"]))
    return chars_to_textmap(aligned).extract_text_lines(strip=True, return_chars=True) if aligned else []


#: Bullet glyphs a line may start with: "•", Word's Symbol-font bullet (private use U+F0B7), squares, circles.
_BULLET_GLYPH = re.compile("^[•\uf0b7\uf0a7\uf076\uf0d8▪◦●■□➢►–]\\s*")


def _bulleted(line: dict[str, Any], marks: list[dict[str, Any]]) -> str:
    """A line's text, as a Markdown item ("- ...") when it starts with a bullet: a bullet glyph, or a
    small filled shape just left of it (Chromium and others draw list discs as paths, not text)."""
    text = line["text"].strip()
    if _BULLET_GLYPH.match(text):
        return "- " + _BULLET_GLYPH.sub("", text)
    size = line["bottom"] - line["top"]
    for mark in marks:
        if (line["top"] <= mark["top"] and mark["bottom"] <= line["bottom"] and mark["x1"] <= line["x0"]
                and line["x0"] - mark["x0"] <= 2.5 * size):
            return "- " + text
    return text


_BOLD_FONT = re.compile(r"bold|black|heavy|demi", re.IGNORECASE)
#: Longest line taken as a bold section title rather than a bold sentence.
MAX_BOLD_TITLE_CHARS = 150


def _is_bold_title(line: dict[str, Any]) -> bool:
    """A short line set wholly in a bold font: a section title where a document marks titles by
    weight, not size (common in Vietnamese regulations written in Word)."""
    glyphs = [c for c in line.get("chars", ()) if c["text"].strip()]
    return (bool(glyphs) and len(line["text"]) <= MAX_BOLD_TITLE_CHARS
            and all(_BOLD_FONT.search(c.get("fontname", "")) for c in glyphs))


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
