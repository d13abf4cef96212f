"""A statement's slips (MySQL dates, a column's table, a value's spelling) are mended before it runs, and a
statement that is right, or that can be read more than one way, is left as written."""

from __future__ import annotations

import pytest

from engines.models.fakes import ScriptedLLM
from engines.sql.ask import ANSWERED, SqlRoad
from engines.sql.repair import link_value, repair

COLUMNS = {"shipments": ["shipment_id", "depot_id", "van_id", "state", "weight_kg", "shipped_on"],
           "depots": ["depot_id", "region", "depot_name"], "vans": ["van_id", "plate", "depot_id"]}
JOINS = ["shipments.depot_id = depots.depot_id", "shipments.van_id = vans.van_id", "vans.depot_id = depots.depot_id"]
VALUES = {("depots", "region"): ("Bắc", "Trung", "Nam"), ("shipments", "state"): ("delivered", "lost", "in_transit"),
          ("depots", "depot_name"): ("Kho Huế", "Kho Đà Nẵng", "Kho Hà Nội Long Biên", "Kho Hà Nội Đông Anh")}


def mend(sql: str, dialect: str = "sqlite"):
    return repair(sql, dialect=dialect, columns=COLUMNS, joins=JOINS, values_of=lambda t, c: VALUES.get((t, c), ()))


def test_mysql_date_functions_become_sqlite_strftime() -> None:
    fixed = mend("SELECT MONTH(s.shipped_on) AS m, COUNT(*) FROM shipments s WHERE YEAR(s.shipped_on) = 2024 "
                 "AND EXTRACT(DAY FROM s.shipped_on) = 1 GROUP BY m")
    assert "CAST(STRFTIME('%m', s.shipped_on) AS INTEGER) AS m" in fixed.sql
    assert "CAST(STRFTIME('%Y', s.shipped_on) AS INTEGER) = 2024" in fixed.sql
    assert "CAST(STRFTIME('%d', s.shipped_on) AS INTEGER) = 1" in fixed.sql
    assert "YEAR(" not in fixed.sql and len(fixed.changes) == 3


def test_strftime_compared_with_a_number_compares_the_text_it_returns() -> None:
    fixed = mend("SELECT COUNT(*) FROM shipments WHERE STRFTIME('%Y', shipped_on) = 2025 "
                 "AND strftime('%m', shipped_on) IN (3, 4)")
    assert "= '2025'" in fixed.sql and "IN ('03', '04')" in fixed.sql


def test_postgres_keeps_its_own_date_parts() -> None:
    sql = "SELECT COUNT(*) FROM shipments WHERE EXTRACT(YEAR FROM shipped_on) = 2024"
    assert mend(sql, "postgresql").changes == ()


def test_a_column_read_through_the_wrong_alias_moves_to_the_table_that_has_it() -> None:
    fixed = mend("SELECT d.region, SUM(d.weight_kg) AS kg FROM shipments s JOIN depots d ON d.depot_id = s.depot_id "
                 "GROUP BY d.region")
    assert "SUM(s.weight_kg)" in fixed.sql and fixed.changes == ("d.weight_kg -> s.weight_kg",)


def test_a_table_named_but_never_joined_is_joined_along_its_foreign_key() -> None:
    fixed = mend("SELECT SUM(shipments.weight_kg) FROM shipments WHERE depots.region = 'Nam'")
    joined = 'JOIN "depots" ON "depots"."depot_id" = "shipments"."depot_id"'  # quoted: mixed-case names survive
    assert joined in fixed.sql and fixed.changes == ('JOIN depots ON "depots"."depot_id" = "shipments"."depot_id"',)


def test_a_join_added_names_the_table_of_the_columns_it_would_make_ambiguous() -> None:
    fixed = mend("SELECT COUNT(*) FROM shipments WHERE depot_id = 2 AND region = 'Nam'")
    assert "shipments.depot_id = 2 AND depots.region = 'Nam'" in fixed.sql


def test_a_column_only_one_other_table_has_is_joined_from_the_table_it_was_read_through() -> None:
    fixed = mend("SELECT v.plate FROM vans v WHERE v.region = 'Bắc'")
    assert 'JOIN "depots" ON "depots"."depot_id" = "v"."depot_id"' in fixed.sql and "depots.region = 'Bắc'" in fixed.sql


def test_an_invented_year_column_is_the_year_of_the_tables_one_date_column() -> None:
    fixed = mend("SELECT COUNT(*) FROM shipments s WHERE s.year = 2025 AND month = 3")
    assert "CAST(STRFTIME('%Y', s.shipped_on) AS INTEGER) = 2025" in fixed.sql
    assert "CAST(STRFTIME('%m', s.shipped_on) AS INTEGER) = 3" in fixed.sql
    assert "EXTRACT(YEAR FROM s.shipped_on) = 2025" in mend("SELECT COUNT(*) FROM shipments s WHERE s.year = 2025",
                                                           "postgresql").sql
    assert mend("SELECT COUNT(*) FROM depots d WHERE d.year = 2025").changes == ()  # no date column to read it from
    assert mend("SELECT COUNT(*) FROM vans v WHERE v.year = 2025").changes == ()  # "plate" is no date, nor is "candidate"


