"""How faithfully each candidate reader turns Vietnamese PDF, DOCX and HTML into text the pipeline can use.

    .venv/bin/python -m evals.document_fidelity [--fixtures tests/fixtures/documents]

Two documents (a leave regulation, a loan guide), each in the three formats, made by real tools
(headless Chromium prints the PDFs, pandoc writes the DOCX; tests/fixtures/documents/make_fixtures.py).
Per reader, the share of what the document holds that survives, each in [0, 1]:

- ``text``: sentences found with every diacritic (NFC, whitespace collapsed), so nothing lost or broken
- ``order``: consecutive sentences that come out in the document's order
- ``rows``: table rows whose cells stay on one line, in order ("Dưới 5 năm 12 ngày")
- ``md_rows``: table rows as Markdown rows ("| Dưới 5 năm | 12 ngày |"), which the clause splitter reads
- ``headings``: headings as Markdown heading lines ("## Điều 2. ...")
- ``items``: list items as Markdown items ("1. ...", "- ...")
- ``nfc``: 1 when the raw output is already NFC

A reader that is not installed is reported as such: only the chosen ones are dependencies. The others,
for a rerun of the comparison (in a scratch venv):

    pip install pypdf==7.1.1 python-docx==1.2.0 docx2python==3.7.1 html2text==2025.4.15 trafilatura==2.3.1
"""

from __future__ import annotations

import argparse
import logging
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "documents"


@dataclass(frozen=True)
class Truth:
    """What a document holds, written by hand from its source."""

    sentences: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    headings: tuple[str, ...]
    items: tuple[str, ...]


LEAVE = Truth(
    sentences=("Ban hành kèm theo Quyết định số 12/2024/QĐ-NHTM ngày 15 tháng 3 năm 2024 của Tổng Giám đốc.",
               "Quy chế này áp dụng cho toàn thể nhân viên chính thức, thử việc và thời vụ của Ngân hàng, "
               "kể cả nhân viên làm việc tại chi nhánh Đà Nẵng và Cần Thơ.",
               "Nhân viên chính thức được nghỉ 12 ngày phép năm có hưởng lương.",
               "Cứ đủ 5 năm thâm niên, nhân viên được cộng thêm 1 ngày phép.",
               "Nhân viên thử việc không được hưởng phép năm trong thời gian thử việc.",
               "Ngày lễ, Tết không tính vào số ngày phép năm.",
               "Phép chưa nghỉ hết được chuyển sang quý I năm sau."),
    rows=(("Thâm niên", "Số ngày phép"), ("Dưới 5 năm", "12 ngày"), ("Từ 5 đến dưới 10 năm", "13 ngày"),
          ("Từ 10 năm trở lên", "14 ngày")),
    headings=("Quy chế nghỉ phép năm 2024", "Điều 1. Phạm vi áp dụng", "Điều 2. Số ngày nghỉ phép",
              "Điều 3. Bảng quy đổi thâm niên"),
    items=("Nhân viên chính thức được nghỉ 12 ngày phép năm có hưởng lương.",
           "Cứ đủ 5 năm thâm niên, nhân viên được cộng thêm 1 ngày phép.",
           "Nhân viên thử việc không được hưởng phép năm trong thời gian thử việc.",
           "Ngày lễ, Tết không tính vào số ngày phép năm.",
           "Phép chưa nghỉ hết được chuyển sang quý I năm sau."),
)
LOAN = Truth(
    sentences=("Tài liệu này hướng dẫn khách hàng chuẩn bị hồ sơ vay mua nhà ở tại Ngân hàng.",
               "Giấy đề nghị vay vốn theo mẫu 05/TD.",
               "Căn cước công dân của người vay và người đồng trả nợ.",
               "Hợp đồng mua bán nhà đã được công chứng.",
               "Khách hàng trả nợ trước hạn chịu phí 2% số tiền trả trước."),
    rows=(("Kỳ hạn", "Lãi suất"), ("12 tháng đầu", "8,5%/năm"),
          ("Từ tháng thứ 13", "Lãi suất cơ sở cộng biên độ 3,5%")),
    headings=("Hướng dẫn hồ sơ vay mua nhà", "Điều 1. Hồ sơ cần nộp", "Điều 2. Lãi suất ưu đãi"),
    items=("Giấy đề nghị vay vốn theo mẫu 05/TD.", "Căn cước công dân của người vay và người đồng trả nợ.",
           "Hợp đồng mua bán nhà đã được công chứng.", "Khách hàng trả nợ trước hạn chịu phí 2% số tiền trả trước."),
)
#: (format, file under the fixtures folder, what it holds)
DOCUMENTS = (
    ("pdf", "quy-che-nghi-phep.pdf", LEAVE), ("pdf", "sources/huong-dan-vay.pdf", LOAN),
    ("docx", "sources/quy-che-nghi-phep.docx", LEAVE), ("docx", "huong-dan-vay.docx", LOAN),
    ("html", "quy-che-nghi-phep.html", LEAVE), ("html", "sources/huong-dan-vay.html", LOAN),
)
METRICS = ("text", "order", "rows", "md_rows", "headings", "items", "nfc")


