"""Numeric claims as a user would read them, in Vietnamese and English."""

from __future__ import annotations

import dataclasses
import unicodedata

import pytest

from engines.conflicts.numbers import Quantity, parse_quantities
from engines.text import detect_language as detect_lang


def claims(text: str, lang: str | None = None, **kw: object) -> list[tuple[float, str, str | None]]:
    return [(q.value, q.unit, q.per) for q in parse_quantities(text, lang, **kw)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Vietnamese: "," is the decimal mark, "." groups thousands
        ("Doanh thu đạt 4,2 triệu.", (4_200_000, "", None)),
        ("Phí dịch vụ là 1.500.000 đồng.", (1_500_000, "VND", None)),
        ("Lợi nhuận 6,8 tỷ.", (6_800_000_000, "", None)),
        ("Lỗ lũy kế 6,8 tỷ đồng.", (6_800_000_000, "VND", None)),
        ("Doanh thu 4,2 triệu USD.", (4_200_000, "USD", None)),
        ("Vốn 4,2 nghìn tỷ đồng.", (4_200_000_000_000, "VND", None)),
        ("Lương 8 triệu đồng/tháng.", (8_000_000, "VND", "month")),
        ("Lãi suất 8,5%/năm.", (8.5, "%", "year")),
        ("Lãi suất 8,5% năm.", (8.5, "%", "year")),
        ("Giới hạn 500 yêu cầu/phút.", (500, "req", "minute")),
        ("Tối đa 100 yêu cầu mỗi phút.", (100, "req", "minute")),
        ("Tối đa 100 yêu cầu trong 1 phút.", (100, "req", "minute")),
        ("Làm việc tại văn phòng 3 ngày/tuần.", (3, "day", "week")),
        ("Chi trả tối đa 1.000.000 đồng/lần khám.", (1_000_000, "VND", "occasion")),
        ("Up to USD 50 per visit.", (50, "USD", "occasion")),
        ("Làm việc tại văn phòng 3 ngày mỗi tuần.", (3, "day", "week")),
        ("Mỗi tuần 3 ngày làm việc tại văn phòng.", (3, "day", "week")),
        ("Nhân viên được nghỉ 12 ngày.", (12, "day", None)),
        ("Nhân viên được nghỉ 12 ngày phép hàng năm.", (12, "day", "year")),
        ("Trong thời hạn 05 ngày làm việc.", (5, "day", None)),
        ("Hợp đồng thuê đất 25 năm.", (25, "year_duration", None)),
        ("Tỷ lệ giữ chân đạt 70%.", (70, "%", None)),
        ("Công ty có 1.500 nhân viên.", (1500, "person", None)),
        ("Số dư 1.500.000,50 đồng.", (1_500_000.5, "VND", None)),
        ("Khoản vay VND 1.500.000.", (1_500_000, "VND", None)),
        ("Ứng trước 4,2tr.", (4_200_000, "", None)),
        ("Hỗ trợ trong 24 giờ.", (24, "hour", None)),
        ("Mở cửa lúc 8 giờ sáng.", (8, "time_of_day", None)),
        ("Đóng cửa lúc 17h30.", (17.5, "time_of_day", None)),
        # English: "." is the decimal mark, "," groups thousands
        ("Revenue was $4.2M.", (4_200_000, "USD", None)),
        ("Revenue was US$4.2M.", (4_200_000, "USD", None)),
        ("Revenue reached 4.2 million USD.", (4_200_000, "USD", None)),
        ("The deal is worth 6.8 million.", (6_800_000, "", None)),
        ("The annual fee is $4,200,000.", (4_200_000, "USD", None)),
        ("Balance: 1,500,000.50 USD.", (1_500_000.5, "USD", None)),
        ("Rate limit: 100 requests/minute.", (100, "req", "minute")),
        ("The rate limit is 100 requests per minute.", (100, "req", "minute")),
        ("The gateway allows 100 RPM.", (100, "req", "minute")),
        ("Staff work from the office 3 days a week.", (3, "day", "week")),
        ("Staff get 0 days of paid leave per month.", (0, "day", "month")),
        ("Interest is 8.5% per annum.", (8.5, "%", "year")),
        ("Interest is 8.5% annually.", (8.5, "%", "year")),
        ("We employ 1,500 people.", (1500, "person", None)),
        ("The plan includes 5k users.", (5000, "user", None)),
        ("Each account gets 10GB of storage.", (10_000_000_000, "byte", None)),
        ("It is a 25-year lease.", (25, "year_duration", None)),
        ("The library opens at 9:00.", (9, "time_of_day", None)),
        ("The library closes at 5 p.m.", (17, "time_of_day", None)),
        ("Consultants charge $5 per hour.", (5, "USD", "hour")),
        ("The plan costs $1,000/year.", (1000, "USD", "year")),
        ("Giới hạn 100/phút.", (100, "", "minute")),
        ("Nhà xưởng rộng 5.000 m2.", (5000, "m2", None)),
        # a count of a noun the unit table does not know, per period: the noun is the unit
        ("Mỗi học viên dự tối đa 4 buổi tư vấn/tháng.", (4, "count:buổi", "month")),
        ("Mỗi học viên dự tối đa 4 buổi tư vấn mỗi tháng.", (4, "count:buổi", "month")),
        ("Inspectors make at most 3 site visits per week.", (3, "count:visit", "week")),
        ("Khách được đặt 2 lượt mỗi ngày.", (2, "times", "day")),  # a known unit stays itself
    ],
)
def test_parses_value_unit_and_period(text: str, expected: tuple[float, str, str | None]) -> None:
    got = claims(text)
    assert len(got) == 1, got
    value, unit, per = got[0]
    assert value == pytest.approx(expected[0])
    assert (unit, per) == expected[1:]


