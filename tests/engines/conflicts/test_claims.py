"""Claim-level conflicts: deadlines as values, a value whose period changes with it, claims aligned
to their closest counterpart, abolitions compared with what the other passage states, and declared
replacements (``supersedes``) winning over dates. Texts written for these tests."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from engines.conflicts.deadlines import DATE_UNIT, DAY_OF_MONTH_UNIT, parse_deadlines
from engines.conflicts.graph import analyze, detect_pairs, resolve
from engines.conflicts.negation import find_abolition_cues
from engines.conflicts.subjects import column_header

SAME_TOPIC = np.array([[1.0, 0.95], [0.95, 1.0]])


def flagged(a: str, b: str, **kw) -> list:
    pa = analyze("a", a, dt.date(2024, 1, 1), source="doc-a")
    pb = analyze("b", b, dt.date(2024, 6, 1), source="doc-b")
    return detect_pairs([pa, pb], SAME_TOPIC, sim_threshold=0.5, **kw)


# ------------------------------------------------------------------------------------ deadlines

@pytest.mark.parametrize("text, day", [
    ("Hồ sơ nộp trước ngày 15/03/2025 tại quầy số 2.", dt.date(2025, 3, 15)),
    ("Thời hạn đăng ký kéo dài đến hết ngày 30/09/2024.", dt.date(2024, 9, 30)),
    ("Applications must be received no later than 14 February 2025.", dt.date(2025, 2, 14)),
    ("The offer is extended until March 3, 2025.", dt.date(2025, 3, 3)),
    ("Khách hàng thanh toán chậm nhất là ngày 20 tháng 7 năm 2024.", dt.date(2024, 7, 20)),
])
def test_a_date_set_as_a_limit_is_a_value(text, day):
    (q,) = parse_deadlines(text)
    assert q.unit == DATE_UNIT and q.value == day.toordinal()


@pytest.mark.parametrize("text", [
    "Quyết định số 12/QĐ-CT ban hành ngày 10/06/2024.",
    "Quy định này có hiệu lực từ ngày 01/01/2025.",
    "Issued on 2 May 2024 by the operations office.",
    "Hạn mức 5.000.000 đồng, áp dụng cho hợp đồng ký từ 01/01/2024.",
])
def test_issue_and_effective_dates_are_not_deadlines(text):
    assert parse_deadlines(text) == []


@pytest.mark.parametrize("text, day", [
    ("Khách hàng chưa trả nợ đến hết ngày 20 sẽ bị tính phí chậm trả.", 20),
    ("Invoices must be paid by the 5th of each month.", 5),
    ("Hội viên đóng phí trước hoặc trong ngày 28 của tháng.", 28),
    ("Phí được đóng chậm nhất vào ngày 10 của tháng kế tiếp.", 31 + 10),  # the month after: later than day 28
    ("Dues are paid no later than the 10th day of the month following the invoice.", 31 + 10),
    ("Dues are paid on or before the 3rd of the next month.", 31 + 3),
])
def test_a_monthly_deadline_is_a_day_of_the_month(text, day):
    (q,) = parse_deadlines(text)
    assert (q.unit, q.value) == (DAY_OF_MONTH_UNIT, day)


@pytest.mark.parametrize("text", ["Nộp hồ sơ trước ngày 15/3 tại quầy.", "Lịch họp vào ngày 12 của quý.",
                                  "Nộp đến hết ngày 5 tháng 9 năm 2024."])
def test_a_day_with_its_month_or_without_a_cue_is_not_a_monthly_deadline(text):
    assert all(q.unit != DAY_OF_MONTH_UNIT for q in parse_deadlines(text))


def test_a_moved_monthly_deadline_is_a_conflict():
    old = "Khách hàng chưa trả nợ đến hết ngày 20 sẽ bị tính phí chậm trả."
    moved = "Khách hàng chưa trả nợ đến hết ngày 25 sẽ bị tính phí chậm trả."
    assert [p.kind for p in flagged(old, moved, min_claim_overlap=0.2)] == ["numeric"]
    assert flagged(old, old.replace("Khách hàng", "Người vay"), min_claim_overlap=0.2) == []


def test_a_monthly_deadline_moved_into_the_next_month_is_a_conflict():
    old = "Hội viên đóng phí trước hoặc trong ngày 28 của tháng phát hành thông báo phí."
    moved = "Hội viên đóng phí chậm nhất vào ngày 10 của tháng kế tiếp tháng phát hành thông báo phí."
    (pair,) = flagged(old, moved, min_claim_overlap=0.2)
    assert pair.evidence == ("ngày 28 vs ngày 10",)


def test_a_moved_deadline_is_a_conflict_and_the_same_deadline_is_not():
    old = "Người dùng đăng ký gói ưu đãi trước ngày 31/05/2024. Chương trình không gia hạn."
    moved = "Thời hạn đăng ký gói ưu đãi được gia hạn đến hết ngày 30/09/2024."
    same = "Người dùng đăng ký gói ưu đãi trước ngày 31/05/2024 tại mọi cửa hàng."
    assert [p.kind for p in flagged(old, moved, min_claim_overlap=0.2)] == ["numeric"]
    assert flagged(old, same, min_claim_overlap=0.2) == []
    pa = analyze("a", old, source="doc-a", deadlines=False)
    pb = analyze("b", moved, source="doc-b", deadlines=False)
    assert detect_pairs([pa, pb], SAME_TOPIC, sim_threshold=0.5, min_claim_overlap=0.2) == []


def test_alignment_compares_a_deadline_with_its_closest_claim():
    """The notice repeats the old date in another sentence; aligned claims still see the move."""
    old = "Khách hàng đăng ký tham gia chương trình trước ngày 31/05/2024."
    new = ("Gia hạn thời hạn đăng ký tham gia chương trình đến hết ngày 30/09/2024. "
           "Khách hàng đã đăng ký trước ngày 31/05/2024 không phải đăng ký lại.")
    assert flagged(old, new, align_claims=False) == []  # the old value reappears: read as agreement
    (pair,) = flagged(old, new, align_claims=True)
    assert pair.evidence == ("31/05/2024 vs 30/09/2024",)


# -------------------------------------------------------------------------------- period changes

def test_a_value_whose_period_changes_is_a_conflict():
    old = "Nhân viên được làm việc từ xa tối đa 6 ngày mỗi tháng."
    new = "Nhân viên được làm việc từ xa tối đa 1 ngày mỗi tuần."
    (pair,) = flagged(old, new)
    assert pair.kind == "numeric" and "6 ngày mỗi tháng" in pair.evidence[0]
    assert flagged(old, new, min_period_overlap=None) == []


def test_a_count_of_an_unlisted_noun_whose_period_changes_is_a_conflict():
    old = "Mỗi giảng viên dạy không quá 12 buổi ngoại khóa/tháng."
    new = "Mỗi giảng viên dạy không quá 2 buổi ngoại khóa/tuần."
    (pair,) = flagged(old, new)
    assert pair.kind == "numeric" and "12 buổi ngoại khóa/tháng" in pair.evidence[0]
    assert flagged(old, new, min_period_overlap=None) == []
    assert flagged(old, "Mỗi giảng viên dạy không quá 12 buổi ngoại khóa mỗi tháng.") == []


def test_a_limit_per_visit_beside_a_limit_per_day_is_not_a_period_change():
    old = "Hạn mức chi trả của gói Kim cương: tối đa 3.500.000 đồng/lần khám ngoại trú."
    new = "Hạn mức chi trả của gói Kim cương: tiền phòng tối đa 5.000.000 đồng/ngày nằm viện."
    assert flagged(old, new) == []
    # per visit on both sides is still one limit whose value changed
    (pair,) = flagged(old, "Hạn mức chi trả của gói Kim cương: tối đa 4.000.000 đồng/lần khám ngoại trú.")
    assert pair.evidence == ("3.500.000 đồng/lần vs 4.000.000 đồng/lần",)


def test_rates_that_convert_into_each_other_agree():
    assert flagged("The gateway accepts at most 6000 requests per hour.",
                   "The gateway accepts at most 100 requests per minute.") == []


# ------------------------------------------------------------------------------------ abolitions

def test_a_temporary_suspension_is_not_an_abolition():
    assert find_abolition_cues("Khi vượt hạn mức, dịch vụ bị tạm ngưng đến kỳ cước sau.") == []
    assert find_abolition_cues("Từ tháng 3, công ty ngừng phát hành thẻ giấy.") != []


def test_an_abolition_conflicts_only_with_a_passage_stating_what_it_abolishes():
    notice = ("Bãi bỏ ưu đãi giặt là miễn phí cho khách lưu trú dài ngày kể từ 01/03/2025. "
              "Ưu đãi phiếu ăn sáng giữ nguyên.")
    other = "Khách đặt phòng hạng sang được tặng phiếu ăn sáng tại nhà hàng tầng trệt."
    stated = "Khách lưu trú dài ngày được hưởng ưu đãi giặt là miễn phí hai lần mỗi tuần."
    assert [p.kind for p in flagged(other, notice, min_abolition_overlap=None)] == ["negation"]  # the seed's rule
    assert flagged(other, notice, min_abolition_overlap=0.3) == []
    assert [p.kind for p in flagged(stated, notice, min_abolition_overlap=0.3)] == ["negation"]
    assert flagged(other, notice) == []  # the default


def test_two_amendments_of_one_base_document_share_its_citation_not_a_target():
    """Decisions cite their base document in the preamble and in each article; that citation is not
    what an abolition names."""
    base = "Quyết định số 07/2022/QĐ-KS ngày 03/03/2022"
    notice = (f"Điều 1. Bãi bỏ phụ thu gửi xe đạp ban hành kèm theo {base}, kể từ ngày 01/06/2025. "
              "Kể từ ngày này, khách gửi xe đạp không phải trả phí.")
    amendment = (f"Căn cứ {base} ban hành Quy định sử dụng bãi xe và phụ thu gửi xe đạp; "
                 f"Điều 1. Sửa đổi giờ mở cửa bãi xe tầng hầm thành từ 06:00 đến 23:00. "
                 f"Điều 2. Các nội dung khác của Quy định ban hành kèm theo {base} giữ nguyên.")
    stated = "Phụ thu gửi xe đạp qua đêm là 10.000 đồng/lượt."
    assert flagged(amendment, notice) == []
    assert [p.kind for p in flagged(stated, notice)] == ["negation"]


def test_an_abolition_that_names_a_document_by_its_number_still_targets_it():
    notice = "Bãi bỏ Quyết định số 07/2022/QĐ-KS ngày 03/03/2022."
    stated = "Theo Quyết định số 07/2022/QĐ-KS, phụ thu gửi xe đạp là 10.000 đồng/lượt."
    assert [p.kind for p in flagged(stated, notice)] == ["negation"]


def test_an_abolished_rule_falls_with_every_retrieved_chunk_of_its_document():
    """Only one chunk of the old rule states what is abolished; its other chunks (how to register,
    what happens on a breach) belong to the same rule and must not crowd the new one out of the answer."""
    notice = analyze("n#0", "Quy định làm việc tại văn phòng tối thiểu 3 ngày mỗi tuần không còn áp dụng.",
                     dt.date(2024, 6, 1), source="remote-2024")
    stated = analyze("o#0", "Nhân viên làm việc tại văn phòng tối thiểu 3 ngày mỗi tuần.", dt.date(2024, 1, 1),
                     source="remote-2023")
    procedure = analyze("o#1", "Đề nghị làm việc từ xa lập theo mẫu NS-21, trình trưởng phòng phê duyệt.",
                        dt.date(2024, 1, 1), source="remote-2023")
    unrelated = analyze("u#0", "Đề nghị nghỉ phép lập theo mẫu NS-02, trình trưởng phòng phê duyệt.",
                        dt.date(2024, 1, 1), source="leave-2023")
    sim = np.full((4, 4), 0.95)
    np.fill_diagonal(sim, 1.0)
    pairs = detect_pairs([notice, stated, procedure, unrelated], sim, sim_threshold=0.5)
    assert {(p.a, p.b) for p in pairs if p.kind == "negation"} == {("n#0", "o#0"), ("n#0", "o#1")}


# ------------------------------------------------------------------------------ declared winners

def test_a_declared_replacement_wins_without_dates_and_against_them():
    text_old, text_new = "Phí đổi vé là 200.000 đồng mỗi lần.", "Phí đổi vé là 300.000 đồng mỗi lần."
    for date_old, date_new in ((None, None), (dt.date(2024, 5, 1), dt.date(2024, 5, 1)),
                               (dt.date(2025, 1, 1), dt.date(2024, 1, 1))):
        old = analyze("o", text_old, date_old, source="fees-v1")
        new = analyze("n", text_new, date_new, source="fees-v2", supersedes=("fees-v1",))
        pairs = detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5, companion_veto=False)
        res = resolve([old, new], pairs)
        assert res.kept_ids == ("n",) and res.clusters[0].basis == "supersedes"
    undeclared = analyze("n", text_new, dt.date(2024, 5, 1), source="fees-v2")
    same_day = analyze("o", text_old, dt.date(2024, 5, 1), source="fees-v1")
    pairs = detect_pairs([same_day, undeclared], SAME_TOPIC, sim_threshold=0.5, companion_veto=False)
    assert resolve([same_day, undeclared], pairs).clusters[0].kind == "unresolved"


# --------------------------------------------------------------------------- partial supersession

def test_a_newer_document_sets_aside_only_the_sentences_it_changes():
    old = analyze("old", "Phí cấp lại thẻ thành viên là 50.000 đồng/lần. Thẻ được cấp trong vòng 3 ngày làm việc "
                         "kể từ khi nộp đủ hồ sơ tại quầy lễ tân.", dt.date(2023, 1, 1), source="rules-2023")
    new = analyze("new", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.", dt.date(2024, 6, 1), source="amend-2024")
    pairs = detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5)
    whole = resolve([old, new], pairs)
    assert whole.dropped_ids == ("old",) and whole.trimmed == ()
    part = resolve([old, new], pairs, partial=True)
    assert part.kept_ids == ("old", "new") and part.dropped_ids == ()
    ((trimmed_id, spans),) = part.trimmed
    assert trimmed_id == "old" and old.text[spans[0][0]:spans[0][1]].startswith("Phí cấp lại thẻ thành viên là 50.000")
    from engines.conflicts.partial import without_spans

    left = without_spans(old.text, spans)
    assert "50.000" not in left and "3 ngày làm việc" in left


def test_a_stale_part_of_a_clause_takes_the_whole_clause_with_it():
    from engines.conflicts.partial import without_spans

    old = analyze("old", "2.1. Phí cấp lại thẻ là 50.000 đồng/lần; sau 30 ngày không nhận thẻ thì thẻ bị hủy.\n"
                         "2.2. Thẻ được cấp trong vòng 3 ngày làm việc kể từ khi nộp đủ hồ sơ tại quầy lễ tân.",
                  dt.date(2023, 1, 1), source="rules-2023")
    new = analyze("new", "Phí cấp lại thẻ là 80.000 đồng/lần.", dt.date(2024, 6, 1), source="amend-2024")
    part = resolve([old, new], detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5), partial=True)
    ((_, spans),) = part.trimmed
    left = without_spans(old.text, spans)
    assert left.startswith("2.2. Thẻ được cấp")  # no "2.1." and no "sau 30 ngày ..." fragment left behind
    assert "50.000" not in left and "sau 30 ngày" not in left


def test_a_passage_with_nothing_left_is_set_aside_whole():
    old = analyze("old", "Phí cấp lại thẻ là 50.000 đồng/lần.", dt.date(2023, 1, 1), source="a")
    new = analyze("new", "Phí cấp lại thẻ là 80.000 đồng/lần.", dt.date(2024, 1, 1), source="b")
    res = resolve([old, new], detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5), partial=True)
    assert res.dropped_ids == ("old",) and res.trimmed == ()


_OLD_RULES = ("Phí cấp lại thẻ thành viên là 50.000 đồng/lần. Thẻ được cấp trong vòng 3 ngày làm việc "
              "kể từ khi nộp đủ hồ sơ tại quầy lễ tân.")


@pytest.mark.parametrize("title, text, trimmed", [
    ("Quyết định sửa đổi, bổ sung một số điều của Quy định cấp thẻ", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.",
     True),
    ("Notice of amendment to the card rules", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.", True),
    ("Quyết định số 7/2024", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần. Các nội dung khác của Quy định "
     "ban hành kèm theo Quyết định số 3/2023 giữ nguyên.", True),
    # a new fee schedule or edition replaces the whole older passage
    ("Biểu phí dịch vụ thẻ năm 2024", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.", False),
    # "bổ sung" naming a thing, not the act of amending
    ("Quyết định ngừng cung cấp điều khoản bổ sung BS-02", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.", False),
])
def test_amendments_mode_trims_only_what_an_amending_document_changed(title, text, trimmed):
    old = analyze("old", _OLD_RULES, dt.date(2023, 1, 1), source="rules-2023", title="Quy định cấp thẻ thành viên")
    new = analyze("new", text, dt.date(2024, 6, 1), source="amend-2024", title=title)
    pairs = detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5)
    res = resolve([old, new], pairs, partial="amendments")
    assert res.clusters and res.clusters[0].winner_id == "new"
    if trimmed:
        assert res.kept_ids == ("old", "new") and [i for i, _ in res.trimmed] == ["old"]
    else:
        assert res.dropped_ids == ("old",) and res.trimmed == ()
    assert resolve([old, new], pairs, partial="off").dropped_ids == ("old",)


def test_amendments_mode_sets_aside_a_declared_replacement_whole():
    old = analyze("old", _OLD_RULES, dt.date(2023, 1, 1), source="rules-2023")
    new = analyze("new", "Phí cấp lại thẻ thành viên là 80.000 đồng/lần.", dt.date(2024, 6, 1), source="amend-2024",
                  title="Quyết định sửa đổi Quy định cấp thẻ", supersedes=("rules-2023",))
    res = resolve([old, new], detect_pairs([old, new], SAME_TOPIC, sim_threshold=0.5), partial="amendments")
    assert res.dropped_ids == ("old",) and res.clusters[0].basis == "supersedes"


def test_a_table_cell_is_named_by_its_column_header():
    """The fee for applying in person, as a table cell and as a sentence: the same claim."""
    table = ("| Thủ tục | Nộp trực tiếp | Nộp trực tuyến |\n|---|---|---|\n"
             "| Cấp đổi giấy phép | 45.000 đồng/lần | 20.000 đồng/lần |")
    sentence = "2.3. Lệ phí: 30.000 đồng/lần khi nộp trực tiếp."  # the procedure is named in a heading above
    assert [p.kind for p in flagged(sentence, table, min_claim_overlap=0.3)] == ["numeric"]
    assert flagged(sentence, table, min_claim_overlap=0.3, table_headers=False) == []


@pytest.mark.parametrize("text, value, header", [
    ("| Thủ tục | Nộp trực tiếp |\n|---|---|\n| Cấp đổi | 45.000 đồng |", "45.000", "Nộp trực tiếp"),
    ("| Cấp đổi | 45.000 đồng |", "45.000", ""),  # the chunk starts below the header: no column name
    ("|---|---|\n| Cấp đổi | 45.000 đồng |", "45.000", ""),  # a rule line is not a header
    ("Lệ phí cấp đổi: 45.000 đồng.", "45.000", ""),  # not a table
])
def test_column_header_names_the_cell_column_only_when_the_table_shows_it(text, value, header):
    assert column_header(text, text.index(value)) == header