def test_columns_that_resolve_or_could_be_several_tables_are_left_as_written() -> None:
    right = "SELECT d.region, SUM(s.weight_kg) AS kg FROM shipments s JOIN depots d ON d.depot_id = s.depot_id GROUP BY 1"
    assert mend(right).changes == ()
    # depot_id is a column of shipments, depots and vans: which one was meant is not said
    either = "SELECT COUNT(*) FROM shipments s JOIN vans v ON v.van_id = s.van_id JOIN depots d ON d.depot_id = v.depot_id " \
             "WHERE x.depot_id = 1"
    assert mend(either).changes == ()
    correlated = ("SELECT d.region FROM depots d WHERE EXISTS (SELECT 1 FROM shipments s WHERE s.depot_id = d.depot_id "
                  "AND s.state = 'lost')")
    assert mend(correlated).changes == ()
    ordered = "SELECT s.state, COUNT(*) AS n FROM shipments s GROUP BY s.state ORDER BY n DESC"
    assert mend(ordered).changes == ()
    # a CTE's or a subquery's columns are its own: read through its alias, nothing is moved or joined
    derived = ("SELECT d.region, t.total FROM depots d JOIN (SELECT depot_id, SUM(weight_kg) AS total FROM shipments "
               "GROUP BY depot_id) t ON t.depot_id = d.depot_id")
    assert mend(derived).changes == ()
    cte = ("WITH t AS (SELECT depot_id, weight_kg FROM shipments WHERE state = 'lost') "
           "SELECT region, SUM(weight_kg) FROM t JOIN depots d ON d.depot_id = t.depot_id GROUP BY region")
    assert mend(cte).changes == ()
    # a subquery's unqualified column is its own table's: the outer query gains no join (and no ambiguity)
    nested = "SELECT COUNT(*) FROM vans WHERE depot_id = (SELECT depot_id FROM depots WHERE region = 'Nam')"
    assert mend(nested).changes == ()


@pytest.mark.parametrize(("literal", "expected"), [
    ("DELIVERED", ("delivered", False)),
    ("Hue", ("Kho Huế", False)),  # the one value whose words hold it
    ("Kho Hue", ("Kho Huế", False)),
    ("da nang", ("Kho Đà Nẵng", False)),
    ("Kho Hà Nội", ("Kho Hà Nội", True)),  # two depots begin so: LIKE 'Kho Hà Nội%'
    ("Sài Gòn", None),
    ("Kho Huế Mới", None),  # longer than every value: not the one it holds ('Nam Định' is not 'Nam')
    ("Kho", None),  # every depot begins so: no filter at all, not one reading
])
def test_a_literal_is_linked_to_the_data_only_when_one_reading_fits(literal, expected) -> None:
    known = VALUES[("depots", "depot_name")] + ("delivered", "lost")
    assert link_value(literal, known[:4] if literal == "Kho" else known) == expected


def test_values_are_spelt_as_the_data_does_and_a_shared_beginning_becomes_like() -> None:
    fixed = mend("SELECT COUNT(*) FROM shipments s JOIN depots d ON d.depot_id = s.depot_id "
                 "WHERE s.state = 'Delivered' AND d.depot_name = 'Kho Hà Nội' AND d.region IN ('bac', 'Nam')")
    assert "s.state = 'delivered'" in fixed.sql
    assert "d.depot_name LIKE 'Kho Hà Nội%'" in fixed.sql
    assert "d.region IN ('Bắc', 'Nam')" in fixed.sql
    unknown = "SELECT COUNT(*) FROM shipments WHERE state = 'returned'"
    assert mend(unknown).changes == ()


def test_unparseable_sql_is_returned_as_written() -> None:
    assert mend("SELEC weight FROM").sql == "SELEC weight FROM"


def test_the_road_runs_the_mended_statement_and_records_what_changed(bank_engine, bank_schema) -> None:
    written = "```sql\nSELECT COUNT(*) AS n FROM loans WHERE YEAR(disbursed_on) = 2024 AND branches.city = 'ha noi'\n```"

    def ask(**options):
        return SqlRoad(bank_engine, bank_schema, ScriptedLLM([written, written]), **options).answer(
            "Bao nhiêu khoản vay giải ngân năm 2024 ở Hà Nội?", "vi")

    on, off = ask(), ask(repairs=False)
    assert on.status == ANSWERED and on.rows[0][0] > 0
    assert any("JOIN branches" in r for r in on.attempts[-1].repairs)
    assert "'ha noi' -> 'Hà Nội' (branches.city)" in on.attempts[-1].repairs
    assert "YEAR(" not in on.statement and "branches.city = 'Hà Nội'" in on.statement
    assert off.status != ANSWERED and all(not a.repairs for a in off.attempts)
