"""Names a conversation is about, and whether a rewrite kept them."""

import pytest

from engines.conversation.names import dropped_names, names_in


@pytest.mark.parametrize("text, names", [
    ("Gói SAO2 trả trước bây giờ giá bao nhiêu?", ["SAO2"]),  # a code; "Gói" only starts the sentence
    ("Quỹ hưu trí Phú Thịnh Vượng cho rút trước hạn không?", ["Phú Thịnh Vượng"]),
    ("Giờ thăm ở Bệnh viện Đa khoa Hòa Khánh Nam là mấy giờ?", ["Hòa Khánh Nam"]),  # "Bệnh", "Đa" alone are no names
    ("What does the Silver Harbor Dental Plan cover?", ["Silver Harbor Dental Plan"]),
    ("What was Northwind Traders' or Blue Fjord Ltd's revenue?", ["Northwind Traders", "Blue Fjord Ltd"]),
    ("Is it open on Sundays? I need 2 GB and 500 VND.", []),  # a weekday, units and short acronyms
    ("Nộp theo mẫu QX-17 hay qua TaxiGo?", ["QX-17", "TaxiGo"]),
    ("Nhân viên thử việc được nghỉ mấy ngày?", []),
])
def test_names_are_capitalised_runs_and_codes(text, names):
    assert names_in(text) == names


def test_a_rewrite_that_lost_the_conversations_name_gets_it_back():
    earlier = ["Quỹ hưu trí Phú Thịnh Vượng cho rút trước hạn không?", "Phí rút là bao nhiêu?"]
    assert dropped_names("Rút online được không?", "Có rút tiền online được không?", earlier) == ["Phú Thịnh Vượng"]
    # kept by the rewrite, or the follow-up names something itself: nothing to add
    assert dropped_names("Rút online được không?", "Quỹ Phú Thịnh Vượng có rút online được không?", earlier) == []
    assert dropped_names("Còn quỹ An Bình Xanh thì sao?", "Quỹ An Bình Xanh cho rút trước hạn không?", earlier) == []
    assert dropped_names("Rút online được không?", "Có rút online được không?", ["Phí rút là bao nhiêu?"]) == []


def test_a_very_long_message_is_read_in_linear_time():
    """The service takes any message; looking back for a sentence's start must not rescan the whole text."""
    import time

    text = "Quỹ Phú Thịnh Vượng. " * 20000
    started = time.process_time()
    assert names_in(text) == ["Phú Thịnh Vượng"]
    assert time.process_time() - started < 5.0
