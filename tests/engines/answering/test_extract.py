"""Extractive answers: clauses are split, deduplicated, ranked and quoted with their document."""

from dataclasses import replace

import pytest

from engines.answering import clauses as cl
from engines.answering import extract as ex
from engines.steps import check
from engines.text import other_language

SEASONAL = """# Nghỉ phép năm đối với nhân viên hợp đồng thời vụ

## Điều 2. Số ngày phép năm

2.1. Nhân viên thời vụ được hưởng 1 ngày phép năm có lương cho mỗi tháng làm việc đủ. Tháng làm việc đủ là tháng có từ 20 ngày công thực tế trở lên.

2.2. Ví dụ: hợp đồng thời vụ 6 tháng được tối đa 6 ngày phép; lãi suất 8,5%/năm không tách câu.
"""
OVERLAP = "2.1. Nhân viên thời vụ được hưởng 1 ngày phép năm có lương cho mỗi tháng làm việc đủ."


def test_clauses_keep_their_number_heading_and_decimals_and_skip_repeats():
    clauses = cl.split_clauses([SEASONAL, OVERLAP])
    texts = [c.text for c in clauses]
    assert texts[0] == "2.1. Nhân viên thời vụ được hưởng 1 ngày phép năm có lương cho mỗi tháng làm việc đủ."
    assert texts[1].startswith("Tháng làm việc đủ")  # a second sentence on the same line
    assert "8,5%/năm không tách câu" in texts[2]
    assert len(clauses) == 3  # the overlapping chunk's copy of 2.1 is not quoted twice
    assert clauses[0].heading == "Điều 2. Số ngày phép năm"
    assert not any(t.startswith("#") for t in texts)


def test_a_frame_sentence_on_one_line_with_a_rule_leaves_the_rule():
    line = "Kính gửi: Quý khách. Từ ngày 01/06/2025, phí gửi xe máy là 5.000 đồng/lượt."
    assert [c.text for c in cl.split_clauses([line])] == ["Từ ngày 01/06/2025, phí gửi xe máy là 5.000 đồng/lượt."]


def test_a_decisions_frame_is_never_quoted():
    """The number and date line, the signing authority in capitals and the legal bases state no rule;
    quoted, they take a clause's place."""
    decision = "\n".join([
        "**Số: 31/2025/QĐ-TV** — Đà Nẵng, ngày 02 tháng 03 năm 2025",
        "HIỆU TRƯỞNG TRƯỜNG CAO ĐẲNG THANH VÂN",
        "Kính gửi: Các em sinh viên khóa 2024.",
        "Căn cứ Quyết định số 11/2022/QĐ-TV ngày 05/01/2022 ban hành Quy chế thư viện;",
        "QUYẾT ĐỊNH:",
        "**Điều 1.** Sinh viên được mượn tối đa 5 cuốn sách trong 14 ngày.",
        "Nơi nhận: Như Điều 1; Lưu: VT.",
        "Số 12 Lê Lợi là địa chỉ thư viện cơ sở 2.",
    ])
    assert [c.text for c in cl.split_clauses([decision])] == [
        "**Điều 1.** Sinh viên được mượn tối đa 5 cuốn sách trong 14 ngày.",
        "Số 12 Lê Lợi là địa chỉ thư viện cơ sở 2.",
    ]


def test_a_section_title_in_bold_is_never_quoted():
    """Documents converted from a word processor mark sections in bold; a chunk may cut the markers in
    two. Quoted, the title stood in for the clause that answers ("Quyền lợi nha khoa và thai sản**")."""
    rules = "\n\n".join([
        "Phạm vi áp dụng của quy tắc bảo hiểm**",
        "**Điều 6. Thời gian chờ đối với các quyền lợi**",
        "- Bệnh đặc biệt chờ 90 ngày kể từ ngày hiệu lực.",
        "__Các trường hợp loại trừ bảo hiểm:__",
        "**Điều 3.** Phòng Tài chính chịu trách nhiệm thi hành.",
        "**Phí cấp lại thẻ: 50.000 đồng/lần**",
        "**Hồ sơ nộp muộn không được giải quyết trong mọi trường hợp.**",
    ])
    assert [c.text for c in cl.split_clauses([rules])] == [
        "Bệnh đặc biệt chờ 90 ngày kể từ ngày hiệu lực.",
        "**Điều 3.** Phòng Tài chính chịu trách nhiệm thi hành.",
        "**Phí cấp lại thẻ: 50.000 đồng/lần**",
        "**Hồ sơ nộp muộn không được giải quyết trong mọi trường hợp.**",
    ]


