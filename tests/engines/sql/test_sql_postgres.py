"""The same road on PostgreSQL: a throwaway cluster (conftest), the sample warehouse loaded into it."""

from __future__ import annotations

import pytest

from engines.models.fakes import ScriptedLLM
from engines.sql.ask import ANSWERED, REFUSED, SqlRoad
from engines.sql.database import StatementFailed, fetch, open_engine
from engines.sql.schema import read_schema


@pytest.fixture
def reader(postgres):
    engine = open_engine(postgres[0])
    yield engine
    engine.dispose()


def test_the_schema_is_read_from_postgresql_and_a_question_answered(reader) -> None:
    schema = read_schema(reader, ["branches", "loans"])
    assert schema.dialect == "postgresql" and "CREATE TABLE loans" in schema.describe(["loans"])
    assert "Đà Nẵng" in schema.tables["branches"].values["city"]
    llm = ScriptedLLM(["```sql\nSELECT b.city, SUM(l.outstanding) AS total FROM loans l JOIN branches b "
                       "ON b.id = l.branch_id GROUP BY b.city ORDER BY total DESC LIMIT 3;\n```"])
    outcome = SqlRoad(reader, schema, llm).answer("Top 3 cities by outstanding loans?", "en")
    assert outcome.status == ANSWERED and "postgresql SELECT" in llm.prompts[0]
    assert outcome.text.splitlines()[4] == "| Hà Nội | 182,234,000,000 |"  # NUMERIC sums come back as Decimal


def test_even_a_role_that_may_write_cannot_through_this_connection(postgres) -> None:
    owner = open_engine(postgres[1])
    try:
        with pytest.raises(StatementFailed, match="read-only transaction"):
            fetch(owner, "DELETE FROM loans RETURNING id", max_rows=5)
        with pytest.raises(StatementFailed, match="read-only transaction"):
            fetch(owner, "WITH gone AS (DELETE FROM loans RETURNING id) SELECT COUNT(*) FROM gone", max_rows=5)
        assert fetch(owner, "SELECT COUNT(*) FROM loans", max_rows=1).rows == ((500,),)
    finally:
        owner.dispose()


def test_a_server_that_cannot_be_reached_fails_naming_the_setting(postgres) -> None:
    from engines.errors import ConfigError

    engine = open_engine(postgres[0].replace("/bank?", "/no_such_db?"))
    with pytest.raises(ConfigError, match="TURNRAG_SQL_URL: cannot read the database .*no_such_db"):
        read_schema(engine)


def test_a_slow_statement_is_stopped_by_statement_timeout(reader) -> None:
    with pytest.raises(StatementFailed, match="statement timeout"):
        fetch(reader, "SELECT pg_sleep(3)", max_rows=1, timeout_s=0.3)
    assert fetch(reader, "SELECT 1", max_rows=1).rows == ((1,),)


def test_a_failed_statement_is_retried_with_postgresqls_error_then_refused(reader) -> None:
    schema = read_schema(reader, ["loans"])
    llm = ScriptedLLM(["```sql\nSELECT SUM(amount) FROM loans\n```", "```sql\nSELECT SUM(total) FROM loans\n```"])
    outcome = SqlRoad(reader, schema, llm).answer("Tổng số tiền vay?", "vi")
    assert outcome.status == REFUSED and outcome.reason == "sql_failed"
    assert 'column "amount" does not exist' in llm.prompts[1]
