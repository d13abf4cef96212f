"""What the user reads: the figure in a sentence or a short table, numbers in the question's language."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from engines.sql.answer import compose, format_number, plain


@pytest.mark.parametrize("value, vi, en", [
    (1234567, "1.234.567", "1,234,567"),
    (1234567.5, "1.234.567,5", "1,234,567.5"),
    (Decimal("8.25"), "8,25", "8.25"),
    (2.0, "2", "2"),
    (-1500, "-1.500", "-1,500"),
    (0.333333, "0,33", "0.33"),
])
def test_numbers_are_written_the_way_each_language_writes_them(value, vi: str, en: str) -> None:
    assert format_number(value, "vi") == vi and format_number(value, "en") == en


def test_one_value_is_a_sentence_in_the_questions_language() -> None:
    assert compose(["total_outstanding"], [(182234000000,)], "vi") == \
        "Theo dữ liệu, kết quả là **182.234.000.000** (total outstanding)."
    assert compose(["COUNT(*)"], [(41,)], "en") == "According to the data, the answer is **41**."


def test_a_list_is_a_markdown_table_with_years_and_ids_left_ungrouped() -> None:
    text = compose(["city", "loans", "opened_year"], [("Hà Nội", 1176, 2008), ("Huế", 13, 2017)], "vi")
    assert text.splitlines()[0] == "Theo dữ liệu (2 dòng):"
    assert "| city | loans | opened year |" in text and "|---|---:|---:|" in text
    assert "| Hà Nội | 1.176 | 2008 |" in text


def test_a_long_result_shows_the_first_rows_and_counts_the_rest() -> None:
    rows = [(i, i * 1000) for i in range(45)]
    text = compose(["id", "amount"], rows, "en", shown=20)
    assert text.count("\n| ") == 21 and text.rstrip().endswith("… and 25 more rows.")
    assert "(Only the first" in compose(["id", "amount"], rows, "en", truncated=True)


def test_no_rows_says_so_plainly() -> None:
    assert compose(["n"], [], "vi") == "Dữ liệu không có dòng nào khớp với câu hỏi."


def test_cells_become_json_values() -> None:
    assert [plain(v) for v in (Decimal("8.50"), Decimal("3"), dt.date(2024, 1, 2), None, b"xx")] == \
        [8.5, 3, "2024-01-02", None, "<2 bytes>"]