def test_a_bold_section_title_heads_the_clauses_below_it_when_asked():
    """"- Pin: 12 tháng;" alone does not say it is a warranty period; under its bold title it does."""
    rules = "\n\n".join(["**Điều 4. Thời hạn bảo hành**", "- Thân máy và bo mạch: 24 tháng;", "- Pin: 12 tháng;",
                           "## Điều 5. Phí sửa chữa", "Phí kiểm tra máy ngoài bảo hành là 50.000 đồng."])
    assert [(c.text, c.heading) for c in cl.split_clauses([rules], bold_headings=True)] == [
        ("Thân máy và bo mạch: 24 tháng;", "Điều 4. Thời hạn bảo hành"), ("Pin: 12 tháng;", "Điều 4. Thời hạn bảo hành"),
        ("Phí kiểm tra máy ngoài bảo hành là 50.000 đồng.", "Điều 5. Phí sửa chữa")]
    assert [c.heading for c in cl.split_clauses([rules])][:2] == ["", ""]
    chosen = [(c, 1.0) for c in cl.split_clauses([rules], bold_headings=True)[1:]]
    assert ex.compose_answer(chosen, ["Chính sách bảo hành"], "vi").splitlines()[1:] == [
        "- Điều 4. Thời hạn bảo hành — Pin: 12 tháng; (Chính sách bảo hành)",  # short: says what it is with its heading
        "- Phí kiểm tra máy ngoài bảo hành là 50.000 đồng. (Chính sách bảo hành)"]


def test_a_list_item_keeps_the_lead_in_that_introduced_its_list_when_asked():
    """"5 ngày nghỉ khi chuyển ra ngoài tỉnh." alone does not say whose leave it is; its lead-in does."""
    rules = "\n".join([
        "Khi chuyển nơi công tác, nhân viên được nghỉ:",
        "- 3 ngày nghỉ khi chuyển trong tỉnh;",
        "- 5 ngày nghỉ khi chuyển ra ngoài tỉnh.",
        "Nhân viên tự thu xếp phương tiện đi lại.",
        "4.2. Hoàn phí: chỉ trong hai trường hợp: (a) hủy trước hạn; (b) theo yêu cầu công ty, mức 100% phí."])
    leads = [(c.text, c.lead) for c in cl.split_clauses([rules], lead_ins=True)]
    assert leads == [
        ("Khi chuyển nơi công tác, nhân viên được nghỉ:", ""),
        ("3 ngày nghỉ khi chuyển trong tỉnh;", "Khi chuyển nơi công tác, nhân viên được nghỉ"),
        ("5 ngày nghỉ khi chuyển ra ngoài tỉnh.", "Khi chuyển nơi công tác, nhân viên được nghỉ"),
        ("Nhân viên tự thu xếp phương tiện đi lại.", ""),  # the full stop closed the list
        ("4.2. Hoàn phí: chỉ trong hai trường hợp: (a) hủy trước hạn;", ""),
        ("(b) theo yêu cầu công ty, mức 100% phí.", "4.2. Hoàn phí: chỉ trong hai trường hợp")]
    assert all(c.lead == "" for c in cl.split_clauses([rules]))  # off: items stand alone
    item = cl.split_clauses([rules], lead_ins=True)[2]
    assert ex.scoring_text(item, "Chế độ công tác") == ("Chế độ công tác. Khi chuyển nơi công tác, nhân viên được nghỉ. "
                                                         "5 ngày nghỉ khi chuyển ra ngoài tỉnh.")


def test_the_rule_under_a_table_header_is_no_clause_and_a_table_ends_its_lead_in():
    table = "\n".join([
        "Bảng giá áp dụng như sau:",
        "| Gói cước | Giá | Thời hạn |",
        "|--------------|--------------|--------------|",
        "| Gói SAO2 | 135.000 đồng | 30 ngày |",
        "Giá cước đã bao gồm thuế giá trị gia tăng"])
    assert [(c.text, c.lead) for c in cl.split_clauses([table], lead_ins=True)] == [
        ("| Gói cước | Giá | Thời hạn |", "Bảng giá áp dụng như sau"),
        ("| Gói SAO2 | 135.000 đồng | 30 ngày |", "Bảng giá áp dụng như sau"),
        ("Giá cước đã bao gồm thuế giá trị gia tăng", "")]  # after the table, though no full stop closed it


