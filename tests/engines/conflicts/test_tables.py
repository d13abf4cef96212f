"""Price tables: a bare number alone in a cell is an amount of the unit its column header or the
table's caption names, so two versions of one price list can disagree."""

import datetime as dt

from engines.conflicts.claims import analyze
from engines.conflicts.graph import detect_pairs
from engines.conflicts.tables import header_unit

OLD = """Bảng giá gửi xe tháng tại tòa nhà.

| Loại xe | Giá (đồng/tháng) |
|---|---|
| Xe máy | 120.000 |
| Ô tô | 1.200.000 |
"""
NEW = OLD.replace("| Xe máy | 120.000 |", "| Xe máy | **150.000** |")
CAPTIONED = """**Biểu giá nước sinh hoạt**

Đơn vị tính: đồng/m³, chưa bao gồm thuế.

| Bậc | Mức sử dụng | Đơn giá |
|---|---|---|
| Bậc 1 | Từ 0 đến 10 m³ | 6.700 |
"""


def _amounts(text):
    return [(q.text, q.value, q.unit) for q in analyze("p", text).quantities if q.unit]


def test_a_cell_under_a_unit_header_is_an_amount_of_that_unit():
    assert ("120.000", 120000.0, "VND") in _amounts(OLD)
    assert ("150.000", 150000.0, "VND") in _amounts(NEW)  # emphasis around the cell is not in the way
    assert header_unit("Giá (triệu đồng)").value == 1_000_000 and header_unit("Loại xe") is None


def test_a_caption_above_the_table_names_the_unit_of_cells_whose_header_does_not():
    assert ("6.700", 6700.0, "VND") in _amounts(CAPTIONED)
    assert [a for a in _amounts(CAPTIONED) if a[2] == "VND"] == [("6.700", 6700.0, "VND")]  # not "Từ 0 đến 10 m³"
    uncaptioned = CAPTIONED.replace("Đơn vị tính: đồng/m³, chưa bao gồm thuế.", "Giá áp dụng từ tháng 7.")
    assert [a for a in _amounts(uncaptioned) if a[2] == "VND"] == []


def test_two_versions_of_a_price_list_conflict_on_the_changed_row_only():
    old = analyze("old", OLD, dt.date(2024, 1, 1), source="old")
    new = analyze("new", NEW, dt.date(2025, 1, 1), source="new")
    (pair,) = detect_pairs([old, new], [[1.0, 0.95], [0.95, 1.0]], sim_threshold=0.9)
    assert pair.evidence == ("120.000 vs 150.000",)
    plain = [analyze(p.id, p.text, p.date, source=p.source, header_units=False) for p in (old, new)]
    assert detect_pairs(plain, [[1.0, 0.95], [0.95, 1.0]], sim_threshold=0.9) == []