@pytest.mark.parametrize(
    ("text", "lang", "value"),
    [
        ("Giá trị 1.500", "vi", 1500),  # Vietnamese thousands
        ("Giá trị 1,500", "vi", 1.5),  # Vietnamese decimal
        ("Value 1,500", "en", 1500),  # English thousands
        ("Value 1.500", "en", 1.5),  # English decimal
        ("Giá trị là 1.500", None, 1500),  # script says Vietnamese
        ("The value is 1,500", None, 1500),  # script says English
        ("The value is 4.2", None, 4.2),
        ("Doanh thu 4,2", "en", 4.2),  # one or two digits after the mark: always decimal
        ("Phí 1.500 đồng", "en", 1500),  # VND without a scale word has no fractions
    ],
)
def test_separator_disambiguation(text: str, lang: str | None, value: float) -> None:
    assert [q.value for q in parse_quantities(text, lang)] == [pytest.approx(value)]


def test_unambiguous_numbers_in_the_text_beat_the_hint() -> None:
    # "1.500.000" can only mean "." groups thousands, so "1,500" here is 1.5.
    got = parse_quantities("Tổng 1.500.000 đồng, tỷ lệ 1,500 phần trăm", lang="en")
    assert [q.value for q in got] == [pytest.approx(1_500_000), pytest.approx(1.5)]


def test_same_value_in_two_formats_parses_equal() -> None:
    (a,) = parse_quantities("Phí thường niên là 1.500.000 đồng.")
    (b,) = parse_quantities("Phí thường niên: 1,5 triệu đồng.")
    assert (a.value, a.unit) == (b.value, b.unit) == (1_500_000, "VND")
    (c,) = parse_quantities("The fee is $4,200,000.")
    (d,) = parse_quantities("The fee is 4.2 million USD.")
    assert (c.value, c.unit) == (d.value, d.unit) == (4_200_000, "USD")


@pytest.mark.parametrize(
    "text",
    [
        "Báo cáo năm 2023.",
        "Revenue for 2023 grew.",
        "Kết quả FY 2023.",
        "Có 3 mục cần lưu ý.",
        "We reviewed 7 items.",
    ],
)
def test_years_and_small_integers_are_not_claims_by_default(text: str) -> None:
    assert parse_quantities(text) == []


def test_year_filter_can_be_switched_off() -> None:
    assert claims("Báo cáo năm 2023.", skip_years=False) == [(2023, "", None)]
    assert claims("Revenue for 2023 grew.", skip_years=False) == [(2023, "", None)]
    assert claims("Báo cáo năm 2023.", skip_small_ints=False) == []


def test_small_int_filter_can_be_switched_off() -> None:
    assert claims("Có 3 mục cần lưu ý.", skip_small_ints=False) == [(3, "", None)]
    assert claims("Có 3 mục cần lưu ý.", skip_years=False) == []


def test_filters_leave_numbers_with_units_alone() -> None:
    assert claims("Làm việc 3 ngày/tuần, công ty có 2023 người.") == [(3, "day", "week"), (2023, "person", None)]
    assert claims("Có 12 thành viên.") == [(12, "", None)]