@pytest.mark.parametrize("line", [
    "Căn cứ Thông báo chương trình học bổng ngày 01/07/2024, Giám đốc Cơ sở Hải Châu thông báo:",
    "Nhằm tạo thuận lợi cho người bệnh, Bệnh viện thông báo điều chỉnh Điều 4 Quy định đặt lịch như sau:",
    "The branch changes its opening hours as follows:",
])
def test_a_lead_in_announcing_what_follows_is_a_frame(line):
    assert cl.is_frame_line(line)


@pytest.mark.parametrize("line", ["Trong 30 ngày đầu kể từ ngày vợ sinh con, lao động nam được nghỉ:",
                                  "Gia hạn thời hạn nộp học phí đến hết ngày 15/11/2024 đối với:",
                                  "Khách hàng được thông báo trước 30 ngày khi phí thay đổi."])
def test_a_lead_in_that_states_a_fact_stays_a_clause(line):
    assert not cl.is_frame_line(line)


@pytest.mark.parametrize("line", ["SIM 4G/5G: 50.000 VNĐ", "Số ngày phép năm là 12 ngày.", "No. of days: 5",
                                  "The API LIMIT is 500 per minute.", "Số 12/3 Lê Lợi, Quận 1.",
                                  "Căn cứ kết quả đánh giá, nhân viên loại A được thưởng 2 tháng lương.",
                                  "LƯU Ý: KHÔNG HÚT THUỐC TRONG KHUÔN VIÊN."])
def test_statements_with_capitals_or_a_number_word_stay_clauses(line):
    assert not cl.is_frame_line(line)


def test_scoring_text_names_the_document_and_section():
    clause = cl.split_clauses([SEASONAL])[0]
    assert ex.scoring_text(clause, "Nghỉ phép năm của nhân viên hợp đồng thời vụ").startswith(
        "Nghỉ phép năm của nhân viên hợp đồng thời vụ. Điều 2. Số ngày phép năm. 2.1.")


def test_selection_takes_the_best_and_keeps_reading_order():
    clauses = cl.split_clauses([SEASONAL])
    chosen = ex.select_clauses(clauses, [0.80, 0.90, 0.87], ex.ExtractConfig(max_clauses=2))
    assert [c for c, _ in chosen] == [clauses[1], clauses[2]]
    short = ex.select_clauses(clauses, [0.95, 0.90, 0.87], ex.ExtractConfig(max_clauses=3, max_chars=100))
    assert [c for c, _ in short] == [clauses[0]]  # the char budget stops before the second clause
    with pytest.raises(ValueError):
        ex.select_clauses(clauses, [0.9], ex.ExtractConfig())


def test_words_break_a_near_tie_in_meaning():
    # cosines 0.90 vs 0.89; the second clause holds the question's rare words
    scores = ex.combined_scores([0.90, 0.89, 0.50], [0.0, 5.0, 4.0], weight=0.02)
    assert scores[1] > scores[0] > scores[2]
    assert ex.combined_scores([0.90, 0.89], [0.0, 5.0], weight=0.0) == [0.90, 0.89]  # off: meaning alone
    assert ex.combined_scores([0.5], [0.0], weight=0.02) == [0.5]  # no word in common: no division by zero


def test_lexical_scores_weigh_rare_question_words():
    texts = ["Hạn mức chuyển khoản 500 triệu đồng", "Hạn mức mỗi giao dịch 200 triệu đồng",
             "PNB Open Banking API: up to 500 requests per minute"]
    scores = ex.lexical_scores("Hạn mức gọi API Open Banking là bao nhiêu?", texts)
    assert scores[2] > scores[0] and scores[2] > scores[1]
    assert ex.lexical_scores("", texts) == [0.0, 0.0, 0.0]


