"""What a question asks for, and which clauses can answer it."""

import time

import pytest

from engines.answering.asks import asked_for, carries, counted_noun, states_count_of, states_quantity


@pytest.mark.parametrize("question, kind", [
    ("Nhân viên được nghỉ phép năm bao nhiêu ngày?", "duration"),
    ("Hồ sơ được xử lý trong bao lâu?", "duration"),
    ("How many days of leave do interns get?", "duration"),
    ("Hạn chót nộp đơn là khi nào?", "date"),
    ("When does the new rate start?", "date"),
    ("Lãi suất vay là bao nhiêu?", "amount"),
    ("What is the annual fee?", "amount"),
    ("Mẫu đơn nào cần dùng?", "code"),
    ("Which form do I submit?", "code"),
    ("Ai phê duyệt đơn này?", "who"),
    ("Nộp hồ sơ ở đâu?", "where"),
    ("Thẻ này có phí thường niên không?", "yesno"),
    ("Does it apply to contractors?", "yesno"),
    ("Thủ tục đăng ký như thế nào?", "procedure"),
    ("Giới thiệu về chính sách", "other"),
])
def test_what_a_question_asks_for(question, kind):
    assert asked_for(question) == kind


@pytest.mark.parametrize("clause, kind, expected", [
    ("Mỗi năm được nghỉ 12 ngày phép có lương.", "duration", True),
    ("Xử lý trong 15 ngày làm việc.", "duration", True),
    ("Phí thường niên 200.000 đồng/năm.", "amount", True),
    ("Lãi suất ưu đãi 8,5%/năm.", "amount", True),
    ("Nộp trước ngày 31/05/2025.", "date", True),
    ("Điền mẫu BT-03 và nộp kèm hóa đơn.", "code", True),
    ("Theo mẫu 05/TD.", "code", True),
    ("Each tenant may upload up to 40 files per hour.", "amount", True),  # a rate is an amount
    ("Tối đa 2 lần mỗi quý.", "amount", True),
    ("Làm thêm không quá 12 giờ/tuần.", "amount", True),
    ("Gửi tối đa 100/day qua API.", "amount", True),
    ("Nộp báo cáo vào ngày 5 mỗi tháng.", "amount", False),  # a day of the month, not a rate
    ("Họp giao ban thứ 2 mỗi tuần.", "amount", False),  # a weekday
    ("The rule from version 3.1 no longer applies.", "amount", False),
    ("Nhân viên được hưởng phụ cấp ăn trưa.", "amount", False),
    ("Phí thường niên 200.000 đồng.", "other", False),
])
def test_which_clauses_carry_that_kind_of_fact(clause, kind, expected):
    assert carries(clause, kind) is expected


@pytest.mark.parametrize("question, noun", [
    ("Mỗi tháng được đăng ký tối đa bao nhiêu buổi?", "buổi"),
    ("Một phòng ở được mấy người?", "người"),
    ("How many site visits does an inspector make?", "visit"),
    ("How many days of leave do interns get?", "day"),
    ("Phí chuyển đổi là bao nhiêu?", None),  # an amount, no counted thing
    ("Xử lý mất bao nhiêu lâu?", None),
    ("How many are there?", None),
    ("What is the fee?", None),
])
def test_counted_noun_is_the_thing_whose_number_is_asked(question, noun):
    assert counted_noun(question) == noun


def test_a_clause_states_a_count_only_with_a_number_before_the_noun():
    assert states_count_of("Mỗi học viên dự không quá 4 buổi học thử.", "buổi")
    assert states_count_of("Inspectors make 3 unannounced visits a year.", "visit")
    assert not states_count_of("Một buổi học kéo dài 90 phút.", "buổi")  # the noun, but no number of it
    assert not states_count_of("Học phí 4.000.000 đồng mỗi buổi.", "buổi")


@pytest.mark.parametrize("clause, expected", [
    ("Mỗi hồ sơ được xử lý trong 5 ngày làm việc.", True),
    ("| Gói cơ bản | 120.000 |", True),
    ("Thanh toán trước hết ngày 15 hằng tháng.", True),
    ("3. Nộp 2 bản chính.", True),
    ("2.4. Hồ sơ nộp tại quầy.", False),  # a clause number only
    ("**Điều 5.** Hiệu lực thi hành", False),
    ("The guidance in version 3.1 was withdrawn in March 2022.", False),  # a version and a year
    ("Theo Quyết định số 12/2021/QĐ-ABC, khoản 4.2 giữ nguyên.", False),  # a document code and a reference
    ("Use form HR-07 from 1 July.", False),  # a form code and a date
    ("Tối đa 3/ngày.", True),  # a rate, not a code
    ("Hỗ trợ một khoản 2 triệu đồng.", True),  # a sum, not a clause reference
])
def test_a_clause_states_a_quantity_only_with_a_number_that_is_not_a_label(clause, expected):
    assert states_quantity(clause) is expected


def test_a_long_run_of_digits_and_letters_is_read_in_a_blink():
    """A table cell or a hash in a document ("1111…1 aaaa…a") once kept the amount pattern busy for minutes."""
    text = "1" * 2000 + " " + "a" * 2000
    started = time.process_time()
    for kind in ("amount", "duration", "count", "date"):
        carries(text, kind)
    states_quantity(text)
    assert time.process_time() - started < 5.0  # the old amount pattern: 190 s on this input
