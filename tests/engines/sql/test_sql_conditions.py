"""Conditions the notes attach to a term are added to a statement that forgot them, and only then."""

from __future__ import annotations

from engines.models.fakes import ScriptedLLM
from engines.sql.ask import ANSWERED, SqlRoad
from engines.sql.conditions import Condition, conditions_in, with_conditions
from engines.sql.schema import read_schema

COLUMNS = {"shipments": ["shipment_id", "depot_id", "state", "weight_kg", "shipped_on"],
           "depots": ["depot_id", "region"], "vans": ["van_id", "in_service"], "drivers": ["driver_id", "in_service"]}
LISTED = {"shipments": {"state": ("delivered", "lost", "in_transit")}, "depots": {"region": ("Bắc", "Nam")}}
DONE = Condition("shipments", "state", "'delivered'")


def test_a_condition_written_in_code_is_read_with_its_table() -> None:
    notes = ["**Sản lượng** = tổng `shipments.weight_kg` của các chuyến có `shipments.state = 'delivered'`.",
             "**Chuyến giao xong** = `state = 'delivered'`.",  # unqualified: one table has the column
             "**Xe chạy** = `in_service = 1`.",  # two tables have it: which one is not said, so none
             "**Kho** = `depots.manager = 'x'`."]  # no such column
    assert conditions_in(notes, COLUMNS) == [DONE]


def test_a_lone_value_in_code_is_a_condition_and_a_list_of_values_is_not() -> None:
    assert conditions_in(["**Khối lượng giao** = tổng `weight_kg` của chuyến `delivered`."], COLUMNS, LISTED) == [DONE]
    listing = "**Trạng thái**: `delivered` (đã giao), `lost` (thất lạc), `in_transit` (đang chở)."
    assert conditions_in([listing], COLUMNS, LISTED) == []


def test_the_condition_goes_into_the_select_that_reads_the_table_under_its_alias() -> None:
    sql = ("SELECT d.region, SUM(s.weight_kg) AS kg FROM shipments s JOIN depots d ON d.depot_id = s.depot_id "
           "WHERE s.shipped_on >= '2025-01-01' GROUP BY d.region")
    done, added = with_conditions(sql, [DONE], "sqlite")
    assert added == (DONE,) and """WHERE s.shipped_on >= '2025-01-01' AND "s"."state" = 'delivered'""" in done
    nested = "SELECT m, kg FROM (SELECT substr(shipped_on, 1, 7) AS m, SUM(weight_kg) AS kg FROM shipments GROUP BY 1)"
    inner, _ = with_conditions(nested, [DONE], "sqlite")
    assert """FROM shipments WHERE "shipments"."state" = 'delivered' GROUP BY 1""" in inner


def test_a_statement_that_already_filters_the_column_or_does_not_read_the_table_is_left_as_written() -> None:
    lost = "SELECT COUNT(*) FROM shipments WHERE state = 'lost'"
    assert with_conditions(lost, [DONE], "sqlite") == (lost, ())
    either = "SELECT COUNT(*) FROM shipments s WHERE s.state IN ('lost', 'delivered')"
    assert with_conditions(either, [DONE], "sqlite") == (either, ())
    other = "SELECT COUNT(*) FROM depots"
    assert with_conditions(other, [DONE], "sqlite") == (other, ())
    assert with_conditions("SELEC nonsense", [DONE], "sqlite") == ("SELEC nonsense", ())


def test_a_defined_term_in_the_question_adds_its_condition_before_the_statement_runs(bank_engine) -> None:
    notes = ("## loans\n\n- **Dư nợ xấu** = tổng `loans.outstanding` của các khoản có `loans.status = 'quá hạn'`.\n"
             "- Các trạng thái: `đang vay`, `đã tất toán`, `quá hạn`.\n")
    schema = read_schema(bank_engine, notes=notes)
    statement = "```sql\nSELECT SUM(outstanding) AS no_xau FROM loans\n```"

    def ask(question: str, **options):
        llm = ScriptedLLM([statement])
        return SqlRoad(bank_engine, schema, llm, **options).answer(question, "vi")

    on = ask("Tổng dư nợ xấu là bao nhiêu?")
    assert on.status == ANSWERED and """WHERE "loans"."status" = 'quá hạn'""" in on.statement
    assert on.attempts[-1].conditions == ("loans.status = 'quá hạn'",)
    assert on.attempts[-1].written == "SELECT SUM(outstanding) AS no_xau FROM loans"  # what the model wrote is kept
    off = ask("Tổng dư nợ xấu là bao nhiêu?", note_conditions=False)
    plain = ask("Tổng dư nợ là bao nhiêu?")  # the term is not used: nothing added
    assert "WHERE" not in off.statement and "WHERE" not in plain.statement
    assert on.rows != off.rows


def test_an_outer_join_or_a_union_is_left_as_written_and_every_select_reading_the_table_gets_it() -> None:
    outer = ("SELECT d.region, SUM(s.weight_kg) FROM depots d LEFT JOIN shipments s ON s.depot_id = d.depot_id "
             "GROUP BY d.region")  # a WHERE on s would drop the regions without shipments
    union = "SELECT weight_kg FROM shipments WHERE depot_id = 1 UNION ALL SELECT weight_kg FROM shipments"
    assert with_conditions(outer, [DONE], "sqlite") == (outer, ())
    assert with_conditions(union, [DONE], "sqlite") == (union, ())
    both, _ = with_conditions("SELECT COUNT(*) FROM shipments WHERE weight_kg > (SELECT AVG(weight_kg) FROM shipments)",
                              [DONE], "sqlite")
    assert both.count(""""shipments"."state" = 'delivered'""") == 2  # the average is over delivered ones too
    other_table = "SELECT COUNT(*) FROM shipments s JOIN depots d ON d.depot_id = s.depot_id WHERE d.state = 'open'"
    assert """"s"."state" = 'delivered'""" in with_conditions(other_table, [DONE], "sqlite")[0]


def test_a_value_the_note_excludes_is_no_condition_and_a_table_name_is_quoted() -> None:
    assert conditions_in(["**Khối lượng** = tổng `weight_kg`, không tính chuyến `lost`."], COLUMNS, LISTED) == []
    assert conditions_in(["**Tonnage** = sum of `weight_kg` excluding `lost`."], COLUMNS, LISTED) == []
    reserved = Condition("order", "status", "'done'")
    assert with_conditions('SELECT COUNT(*) FROM "order"', [reserved], "sqlite")[0] == \
        """SELECT COUNT(*) FROM "order" WHERE "order"."status" = 'done'"""