def test_lexical_scores_equal_bm25s_defaults():
    """The direct computation is bm25s's Lucene BM25 (duplicate query words, clauses with no
    token and words outside the clauses included), so the clause ranking did not change with it."""
    import random

    import bm25s
    import numpy as np

    from engines.retrieval.bm25 import tokenize

    rng = random.Random(7)
    words = ["phép", "năm", "SKU-4417", "hạn", "mức", "API", "8,5%", "ngày", "không", "thời vụ"]
    for _ in range(200):
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(1, 12))]
        query = " ".join(rng.choice(words + ["zzz"]) for _ in range(rng.randint(1, 5)))
        reference = bm25s.BM25()
        reference.index([tokenize(t) or [""] for t in texts], show_progress=False)
        expected = reference.get_scores(tokenize(query)) if any(tokenize(t) for t in texts) else [0.0] * len(texts)
        np.testing.assert_allclose(ex.lexical_scores(query, texts), expected, rtol=1e-5, atol=1e-6)


def test_answer_quotes_clauses_with_titles_in_the_question_language():
    calls = []

    def similarity(query, texts):
        calls.append(len(texts))
        return [0.9 if "1 ngày phép" in t else 0.5 for t in texts]

    text, chosen = ex.extract_answer("Nhân viên thời vụ được nghỉ phép năm bao nhiêu ngày?", [SEASONAL],
                                     ["Nghỉ phép năm của nhân viên hợp đồng thời vụ"], "vi", similarity,
                                     ex.ExtractConfig(max_clauses=1))
    assert calls == [3]  # every clause scored in one call
    assert text == ("Theo tài liệu:\n- 2.1. Nhân viên thời vụ được hưởng 1 ngày phép năm có lương cho mỗi tháng "
                    "làm việc đủ. (Nghỉ phép năm của nhân viên hợp đồng thời vụ)")
    assert ex.extract_answer("q", ["# only a heading"], ["t"], "en", similarity) == ("", [])
    english, _ = ex.extract_answer("q", [SEASONAL], ["T"], "en", similarity)
    assert english.startswith("From the documents:\n- ")


def test_check_prompt_shows_exactly_the_quoted_clauses():
    clauses = cl.split_clauses([SEASONAL])
    chosen = [(clauses[0], 0.9)]
    system, user = check.check_prompt("Nhân viên thời vụ được nghỉ mấy ngày?", chosen, ["Nghỉ phép thời vụ"])
    assert "YES" in system and "NO" in system
    assert clauses[0].text in user and clauses[1].text not in user
    assert "Câu hỏi: Nhân viên thời vụ được nghỉ mấy ngày?" in user


@pytest.mark.parametrize("reply, no", [("NO", True), (" no.", True), ("Không", True), ("**NO**", True),
                                       ("YES", False), ("Có", False), ("", False), ("Not sure", False), ("Nothing", False)])
def test_only_an_explicit_no_refuses(reply, no):
    assert check.check_says_no(reply) is no


def test_clause_vectors_are_embedded_once_and_evicted_oldest_first():
    batches = []

    def embed(texts):
        batches.append(list(texts))
        return [[float(len(t))] for t in texts]

    cache = ex.ClauseVectorCache(capacity=3)
    assert cache.vectors(["a", "bb", "a"], embed).tolist() == [[1.0], [2.0], [1.0]]  # one row per text
    assert cache.vectors(["bb", "ccc"], embed).tolist() == [[2.0], [3.0]]
    assert batches == [["a", "bb"], ["ccc"]]  # one batch per call, only what was not seen
    cache.vectors(["dddd"], embed)  # over capacity: "a" (least recently used) goes
    assert len(cache) == 3
    cache.vectors(["a"], embed)
    assert batches[-1] == ["a"]


def test_the_clause_stating_a_number_of_the_counted_thing_is_quoted_first():
    passage = ("Một buổi học thử kéo dài 90 phút.\n"
               "Mỗi học viên được học thử không quá 2 buổi mỗi khóa.\n"
               "Sau buổi học thử, học viên nhận phiếu đánh giá.")

    def flat(query, texts):  # an embedder that cannot tell the clauses apart
        return [0.8] * len(texts)

    def best(weight):
        clauses, scores = ex.rank_clauses("Học viên được học thử tối đa bao nhiêu buổi?", [passage], ["Học thử"], flat,
                                          ex.ExtractConfig(count_weight=weight, lexical_weight=0.0))
        return max(zip(clauses, scores), key=lambda cs: cs[1])[0].text, sorted(scores)

    text, _ = best(0.03)
    assert text == "Mỗi học viên được học thử không quá 2 buổi mỗi khóa."
    assert len(set(best(0.0)[1])) == 1  # off: nothing tells them apart


