"""The format comparison: Markdown files turned into HTML, DOCX and PDF by the real tools."""

import shutil

import pytest

from engines.corpus.documents import load_corpus
from evals.formats import convert, front_matter

DOC = """---
doc_id: zz-leave-2024
title: Quy chế nghỉ phép 2024
date: 2024-03-01
---
# Điều 1. Phép năm

Nhân viên chính thức được nghỉ **12 ngày** phép năm.

| Thâm niên | Ngày phép |
|---|---|
| Dưới 5 năm | 12 ngày |
"""


def test_front_matter_gives_the_simple_fields():
    assert front_matter(DOC) == {"doc_id": "zz-leave-2024", "title": "Quy chế nghỉ phép 2024", "date": "2024-03-01"}
    assert front_matter("# no front matter") == {}


@pytest.mark.parametrize("fmt", ["html", "docx", "pdf"])
def test_each_format_reads_back_with_its_id_title_date_and_values(tmp_path, fmt):
    for tool in ("pandoc", "chromium") if fmt == "pdf" else ("pandoc",):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "leave.md").write_text(DOC, encoding="utf-8")
    folder = convert(corpus, tmp_path / "files", fmt)
    assert [p.name for p in folder.iterdir()] == [f"zz-leave-2024.{fmt}"]  # named by doc_id
    (doc,) = load_corpus(folder)
    assert doc.doc_id == "zz-leave-2024" and doc.metadata["date"] == "2024-03-01"
    assert "12 ngày" in doc.text and "Dưới 5 năm" in doc.text
    assert doc.metadata["title"].startswith("Quy chế nghỉ phép")
