"""Rewrite audit: answered, unchanged and invented-content flags."""

from __future__ import annotations

import json

from evals.audit import audit_query, audit_rows, audit_summary, significant_words
from evals.dataset import parse_rows
from evals.runner import RowResult

HISTORY = ["Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", "Không có phép năm.",
           "Còn hợp đồng thời vụ thì sao?", "1 ngày phép mỗi tháng làm việc đủ."]
QUESTION = "Cái đó có được cộng dồn không?"


def test_good_rewrite_has_no_flag():
    answered, unchanged, new = audit_query(QUESTION, "Ngày phép của hợp đồng thời vụ có được cộng dồn không?", HISTORY)
    assert (answered, unchanged, new) == (False, False, [])


def test_answer_instead_of_rewrite_is_flagged_answered():
    answered, _, _ = audit_query(QUESTION, "Được cộng dồn tối đa 5 ngày.", HISTORY)
    assert answered


def test_copied_question_is_flagged_unchanged():
    _, unchanged, _ = audit_query(QUESTION, "cái đó CÓ được cộng dồn không", HISTORY)
    assert unchanged
    _, unchanged, _ = audit_query("What about version 1.2?", "What is the rate limit in version 1.2?", [])
    assert not unchanged


def test_invented_detail_is_flagged_new_content():
    _, _, new = audit_query(QUESTION, "Ngày phép thời vụ năm 2025 có được cộng dồn sang hợp đồng chính thức không?",
                            HISTORY)
    assert new == ["2025", "chính", "thức"]


def test_stopwords_and_short_tokens_are_ignored():
    assert significant_words("What is the fee of the card?") == ["fee", "card"]
    _, _, new = audit_query("Còn thẻ Vàng?", "Thì phí của thẻ Vàng là gì?", ["Phí thẻ Bạch Kim là bao nhiêu?"])
    assert new == []


def test_audit_rows_covers_non_standalone_rows_and_uses_the_seen_history():
    rows = parse_rows([
        json.dumps({"conv_id": "c", "turn": 1, "history": [], "question": "Thẻ Vàng phí bao nhiêu?",
                    "type": "standalone", "gold_doc_ids": ["g"]}, ensure_ascii=False),
        json.dumps({"conv_id": "c", "turn": 2, "history": [["user", "Thẻ Vàng phí bao nhiêu?"], ["assistant", "200.000"]],
                    "question": "Còn thẻ Bạch Kim?", "type": "non_standalone", "gold_doc_ids": ["g"]}, ensure_ascii=False),
    ])
    results = [
        RowResult("condense", 0, rows[0], query=rows[0].question),
        RowResult("condense", 1, rows[1], query="Phí thường niên thẻ Bạch Kim 2024 là bao nhiêu?",
                  condense_fallback=None, history_seen=(("user", "Thẻ Vàng phí thường niên bao nhiêu?"),)),
    ]
    [entry] = audit_rows(results, "condense")
    assert entry.turn == 2 and entry.flags == ["new_content"] and entry.new_words == ["2024"]
    summary = audit_summary([entry])
    assert summary == {"condense": {"n": 1, "answered": 0, "unchanged": 0, "new_content": 1, "flagged": 1,
                                    "fallbacks": {}}}
    assert entry.to_dict()["flags"] == ["new_content"]


def test_a_resolved_code_is_not_flagged_unchanged():
    # "Mẫu đó" ("that form") resolved to the form's code: short tokens, but content
    answered, unchanged, _ = audit_query("Mẫu đó nộp ở đâu?", "Mẫu 05/TD nộp ở đâu?", ["Dùng mẫu 05/TD."])
    assert not unchanged and not answered
    assert audit_query("Mẫu đó nộp ở đâu?", "Mẫu đó nộp ở đâu?", [])[1]
