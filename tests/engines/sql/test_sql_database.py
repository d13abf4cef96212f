"""The connection cannot write and stops a statement that runs too long, whatever reaches it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from app.config import SAMPLE_DB_SCRIPT
from engines.errors import ConfigError
from engines.sql.database import StatementFailed, build_sqlite, fetch, open_engine
from engines.sql.schema import read_schema


def test_the_sqlite_connection_refuses_writes_even_when_no_guard_ran(bank_db: Path, bank_engine) -> None:
    before = bank_db.read_bytes()
    for sql in ("DELETE FROM loans", "UPDATE customers SET city = 'x'", "DROP TABLE staff",
                "CREATE TABLE x (a INT)", "INSERT INTO branches (id) VALUES (99)"):
        with pytest.raises(StatementFailed, match="readonly|read-only|query_only"):
            fetch(bank_engine, sql, max_rows=5)
    with pytest.raises(StatementFailed, match="no rows"):  # a PRAGMA that switches query_only off...
        fetch(bank_engine, "PRAGMA query_only = OFF", max_rows=5)
    with pytest.raises(StatementFailed, match="readonly"):  # ...still leaves a file opened mode=ro
        fetch(bank_engine, "DELETE FROM loans", max_rows=5)
    assert bank_db.read_bytes() == before
    assert fetch(bank_engine, "SELECT COUNT(*) FROM loans", max_rows=5).rows == ((500,),)


def test_a_statement_past_its_time_is_stopped_with_a_message_that_says_so(bank_engine) -> None:
    slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
    with pytest.raises(StatementFailed, match="longer than 0.2 s"):
        fetch(bank_engine, slow, max_rows=1, timeout_s=0.2)
    assert fetch(bank_engine, "SELECT 1", max_rows=1).rows == ((1,),)  # the pooled connection still works


def test_rows_past_the_cap_are_flagged_not_fetched(bank_engine) -> None:
    rows = fetch(bank_engine, "SELECT id FROM customers ORDER BY id", max_rows=10)
    assert len(rows.rows) == 10 and rows.truncated and rows.columns == ("id",)


@pytest.mark.parametrize("url, says", [
    ("mysql://u@h/db", "not supported"),
    ("sqlite://", "sqlite:///path"),
    ("sqlite:////nonexistent/bank.db", "does not exist"),
    ("not a url", "not a SQLAlchemy URL"),
])
def test_a_bad_url_fails_naming_the_setting(url: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        open_engine(url)
    assert "TURNRAG_SQL_URL" in str(caught.value)


def test_an_unknown_table_in_the_allow_list_fails_naming_the_setting_and_the_tables_there(bank_engine) -> None:
    with pytest.raises(ConfigError, match="TURNRAG_SQL_TABLES") as caught:
        read_schema(bank_engine, ["loans", "payments"])
    assert "payments" in str(caught.value) and "branches" in str(caught.value)
    assert list(read_schema(bank_engine, ["loans"]).tables) == ["loans"]


def test_the_sample_warehouse_is_built_once_per_script_atomically(tmp_path: Path) -> None:
    target = tmp_path / "db" / "bank.sqlite3"
    assert build_sqlite(SAMPLE_DB_SCRIPT, target) is True
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    assert build_sqlite(SAMPLE_DB_SCRIPT, target) is False  # already built from this script
    assert hashlib.sha256(target.read_bytes()).hexdigest() == digest
    changed = tmp_path / "other.sql"
    changed.write_text("CREATE TABLE t (a INT); INSERT INTO t VALUES (1);", encoding="utf-8")
    assert build_sqlite(changed, target) is True and [p.name for p in target.parent.iterdir() if ".tmp" in p.name] == []
