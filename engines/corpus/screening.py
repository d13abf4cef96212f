"""Which files are not worth ingesting, and which are worth a warning: pure checks on bytes and text.

A folder a team hands over holds more than documents: images, spreadsheets, scans without a text
layer, exports full of NUL bytes, a one-line data dump. Indexing them gives junk chunks that crowd
out real answers, and silently skipping them hides a document someone expected to be searchable.
So every file left out is named with its reason (:class:`Skipped`), and a file that goes in but will
chunk badly (a giant line, a giant file) is named with a warning.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

#: Reasons a file is left out, as the ingest report prints them.
UNSUPPORTED = "unsupported type"
EMPTY = "empty"
BINARY = "binary or junk"
NO_TEXT_LAYER = "no text layer"
UNREADABLE = "unreadable"

#: A line longer than this (characters without a newline) is data or a broken export, not prose: the
#: splitter cuts it at arbitrary points. Prose paragraphs run to a few thousand characters.
MAX_LINE_CHARS = 20_000
#: A text longer than this becomes thousands of chunks (about 1,500 characters each): worth a word.
MAX_TEXT_CHARS = 2_000_000
#: Below this share of readable characters a text is junk (binary decoded as text, unmapped glyphs).
MIN_READABLE_SHARE = 0.90
#: Characters in a Unicode category that text does not hold: controls, unassigned, private use,
#: surrogates. Newlines and tabs are fine.
_UNREADABLE_CATEGORIES = frozenset({"Cc", "Cn", "Co", "Cs"})


class NotIngestible(Exception):
    """Raised by a reader for a file that is to be left out (not an error: the others go in)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Skipped:
    """A file left out of the index, with why and what to do about it."""

    path: str
    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason} — {self.detail}"


def screen_bytes(raw: bytes) -> NotIngestible | None:
    """Empty or binary before decoding: no text file holds a NUL byte (UTF-8 never encodes one)."""
    if not raw.strip():
        return NotIngestible(EMPTY, "the file has no content. Add text or remove it.")
    if b"\x00" in raw:
        count = raw.count(b"\x00")
        return NotIngestible(BINARY, f"{count:,} NUL byte(s): this is a binary file, not text. "
                                     "Export the document as PDF, DOCX, HTML or Markdown.")
    return None


def readable_share(text: str) -> float:
    """Share of characters that text is made of (1.0 for an empty text)."""
    if not text:
        return 1.0
    bad = sum(1 for ch in text if ch not in "\n\r\t" and
              (ch == "\ufffd" or unicodedata.category(ch) in _UNREADABLE_CATEGORIES))
    return 1 - bad / len(text)


def screen_text(text: str, *, source: str = "text") -> NotIngestible | None:
    """Empty or junk after decoding or converting. ``source`` says where the text came from, for the
    message ("text", "the PDF's text layer")."""
    if not text.strip():
        return NotIngestible(EMPTY, f"{source} is empty. Add content or remove the file.")
    share = readable_share(text)
    if share < MIN_READABLE_SHARE:
        return NotIngestible(BINARY, f"only {share:.0%} of {source} is readable characters (control or "
                                     "unmapped ones make up the rest). Re-export it as UTF-8 text, PDF or DOCX.")
    cid = text.count("(cid:")
    if cid and cid * 8 > len(text) * (1 - MIN_READABLE_SHARE):
        return NotIngestible(BINARY, f"{source} is mostly glyph codes like '(cid:12)': its fonts have no "
                                     "Unicode map. Re-export the PDF with embedded Unicode fonts, or OCR it.")
    return None


def longest_line(text: str) -> int:
    """Characters in the longest run without a newline."""
    return max((len(line) for line in text.split("\n")), default=0)


def size_warnings(text: str, *, max_line: int = MAX_LINE_CHARS, max_text: int = MAX_TEXT_CHARS) -> list[str]:
    """What a user should know about a text that goes in but will chunk badly (empty when fine)."""
    warnings = []
    line = longest_line(text)
    if line > max_line:
        warnings.append(f"a line of {line:,} characters without a line break (over {max_line:,}): it is cut into "
                        "chunks at arbitrary points. If it is data rather than prose (an export, a minified "
                        "file), move it out of the folder; if it is prose, add line breaks between paragraphs.")
    if len(text) > max_text:
        warnings.append(f"{len(text):,} characters of text (over {max_text:,}): about {len(text) // 1500:,} chunks "
                        "to embed. Check it is a document and not a data dump.")
    return warnings
