"""The SQL writer's prompt holds what a model needs, and its reply is read the way models write it."""

from __future__ import annotations

import pytest

from engines.sql.prompt import parse_sql, retry_message, sql_prompt
from engines.sql.schema import notes_for


@pytest.mark.parametrize("reply, statement", [
    ("```sql\nSELECT COUNT(*) AS n FROM loans;\n```\nThis counts the loans.", "SELECT COUNT(*) AS n FROM loans"),
    ("```SQL\nSELECT city\nFROM branches\n```", "SELECT city\nFROM branches"),
    ("SQLQuery: SELECT 1 FROM loans\nSQLResult: [(1,)]\nAnswer: 1", "SELECT 1 FROM loans"),
    ("Here is the query:\n\nSELECT a\nFROM t\nWHERE x = 1;\n\nIt filters x.", "SELECT a\nFROM t\nWHERE x = 1"),
    ("with t as (select 1) select * from t", "with t as (select 1) select * from t"),
    ("```sql\nSELECT 1 FROM t; DROP TABLE t;\n```", "SELECT 1 FROM t; DROP TABLE t"),  # the guard sees both
    ("DELETE FROM loans;", "DELETE FROM loans"),  # kept so the guard can refuse it by name
])
def test_the_statement_is_found_however_the_model_wraps_it(reply: str, statement: str) -> None:
    assert parse_sql(reply) == statement


@pytest.mark.parametrize("reply", ["NO_SQL", "no_sql: the tables hold no weather", "I cannot answer that.", ""])
def test_no_statement_or_no_sql_reads_as_none(reply: str) -> None:
    assert parse_sql(reply) is None


def test_the_prompt_gives_dialect_schema_notes_question_and_the_retry_gives_the_error(bank_schema) -> None:
    prompt = sql_prompt(dialect="sqlite", schema=bank_schema.describe(["loans"]), notes=bank_schema.notes,
                        question="Tổng dư nợ là bao nhiêu?", limit=200)
    assert "sqlite SELECT" in prompt and "CREATE TABLE loans" in prompt and "Question: Tổng dư nợ là bao nhiêu?" in prompt
    assert "quá hạn" in prompt  # the values a WHERE clause must spell exactly
    assert "**dư nợ**" in prompt and "CREATE TABLE branches" not in prompt
    again = retry_message(failed="SELECT x FROM loans", error="no such column: x", hint="Column x is in: t.")
    assert again == ("That statement failed.\nStatement:\nSELECT x FROM loans\nDatabase error: no such column: x\n"
                     "Column x is in: t.\nWrite a corrected statement in a ```sql block.")


NOTES = """# Shop data

## Conventions
- **Revenue** / **doanh thu** = SUM(`order_items.line_amount`) of orders with `status = 'completed'`;
  cancelled and returned orders do not count.
- **Đơn thành công** = `status = 'completed'`.

## customers — **khách hàng**
One row per member: `tier` is **hạng thẻ** (`vip`, `gold`).
"""


def test_the_notes_a_question_touches_are_repeated_next_to_it_and_no_others() -> None:
    revenue = notes_for("Tổng doanh thu năm 2024 của từng chi nhánh?", NOTES)
    assert revenue == ["**Revenue** / **doanh thu** = SUM(`order_items.line_amount`) of orders with "
                       "`status = 'completed'`; cancelled and returned orders do not count."]
    members = notes_for("Có bao nhiêu khách hàng hạng VIP?", NOTES)
    assert members == ["customers — **khách hàng**: One row per member: `tier` is **hạng thẻ** (`vip`, `gold`)."]
    assert notes_for("Thời tiết hôm nay thế nào?", NOTES) == []
    prompt = sql_prompt(dialect="sqlite", schema="CREATE TABLE t (a INT)", notes=NOTES, question="Doanh thu 2024?",
                        limit=200, rules=revenue)
    # after the notes (the prompt cache keeps the long part), just before the question
    assert prompt.index("Notes that apply") > prompt.index("## Conventions")
    assert prompt.endswith("- **Revenue** / **doanh thu** = SUM(`order_items.line_amount`) of orders with `status = "
                           "'completed'`; cancelled and returned orders do not count.\nQuestion: Doanh thu 2024?\n")


def test_a_long_note_is_cut_and_at_most_three_are_repeated() -> None:
    notes = "\n".join(f"- **term{i}** means {'x' * 600}" for i in range(5))
    chosen = notes_for("term0 term1 term2 term3 term4", notes)
    assert len(chosen) == 3 and all(len(c) <= 420 and c.endswith("...") for c in chosen)


def test_the_words_notes_give_tables_columns_and_values_become_router_terms() -> None:
    from engines.sql.schema import note_terms

    notes = ("### `orders` — đơn hàng (một hoá đơn)\n- `list_price` — giá niêm yết **hiện tại** (2025).\n"
             "- `status` — `completed` (hoàn tất), `returned` (trả hàng). Đơn huỷ **không** tính.\n")
    terms = note_terms(notes)
    assert {"đơn hàng", "một hoá đơn", "giá niêm yết", "hoàn tất", "trả hàng", "orders", "completed"} <= terms
    assert not terms & {"không", "hiện tại"}  # emphasis, not names: "không" is in half of all questions


def test_a_sqlite_prompt_says_how_sqlite_keeps_dates() -> None:
    assert "no YEAR()" in sql_prompt(dialect="sqlite", schema="S", notes="", question="Q", limit=5)
    assert "no YEAR()" not in sql_prompt(dialect="postgresql", schema="S", notes="", question="Q", limit=5)


def test_a_rule_right_above_a_heading_keeps_the_heading_it_was_written_under() -> None:
    from engines.sql.schema import note_passages

    notes = "## loans — **khoản vay**\n- **Dư nợ** = SUM(`outstanding`).\n## deposits — **tiền gửi**\nOne row per account."
    assert note_passages(notes) == ["loans — **khoản vay**: **Dư nợ** = SUM(`outstanding`).",
                                    "deposits — **tiền gửi**: One row per account."]


def test_one_gloss_word_alone_is_not_a_term() -> None:
    from engines.sql.schema import note_terms

    terms = note_terms("- `tier` — `standard` (Thường), `gold` (Vàng), `vip` (khách VIP).")
    assert "khách vip" in terms and not terms & {"thường", "vàng"}  # "bồi thường" is not about tiers