def test_a_quantity_question_gets_a_clause_that_states_one():
    passage = ("Quy định này áp dụng cho cổng tra cứu hồ sơ trực tuyến.\n"
               "Mỗi tài khoản được tra cứu tối đa 30 lượt mỗi ngày.\n"
               "Hạn mức cũ theo quy định năm trước không còn áp dụng.\n"
               "Cổng tra cứu gửi thông báo khi tài khoản gần hết lượt.")
    clauses = cl.split_clauses([passage])
    scores = [0.90, 0.80, 0.88, 0.86]  # the clause with the number scores last
    off = ex.select_clauses(clauses, scores, ex.ExtractConfig(max_clauses=3, fact_guard=False), "amount")
    assert all("30 lượt" not in c.text for c, _ in off)
    on = ex.select_clauses(clauses, scores, ex.ExtractConfig(max_clauses=3, fact_guard=True), "amount")
    assert [c.text for c, _ in on] == [clauses[0].text, clauses[1].text, clauses[2].text]  # took the last place
    # a yes/no question, or a quote that already states a quantity, is left as it is
    assert ex.select_clauses(clauses, scores, ex.ExtractConfig(max_clauses=3, fact_guard=True), "yesno") == off
    states_one = [0.9, 0.95, 0.5, 0.4]
    assert ex.select_clauses(clauses, states_one, ex.ExtractConfig(max_clauses=2, fact_guard=True), "amount") == \
        ex.select_clauses(clauses, states_one, ex.ExtractConfig(max_clauses=2, fact_guard=False), "amount")


def test_the_fact_guard_swaps_in_only_a_clause_that_states_a_quantity_and_fits():
    passage = ("Quy định này áp dụng cho cổng tra cứu hồ sơ trực tuyến.\n"
               "Biểu phí năm 2025 cập nhật mỗi năm.\n"
               "Mỗi tài khoản được tra cứu tối đa 30 lượt mỗi ngày, tính theo giờ hệ thống của cổng tra cứu.\n"
               "Cổng tra cứu gửi thông báo khi hết lượt.")
    clauses = cl.split_clauses([passage])
    scores = [0.90, 0.80, 0.70, 0.88]
    # "2025 ... mỗi năm" has a rate's shape, but its only number is a year: the clause with 30 is swapped in
    on = ex.select_clauses(clauses, scores, ex.ExtractConfig(max_clauses=2, fact_guard=True), "amount")
    assert [c.text for c, _ in on] == [clauses[0].text, clauses[2].text]
    # unless it would overrun the quote's length
    tight = len(clauses[0].text) + len(clauses[3].text)
    short = ex.select_clauses(clauses, scores, ex.ExtractConfig(max_clauses=2, max_chars=tight, fact_guard=True),
                              "amount")
    assert [c.text for c, _ in short] == [clauses[0].text, clauses[3].text]


def test_a_fallback_turn_asks_what_the_users_own_words_ask():
    passages = ["Phí cấp lại thẻ là 50.000 đồng.\nThẻ được cấp lại tại quầy giao dịch."]
    flat = lambda query, texts: [0.5] * len(texts)  # noqa: E731 - meaning cannot tell them apart
    config = ex.ExtractConfig(lexical_weight=0.0, passage_weight=0.0, slot_weight=0.05)
    _, by_query = ex.rank_clauses("Thẻ được cấp lại ở đâu", passages, ["Thẻ"], flat, config)
    _, by_words = ex.rank_clauses("Thẻ được cấp lại ở đâu", passages, ["Thẻ"], flat, config,
                                  words="Phí bao nhiêu?")
    assert by_query[1] > by_query[0]  # "where": the counter
    assert by_words[0] > by_words[1]  # the user asked "how much": the fee