@pytest.mark.parametrize(
    "text",
    [
        "Theo Điều 4.2 của quy chế.",
        "Căn cứ khoản 3 Điều 5.",
        "See section 4.2 for details.",
        "Clause 12 applies.",
        "Xem § 4.2.",
        "Mã sản phẩm SKU-4471.",
        "Theo công văn số 05/TD.",
        "Theo Nghị định 145/2020/NĐ-CP.",
        "Tài liệu API v1.2.",
        "Released as version 2.0.",
        "Tài liệu phiên bản 2.0.",
        "Hạn chót 15/11/2023.",
        "Deadline 2023-11-15.",
        "Hạn chót 15.11.2023.",
        "Ban hành ngày 15 tháng 11 năm 2023.",
        "Published November 15, 2023.",
        "Nộp trước ngày 15 hàng tháng.",
        "Áp dụng từ tháng 6.",
        "Liên hệ 0912 345 678.",
        "Liên hệ 0912.345.678.",
        "Hotline: 1900 1234.",
        "Gọi (028) 3822 1234.",
        "Gọi +84 912 345 678.",
        "Call 555-123-4567.",
        "Certified to ISO 9001.",
        "Works on 3G networks.",
        "Office on the 2nd floor.",
        "Support 24/7.",
        "IP 10.0.0.1.",
        "Phòng họp ở tầng 2B.",
    ],
)
def test_references_codes_dates_and_phones_are_not_quantities(text: str) -> None:
    assert parse_quantities(text) == []


def test_reference_label_with_a_unit_is_still_an_amount() -> None:
    # "khoản" is also "an amount": with a money unit it is a claim, not a clause.
    assert claims("Một khoản 3 triệu đồng.") == [(3_000_000, "VND", None)]


def test_span_text_and_context_point_into_the_text() -> None:
    text = "Doanh thu của Acme Corp là 4,2 triệu USD."
    (q,) = parse_quantities(text)
    assert q.text == "4,2 triệu USD"
    assert text[q.span[0]:q.span[1]] == q.text
    assert q.context == "Doanh thu của Acme Corp là"


def test_context_stops_at_the_previous_claim_and_sentence() -> None:
    got = parse_quantities("Sản phẩm A hạn mức 500 triệu, sản phẩm B hạn mức 300 triệu. Phí 1.000 đồng.")
    assert [q.context for q in got] == ["Sản phẩm A hạn mức", "sản phẩm B hạn mức", "Phí"]


def test_context_length_is_configurable() -> None:
    (q,) = parse_quantities("Doanh thu của Acme Corp là 4,2 triệu USD.", context_words=2)
    assert q.context == "Corp là"


def test_time_ranges_yield_two_times() -> None:
    assert claims("Mở cửa từ 9:00 đến 17:00.") == [(9, "time_of_day", None), (17, "time_of_day", None)]


def test_resolution_reflects_written_precision() -> None:
    (q,) = parse_quantities("Revenue was $4.2M.")
    assert q.resolution == pytest.approx(50_000)
    (r,) = parse_quantities("Revenue was $4,213,000.")
    assert r.resolution == pytest.approx(0.5)


def test_decomposed_unicode_is_normalised() -> None:
    nfd = unicodedata.normalize("NFD", "Giới hạn 500 yêu cầu/phút")
    assert claims(nfd) == [(500, "req", "minute")]


def test_several_claims_in_reading_order() -> None:
    text = "Acme Corp reported FY2023 revenue of $4.2M, up 12%, with 1,500 employees."
    assert claims(text) == [(4_200_000, "USD", None), (12, "%", None), (1500, "person", None)]


def test_quantity_is_frozen() -> None:
    (q,) = parse_quantities("Tỷ lệ 70%")
    assert isinstance(q, Quantity)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.value = 1.0  # type: ignore[misc]


def test_empty_text() -> None:
    assert parse_quantities("") == []


@pytest.mark.parametrize("bad", ["fr", "VI", ""])
def test_unknown_lang_is_rejected_with_the_value(bad: str) -> None:
    with pytest.raises(ValueError, match=repr(bad)):
        parse_quantities("1.500", bad)  # type: ignore[arg-type]


def test_negative_context_words_rejected() -> None:
    with pytest.raises(ValueError, match="-1"):
        parse_quantities("70%", context_words=-1)


def test_detect_lang() -> None:
    assert detect_lang("Nhân viên được nghỉ phép") == "vi"
    assert detect_lang("Employees get paid leave") == "en"


@pytest.mark.parametrize(
    "text",
    [
        "Hạn nộp là ngày 15 hàng tháng.",  # a date, not a count
        "Xem Điều 5 khoản mỗi tháng.",  # a reference
        "Khách hàng được khám 2 hoặc 3 lần mỗi năm.",  # "hoặc" is not the counted noun
        "Staff may take 2 or more trips per year.",
    ],
)
def test_counting_nouns_skip_dates_references_and_joined_numbers(text: str) -> None:
    assert not [q for q in parse_quantities(text) if q.unit.startswith("count:")]
