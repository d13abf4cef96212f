"""The row of a schedule whose band holds the number the question names."""

import pytest

from engines.answering.extract import ExtractConfig, rank_clauses
from engines.answering.ranges import band_score, bands, question_numbers


def test_thousands_and_dates_are_read_as_such():
    assert question_numbers("Tôi đi 1.200 km thì phí thế nào?") == [(1200.0, "km")]
    assert question_numbers("Nộp trước ngày 15 tháng 3 được không?") == []  # a date, not 15 months
    assert band_score([(1200.0, "km")], bands("| 500 – 1.500 km | 300.000 đồng |")) == 1


def test_numbers_the_question_names_with_their_kind():
    assert question_numbers("Người 35 tuổi mua gói đó thì phí một năm bao nhiêu?") == [(35.0, "age")]
    assert question_numbers("What is the premium for a 45-year-old?") == [(45.0, "age")]
    assert question_numbers("Kéo xe 60 km có mất phí không?") == [(60.0, "km")]
    assert question_numbers("Năm 2025 phí bao nhiêu?") == []  # a year is no amount of anything


@pytest.mark.parametrize("clause, value, score", [
    ("| 18 – 40 tuổi | 8.900.000 | 4.500.000 |", 35, 1),
    ("| 41 – 55 tuổi | 14.200.000 | 6.100.000 |", 35, -1),
    ("Trẻ em dưới 12 tuổi không được vào khu điều trị.", 10, 1),
    ("Trẻ em dưới 12 tuổi không được vào khu điều trị.", 35, -1),
    ("Người từ đủ 60 tuổi trở lên được miễn phí.", 65, 1),
    ("Áp dụng từ 01/02/2025 đến 31/12/2025.", 35, 0),  # dates are no band
    ("Giờ thăm: 15:00 - 17:00.", 35, 0),  # nor times
    ("Kéo xe miễn phí 50 – 100 km.", 35, 0),  # nor a band of another kind
    ("Lãi suất 7,5 - 8,5 %/năm cho khoản vay 12 tháng tuổi.", 8, 0),  # a range of percents
    ("Người trên 60 tuổi được giảm phí.", 60, -1),  # "above 60" leaves 60 out
    ("Người từ đủ 60 tuổi được giảm phí.", 60, 1),
])
def test_a_band_holds_or_misses_the_number(clause, value, score):
    assert band_score([(float(value), "age")], bands(clause)) == score


def test_a_band_without_a_unit_takes_the_one_its_header_names():
    assert band_score([(35.0, "age")], bands("| 18 – 40 | 4.500.000 |", context="| Độ tuổi | Phí (đồng) |")) == 1
    assert bands("| 18 – 40 | 4.500.000 |") == []


def test_the_row_whose_band_holds_the_age_is_quoted_first():
    passage = ("Biểu phí năm\n| Độ tuổi | Phí |\n| --- | --- |\n| 18 – 40 tuổi | 4.500.000 |\n"
               "| 41 – 55 tuổi | 6.100.000 |\n| 56 – 65 tuổi | 9.800.000 |")

    def flat(query, texts):  # an embedder that cannot tell the rows apart
        return [0.8] * len(texts)

    query = "Người 35 tuổi đóng phí bao nhiêu?"

    def gap(weight):
        clauses, scores = rank_clauses(query, [passage], ["Biểu phí"], flat, ExtractConfig(range_weight=weight))
        by_row = {c.text.split("|")[1].strip(): s for c, s in zip(clauses, scores) if "tuổi |" in c.text}
        best = max(by_row, key=by_row.__getitem__)
        return best, by_row["18 – 40 tuổi"] - by_row["41 – 55 tuổi"]

    best, margin = gap(0.05)
    assert best == "18 – 40 tuổi" and margin == pytest.approx(0.10, abs=0.01)
    assert abs(gap(0.0)[1]) < 0.01  # off: the rows differ by their words alone