def test_an_english_question_weighs_vietnamese_clauses_by_the_embedders_cross_language_gap():
    passages = ["Khoa Khám bệnh làm việc từ thứ Hai đến Chủ nhật, kể cả ngày lễ và cuối tuần.",
                "The one-stop desk is closed on Sundays and public holidays."]
    # the embedder scores the English question against the English clause higher, though it is another office's
    similarity = lambda query, texts: [0.80 if "Khoa" in t else 0.83 for t in texts]  # noqa: E731
    question = "Is the outpatient department open on Sundays?"
    config = ex.ExtractConfig(lexical_weight=0.0, range_weight=0.0, count_weight=0.0)
    clauses, off = ex.rank_clauses(question, passages, ["", ""], similarity, config)
    _, on = ex.rank_clauses(question, passages, ["", ""], similarity, replace(config, cross_language_boost=0.04))
    assert off[1] > off[0] and on[0] > on[1]
    assert other_language(question, passages) == [True, False]
    assert other_language("Khoa Khám bệnh làm việc ngày nào?", passages) == [False, True]


@pytest.mark.parametrize("line", [
    "Phòng Điều phối – Công ty CP Thủy sản Biển Ngọc.",
    "Member Services Office – Ngoc Bien Seafood.",
    "Logistics Division, Ngoc Bien Seafood, 3 March 2025.",
    "*Ban hành kèm theo Quyết định số 08/2024/QĐ-BN ngày 02/05/2024 của Tổng Giám đốc Công ty CP Thủy sản Biển Ngọc.*",
    "Thông báo số 11/TB-BN ngày 10/10/2024 của Phòng Kinh doanh.",
])
def test_a_line_naming_the_issuer_or_the_act_is_never_quoted(line):
    """Scored with its title, such a line matches every question that names the organisation, and was quoted in
    place of the rule."""
    rule = "Hàng đông lạnh được giao trong 24 giờ kể từ khi xác nhận đơn."
    assert [c.text for c in cl.split_clauses([f"{line}\n{rule}"], skip_issuers=True)] == [rule]
    assert len(cl.split_clauses([f"{line}\n{rule}"], skip_issuers=False)) == 2  # off: kept as before


@pytest.mark.parametrize("line", [
    "Mọi thắc mắc xin liên hệ Phòng Kinh doanh – Kế toán.",  # tells the reader whom to ask
    "Hạng Phổ Thông – không được hoàn vé.",  # a rule written with a dash
    "Phòng Giao nhận – tiếp nhận khiếu nại trong 3 ngày làm việc.",
    "Ban hành kèm theo Quyết định số 08/2024/QĐ-BN, áp dụng từ ngày 01/06/2024.",  # says since when
    "Department heads approve leave, and HR records it.",
    "Quyết định này thay thế Quyết định số 02/2023/QĐ-BN ngày 05/01/2023.",
    "Office hours – Monday to Friday, except public holidays.",
    "Nhân viên văn phòng – Không được hút thuốc trong tòa nhà.",  # "văn phòng" ends it: staff, not a unit
    "Bộ phận Kho – ưu tiên xử lý đơn hàng đông lạnh.",  # a lower-case rule after the unit
    "Quyết định số 12/QĐ-BN ngày 01/01/2024 quy định mức phạt 500.000 đồng.",  # a reference that goes on to a rule
    "Issued with Decision No. 3/2024 which replaces the 2023 rules.",
])
def test_a_rule_or_an_effective_date_beside_the_issuer_stays_a_clause(line):
    assert not cl.is_issuer_line(line)


def test_the_clause_the_question_names_by_number_is_quoted_first():
    passage = ("## Điều 3. Đổi điểm\n\n3.1. Điểm được cộng sau mỗi chuyến đi hoàn tất.\n\n"
               "3.2. Mỗi 500 điểm đổi được một phiếu giảm giá 50.000 đồng.\n")
    flat = lambda query, texts: [0.8] * len(texts)  # noqa: E731 - meaning cannot tell them apart
    question = "Khoản 3.2 của thể lệ quy định gì?"
    config = ex.ExtractConfig(lexical_weight=0.0, range_weight=0.0, count_weight=0.0)
    clauses, on = ex.rank_clauses(question, [passage], ["Thể lệ"], flat, config)
    _, off = ex.rank_clauses(question, [passage], ["Thể lệ"], flat, replace(config, number_weight=0.0))
    assert max(zip(clauses, on), key=lambda cs: cs[1])[0].text.startswith("3.2.")
    assert len(set(off)) == 1
    assert ex.named_numbers("What does Section 5 say, and clause 2.3? The rate is 4.2%.") == {"5", "2.3"}
    assert ex.clause_numbers(clauses[1]) == ("3.2", "3")


