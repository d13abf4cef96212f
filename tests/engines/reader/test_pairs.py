"""Training groups: what a question is trained against, at chunk and clause grain."""

import json
import random

import pytest

from engines.errors import DocumentError
from engines.reader.examples import load_training_set
from engines.reader.inputs import conversation_text, passage_text
from engines.reader.pairs import ANSWER, SCOPE, Chunk, answer_groups, chunk_set, histories, scope_groups

DOC_A = """\
---
doc_id: zz-rates-2025
title: Bảng giá phòng 2025
date: 2025-01-01
---
# Bảng giá phòng 2025

Phòng đơn có giá 900.000 đồng/đêm vào ngày thường.

Phòng đôi có giá 1.400.000 đồng/đêm vào ngày thường.

Cuối tuần, mọi hạng phòng cộng thêm 20% giá.
"""
DOC_B = """\
---
doc_id: zz-rates-2024
title: Bảng giá phòng 2024
date: 2024-01-01
---
Phòng đơn có giá 800.000 đồng/đêm vào ngày thường.
"""


def _turn(conv, turn, question, answerable, evidence=(), negatives=(), must=(), kind="standalone"):
    return {"conv_id": conv, "turn": turn, "lang": "vi", "question": question, "kind": kind,
            "rewrite": question + " (viết lại)", "answerable": answerable, "answer": "Trả lời.",
            "must_contain": list(must), "evidence": [{"doc_id": d, "quote": q} for d, q in evidence],
            "negatives": [{"doc_id": d, "quote": q, "kind": k} for d, q, k in negatives]}


@pytest.fixture
def training_set(tmp_path):
    folder = tmp_path / "zz"
    (folder / "corpus").mkdir(parents=True)
    (folder / "corpus" / "zz-rates-2025.md").write_text(DOC_A, encoding="utf-8")
    (folder / "corpus" / "zz-rates-2024.md").write_text(DOC_B, encoding="utf-8")
    rows = [
        _turn("zz-c1", 1, "Phòng đơn giá bao nhiêu?", True,
              [("zz-rates-2025", "Phòng đơn có giá 900.000 đồng/đêm vào ngày thường.")],
              [("zz-rates-2024", "Phòng đơn có giá 800.000 đồng/đêm vào ngày thường.", "older_version"),
               ("zz-rates-2025", "Phòng đôi có giá 1.400.000 đồng/đêm vào ngày thường.", "other_item")],
              must=["900.000"]),
        _turn("zz-c1", 2, "Còn phòng gia đình?", False, (),
              [("zz-rates-2025", "Phòng đôi có giá 1.400.000 đồng/đêm vào ngày thường.", "on_topic")],
              kind="follow_up"),
    ]
    (folder / "conversations.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                                encoding="utf-8")
    pair = {"pair_id": "zz-p1", "a": {"doc_id": "zz-rates-2024", "quote": "Phòng đơn có giá 800.000 đồng/đêm"},
            "b": {"doc_id": "zz-rates-2025", "quote": "Phòng đơn có giá 900.000 đồng/đêm"},
            "same_scope": True, "conflict": True, "kind": "value_changed"}
    (folder / "claim_pairs.jsonl").write_text(json.dumps(pair, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


def _paragraphs(doc):
    return [p for p in doc.text.split("\n\n") if p.strip()]


def test_conversation_text_puts_the_question_first_and_reads_one_exchange_back():
    history = [("user", "Phòng đơn giá bao nhiêu?"), ("assistant", "900.000 đồng/đêm.")]
    text = conversation_text("Còn phòng đôi?", "Phòng đôi giá bao nhiêu?", history)
    assert text.split(" | ") == ["Phòng đôi giá bao nhiêu?", "Còn phòng đôi?", "Phòng đơn giá bao nhiêu?",
                                 "900.000 đồng/đêm."]
    assert conversation_text("Giá phòng?", "giá  phòng?") == "Giá phòng?"  # a rewrite that changed nothing
    assert passage_text("Bảng giá\nPhòng đơn", "Bảng giá") == "Bảng giá\nPhòng đơn"


def test_groups_hold_the_evidence_as_positive_and_the_tempting_quotes_as_negatives(training_set):
    ts = load_training_set(training_set)
    chunks = chunk_set(ts, _paragraphs)
    groups = answer_groups(ts, chunks, random.Random(0), group_size=4)
    first_chunk, first_clause, unanswerable = groups
    assert first_chunk.task == ANSWER and first_chunk.labels[0] == 1.0 and first_chunk.labels.count(1.0) == 1
    assert "900.000" in first_chunk.passages[0]
    assert all("900.000" not in p for p in first_chunk.passages[1:])
    assert any("800.000" in p for p in first_chunk.passages[1:])  # the older version is trained against
    assert first_clause.source.endswith("/clause") and first_clause.passages[0].startswith("Bảng giá phòng 2025")
    assert 1.0 not in unanswerable.labels  # nothing answers it: the pointwise loss only
    assert [len(h) for h in histories(ts.turns)] == [0, 2]


def test_scope_pairs_train_the_second_head(training_set):
    ts = load_training_set(training_set)
    (group,) = scope_groups(ts)
    assert group.task == SCOPE and group.labels == (1.0,) and "800.000" in group.query


def test_a_quote_that_is_not_in_its_document_is_named_with_its_line(training_set):
    path = training_set / "conversations.jsonl"
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[1] = rows[1].replace("Phòng đôi có giá", "Phòng ba có giá")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"conversations.jsonl:2: quote is not an exact substring"):
        load_training_set(training_set)


def test_chunks_carry_their_title():
    chunk = Chunk("d", "Tiêu đề", "Nội dung")
    assert chunk.passage == "Tiêu đề\nNội dung"
