"""HTML and DOCX as Markdown (BeautifulSoup + markdownify; mammoth for DOCX; chosen in docs/documents.md).

Both end as the Markdown the rest of the pipeline reads: headings as ``#`` lines, numbered and
bulleted lists as ``1.`` and ``-`` items, tables as ``| a | b |`` rows. A DOCX goes through HTML
first because mammoth resolves Word's list numbering and styles into ``<ol>``/``<h2>``, which
python-docx leaves to the caller. Page furniture (navigation, scripts, forms) is dropped; the
properties a document states about itself (``<title>``, a date ``<meta>``, DOCX core properties)
come back beside the text.
"""

from __future__ import annotations

import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.parsers.expat import ExpatError

import mammoth
from bs4 import BeautifulSoup
from markdownify import markdownify

logger = logging.getLogger(__name__)

#: Elements that are page furniture, not the document.
_FURNITURE = ("script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "svg",
              "iframe", "button")
#: ``<meta name=...>`` / ``property=...`` that state a document's date, most specific first.
DATE_META = ("date", "dc.date", "dcterms.date", "dc.date.issued", "dcterms.issued", "dcterms.created",
             "citation_date", "citation_publication_date", "article:published_time", "og:published_time")
#: Word's "Title" style is the document's title: a heading, not body text.
_DOCX_STYLES = "p[style-name='Title'] => h1:fresh\np[style-name='Subtitle'] => h2:fresh"


#: What reading a damaged DOCX raises: not a zip, a part missing, XML cut short.
DOCX_ERRORS = (zipfile.BadZipFile, KeyError, ExpatError)


@dataclass(frozen=True)
class MarkupText:
    """A document as Markdown, with its stated title and date (raw, validated by the caller)."""

    markdown: str
    title: str = ""
    date: str = ""
    date_field: str = ""  # where the date was stated, for a message naming it


def read_html(raw: bytes) -> MarkupText:
    """An HTML page's body as Markdown, with its ``<title>`` and date ``<meta>``."""
    soup = BeautifulSoup(raw, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    date, field = "", ""
    metas = {(m.get("name") or m.get("property") or "").strip().lower(): (m.get("content") or "").strip()
             for m in soup.find_all("meta")}
    for name in DATE_META:
        if metas.get(name):
            date, field = metas[name], f"<meta name='{name}'>"
            break
    return MarkupText(markdown=html_markdown(soup), title=title, date=date, date_field=field)


def html_markdown(soup: BeautifulSoup) -> str:
    """The body of a parsed page as Markdown, without its furniture."""
    for tag in soup.find_all(_FURNITURE):
        tag.decompose()
    body = soup.body or soup
    markdown = markdownify(str(body), heading_style="ATX", bullets="-", strip=["a", "img"],
                           escape_asterisks=False, escape_underscores=False, escape_misc=False)
    return tidy(markdown)


def read_docx(path: Path) -> MarkupText:
    """A DOCX's body as Markdown, with the title and creation date of its core properties."""
    with path.open("rb") as handle:
        result = mammoth.convert_to_html(handle, style_map=_DOCX_STYLES)
    for message in result.messages:
        logger.debug("%s: %s", path, message.message)
    title, date = _docx_properties(path)
    markdown = html_markdown(BeautifulSoup(result.value, "lxml"))
    return MarkupText(markdown=markdown, title=title, date=date, date_field="core property 'created'")


def _docx_properties(path: Path) -> tuple[str, str]:
    """dc:title and dcterms:created of docProps/core.xml ("" where absent)."""
    with zipfile.ZipFile(path) as archive:
        try:
            core = archive.read("docProps/core.xml")
        except KeyError:
            return "", ""
    soup = BeautifulSoup(core, "xml")
    title = soup.find("title")
    created = soup.find("created")
    return (title.get_text(strip=True) if title else "", created.get_text(strip=True) if created else "")


def tidy(markdown: str) -> str:
    """Trailing spaces off, at most one blank line between blocks, no blank edges."""
    lines = [line.rstrip() for line in markdown.replace("\r\n", "\n").replace("\xa0", " ").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