def test_the_clause_that_answers_best_leads_the_quote_and_the_rest_keep_reading_order():
    clauses = cl.split_clauses(["Quầy mở cửa từ 8 giờ đến 17 giờ các ngày trong tuần.\n"
                                "Phí đổi vé là 50.000 đồng mỗi lần.\n"
                                "Vé đã đổi không được hoàn tiền."])
    chosen = list(zip(clauses, [0.70, 0.90, 0.60]))
    lines = ex.compose_answer(chosen, ["Đổi vé"], "vi").splitlines()
    assert [line.split(" (")[0] for line in lines[1:]] == [
        "- Phí đổi vé là 50.000 đồng mỗi lần.", "- Quầy mở cửa từ 8 giờ đến 17 giờ các ngày trong tuần.",
        "- Vé đã đổi không được hoàn tiền."]
    assert ex.lead_with_best(list(zip(clauses, [1.0, 1.0, 1.0]))) == list(zip(clauses, [1.0, 1.0, 1.0]))


def test_a_clause_number_counts_only_in_the_document_of_the_code_the_question_names():
    ours = "## Điều 4. Điểm\n\n4.2. Mỗi 1.000 điểm của thẻ MK-210 đổi được 100.000 đồng.\n"
    other = "## Điều 4. Phí\n\n4.2. Phí rút tiền mặt là 4% số tiền rút.\n"
    flat = lambda query, texts: [0.8] * len(texts)  # noqa: E731
    config = ex.ExtractConfig(lexical_weight=0.0, range_weight=0.0, count_weight=0.0)
    clauses, scores = ex.rank_clauses("Điều 4.2 của thẻ MK-210 quy định gì?", [other, ours],
                                      ["Thẻ MK-330", "Thẻ MK-210"], flat, config)
    assert [s for c, s in zip(clauses, scores) if c.passage == 1][0] > [s for c, s in zip(clauses, scores)
                                                                        if c.passage == 0][0]
    assert ex.named_codes("Điều 4.2 của thẻ MK-210, năm 2024-2025?") == {"mk-210"}


def test_the_meaning_of_a_question_is_matched_without_the_name_every_passage_holds():
    passages = ["Ngọc Biển Seafood: kho lạnh ở Hải Phòng và Cần Thơ.", "Ngọc Biển Seafood cam kết phục vụ tận tâm.",
                "Hotline Ngọc Biển Seafood 1900 1234."]
    question = "Ngọc Biển Seafood có kho lạnh ở những tỉnh nào?"
    assert ex.without_shared_names(question, passages) == "có kho lạnh ở những tỉnh nào?"
    assert ex.without_shared_names("Kho lạnh Hải Phòng của Ngọc Biển Seafood?", passages) == \
        "Kho lạnh Hải Phòng của?"  # "Hải Phòng" is in one passage of three: it tells them apart
    assert ex.without_shared_names("Ngọc Biển Seafood ở đâu?", passages) == "Ngọc Biển Seafood ở đâu?"  # too little left
    text = "Where is the Blue Reef depot of Ngoc Bien?"
    assert [text[a:b] for a, b in ex.names_in(text)] == ["Blue Reef", "Ngoc Bien"]  # "Where" only starts it


def test_a_sentence_that_says_little_but_the_name_no_longer_leads_the_quote():
    passages = ["Ngoc Bien Seafood is committed to quality.\nThe cold store in Hai Phong opens from 6:00 to 22:00.",
                "Ngoc Bien Seafood, customer care."]
    question = "What are the cold store opening hours at Ngoc Bien Seafood?"

    def similarity(query, texts):  # the name weighs as much as the ask when it is in the query
        named = "Ngoc Bien" in query
        return [(0.5 if named and "Ngoc Bien" in t else 0.0) + (0.45 if "cold store" in t else 0.0) for t in texts]

    config = ex.ExtractConfig(lexical_weight=0.0, range_weight=0.0, count_weight=0.0)
    best = lambda c: max(zip(*ex.rank_clauses(question, passages, ["", ""], similarity, c)), key=lambda x: x[1])  # noqa: E731
    assert best(replace(config, drop_shared_names=True))[0].text.startswith("The cold store")
    assert best(replace(config, drop_shared_names=False))[0].text.startswith("Ngoc Bien Seafood is committed")
