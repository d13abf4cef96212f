"""The SQL writer's prompt holds what a model needs, and its reply is read the way models write it."""

from __future__ import annotations

import pytest

from engines.sql.prompt import parse_sql, retry_message, sql_prompt


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