def flat(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def score(output: str, truth: Truth) -> dict[str, float]:
    """Each metric of the module docstring for one reader's output of one document."""
    text = flat(output)
    nfc = unicodedata.normalize("NFC", output)
    lines = [" ".join(line.split()) for line in nfc.splitlines()]
    found = [text.find(flat(s)) for s in truth.sentences]
    present = [f for f in found if f >= 0]
    in_order = sum(1 for a, b in zip(present, present[1:]) if a < b)

    def row_on_a_line(row: tuple[str, ...], markdown: bool) -> bool:
        sep = r"\s*\|\s*" if markdown else r"[\s|]+"
        pattern = (r"^\|\s*" if markdown else r"") + sep.join(map(re.escape, row)) + (r"\s*\|$" if markdown else "")
        return any(re.search(pattern, line) for line in lines)

    def share(hits: int, total: int) -> float:
        return hits / total if total else 1.0

    return {
        "text": share(len(present), len(found)),
        "order": share(in_order, len(present) - 1) if len(present) > 1 else float(bool(present)),
        "rows": share(sum(row_on_a_line(r, False) for r in truth.rows), len(truth.rows)),
        "md_rows": share(sum(row_on_a_line(r, True) for r in truth.rows), len(truth.rows)),
        "headings": share(sum(any(re.fullmatch(r"#{1,6} " + re.escape(h), line) for line in lines)
                              for h in truth.headings), len(truth.headings)),
        "items": share(sum(any(re.fullmatch(r"(?:\d+[.)]|[-*+]) " + re.escape(i), line) for line in lines)
                           for i in truth.items), len(truth.items)),
        "nfc": float(output == unicodedata.normalize("NFC", output)),
    }


# ------------------------------------------------------------------------------------- readers


def _pypdf(path: Path) -> str:
    import pypdf

    return "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(path).pages)


def _pdfminer(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(path)


def _pdfplumber_plain(path: Path) -> str:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return "\n".join(page.extract_text() or "" for page in pdf.pages)


def _pdfplumber_markdown(path: Path) -> str:
    from engines.corpus.pdf import read_pdf

    return "\n\n".join(read_pdf(path).pages)


def _python_docx(path: Path) -> str:
    """Paragraphs and tables in body order; "Heading N" styles as headings, list styles as items."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(path)
    out = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            out.extend("| " + " | ".join(c.text for c in row.cells) + " |" for row in block.rows)
        elif isinstance(block, Paragraph):
            style = block.style.name if block.style is not None else ""
            level = re.match(r"Heading (\d)", style)
            out.append(("#" * int(level.group(1)) + " " if level else "- " if "List" in style else "") + block.text)
    return "\n".join(out)


def _docx2python(path: Path) -> str:
    from docx2python import docx2python

    with docx2python(path) as document:
        return document.text


def _mammoth_markdownify(path: Path) -> str:
    from engines.corpus.markup import read_docx

    return read_docx(path).markdown


def _markdownify(path: Path) -> str:
    from engines.corpus.markup import read_html

    return read_html(path.read_bytes()).markdown


def _html2text(path: Path) -> str:
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0
    return converter.handle(path.read_text(encoding="utf-8"))


def _trafilatura(path: Path) -> str:
    import trafilatura

    return trafilatura.extract(path.read_text(encoding="utf-8"), output_format="markdown", include_tables=True,
                               include_formatting=True) or ""


#: format -> (reader name, reader); the chosen one of each format is marked in docs/documents.md
READERS: dict[str, tuple[tuple[str, Callable[[Path], str]], ...]] = {
    "pdf": (("pypdf", _pypdf), ("pdfminer.six", _pdfminer), ("pdfplumber (plain text)", _pdfplumber_plain),
            ("pdfplumber + layout (ours)", _pdfplumber_markdown)),
    "docx": (("python-docx (style walk)", _python_docx), ("docx2python", _docx2python),
             ("mammoth + markdownify (ours)", _mammoth_markdownify)),
    "html": (("bs4 + markdownify (ours)", _markdownify), ("html2text", _html2text), ("trafilatura", _trafilatura)),
}


def measure(fixtures: Path) -> list[tuple[str, str, dict[str, float] | None, float]]:
    """(format, reader, mean of each metric over the format's documents or None if not installed, ms/doc)."""
    rows = []
    for fmt, readers in READERS.items():
        documents = [(fixtures / name, truth) for f, name, truth in DOCUMENTS if f == fmt]
        for name, read in readers:
            scores, started = [], time.perf_counter()
            try:
                for path, truth in documents:
                    scores.append(score(read(path), truth))
            except ImportError:
                rows.append((fmt, name, None, 0.0))
                continue
            ms = (time.perf_counter() - started) * 1000 / len(documents)
            rows.append((fmt, name, {m: sum(s[m] for s in scores) / len(scores) for m in METRICS}, ms))
    return rows


def table(rows: list[tuple[str, str, dict[str, float] | None, float]]) -> str:
    """The measurement as a Markdown table."""
    lines = ["| format | reader | " + " | ".join(METRICS) + " | ms/doc |", "|---|---|" + "---|" * (len(METRICS) + 1)]
    for fmt, name, means, ms in rows:
        cells = [f"{means[m]:.2f}" for m in METRICS] + [f"{ms:.0f}"] if means else ["not installed"] + [""] * len(METRICS)
        lines.append(f"| {fmt} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.document_fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="folder of the documents (default: %(default)s)")
    args = parser.parse_args(argv)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # "Could not get FontBBox": about the fonts, not the text
    print(table(measure(args.fixtures)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
