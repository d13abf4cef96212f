"""The chosen readers keep everything the fidelity measurement checks, on every fixture document."""

import pytest

from evals.document_fidelity import DOCUMENTS, FIXTURES, METRICS, READERS, score

CHOSEN = {"pdf": "pdfplumber + layout (ours)", "docx": "mammoth + markdownify (ours)", "html": "bs4 + markdownify (ours)"}


@pytest.mark.parametrize("fmt, name, truth", DOCUMENTS, ids=[name for _, name, _ in DOCUMENTS])
def test_chosen_reader_keeps_text_order_tables_headings_and_lists(fmt, name, truth):
    read = dict(READERS[fmt])[CHOSEN[fmt]]
    scores = score(read(FIXTURES / name), truth)
    assert scores == {metric: 1.0 for metric in METRICS}


def test_score_notices_what_plain_text_loses():
    truth = DOCUMENTS[0][2]
    plain = "\n".join(truth.headings + truth.sentences + tuple(" ".join(row) for row in truth.rows))
    scores = score(plain, truth)
    assert scores["text"] == 1.0 and scores["rows"] == 1.0
    assert scores["md_rows"] == 0.0 and scores["headings"] == 0.0 and scores["items"] == 0.0
