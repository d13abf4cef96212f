"""The sample warehouse: bank.sql is exactly what its generator writes, and the notes describe every
table and column it creates."""

from __future__ import annotations

import importlib.util
import re
import sqlite3

from app.config import SAMPLE_DB_NOTES, SAMPLE_DB_SCRIPT


def _generator():
    spec = importlib.util.spec_from_file_location("sample_db_generate", SAMPLE_DB_SCRIPT.with_name("generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bank_sql_is_what_the_seeded_generator_writes() -> None:
    assert SAMPLE_DB_SCRIPT.read_text(encoding="utf-8") == _generator().render(), \
        "run python data/sample_db/generate.py"


def test_the_notes_name_every_table_and_column() -> None:
    connection = sqlite3.connect(":memory:")
    connection.executescript(SAMPLE_DB_SCRIPT.read_text(encoding="utf-8"))
    notes = SAMPLE_DB_NOTES.read_text(encoding="utf-8")
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert sorted(tables) == ["branches", "customers", "deposits", "loans", "staff"]
    missing = [f"{t}.{c[1]}" for t in tables for c in connection.execute(f"PRAGMA table_info({t})")
               if c[1] != "id" and not re.search(rf"`{c[1]}`", notes)]
    assert not missing and all(f"## {t}" in notes for t in tables), f"describe in notes.md: {missing}"
