"""Where in its document a chunk is: the PDF page it starts on, the heading above it.

A converted document keeps its text as one Markdown string, chunked like any other, plus anchors:
``(offset, field, value)`` marks where a page or a section begins. Each chunk is found in the text
(chunks are substrings, in order, overlapping) and gets the value of every field's last anchor at or
before its start, so a source can say "page 3" or "Điều 2. Số ngày nghỉ phép". Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

Anchor = tuple[int, str, str | int]

#: A Markdown heading line, or a line wholly in bold (a title marked by weight, as Word documents and
#: PDFs printed from them often do): its text names the section below it.
_HEADING = re.compile(r"^(?:#{1,6}[ \t]+(?P<text>.+?)[ \t#]*|\*\*(?P<bold>[^*\n]{1,150})\*\*:?)[ \t]*$", re.MULTILINE)
#: Longest section name kept (Chroma metadata is flat text; a heading is short).
MAX_SECTION_CHARS = 200


def heading_anchors(text: str, offset: int = 0) -> list[Anchor]:
    """A ``section`` anchor at every Markdown heading or bold title line of ``text`` (offsets shifted by
    ``offset``)."""
    return [(offset + m.start(), "section", (m.group("text") or m.group("bold")).strip()[:MAX_SECTION_CHARS])
            for m in _HEADING.finditer(text)]


def chunk_anchors(text: str, chunks: Sequence[str], anchors: Sequence[Anchor]) -> list[dict[str, str | int]]:
    """Per chunk, the value of each anchored field in force where the chunk starts.

    A chunk not found verbatim (a splitter that rewrote whitespace) keeps the previous chunk's place:
    chunks come in document order."""
    ordered = sorted(anchors, key=lambda a: a[0])
    found: list[dict[str, str | int]] = []
    cursor = 0
    start = 0
    for chunk in chunks:
        probe = chunk.strip()[:200]
        at = text.find(probe, cursor) if probe else -1
        if at >= 0:
            start, cursor = at, at + 1
        fields: dict[str, str | int] = {}
        for offset, name, value in ordered:
            if offset > start:
                break
            fields[name] = value
        found.append(fields)
    return found
