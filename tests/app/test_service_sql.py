"""The database road through the HTTP service: a key's table list is enforced, and the OpenAI
response's ``turnrag`` field carries the road, the SQL, the rows (capped) and the stage timings."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.config import SAMPLE_DB_NOTES, SAMPLE_DB_SCRIPT
from app.service.admission import Admission
from app.service.keys import Keys
from app.service.metrics import Metrics
from app.service.turns import TurnService
from engines.conversation.store import SQLiteConversations
from engines.errors import ConfigError
from engines.models.fakes import ScriptedLLM
from engines.sql.database import build_sqlite
from tests.app.test_service import serving

KEYS = """
[keys."key-all"]
user = "analyst"

[keys."key-loans"]
user = "loan-officer"
sql_tables = ["loans", "branches"]
"""


def ask(base: str, key: str, question: str) -> dict:
    reply = httpx.post(f"{base}/v1/chat/completions", headers={"Authorization": f"Bearer {key}"}, timeout=30,
                       json={"messages": [{"role": "user", "content": question}]})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_keys_tables_are_enforced_and_the_turnrag_field_shows_the_sql(make_pipeline, tmp_path: Path) -> None:
    bank = tmp_path / "bank.sqlite3"
    build_sqlite(SAMPLE_DB_SCRIPT, bank)
    before = bank.read_bytes()
    llm = ScriptedLLM(["```sql\nSELECT COUNT(*) AS customers FROM customers WHERE city = 'Hà Nội'\n```",
                       "```sql\nSELECT COUNT(*) FROM customers\n```", "```sql\nSELECT COUNT(*) FROM customers\n```"])
    pipeline = make_pipeline(llm=llm, sql_url=f"sqlite:///{bank}", sql_notes=SAMPLE_DB_NOTES)
    service = TurnService(pipeline, SQLiteConversations(tmp_path / "sessions.sqlite3"), Admission(1, 2), Metrics())
    keys_path = tmp_path / "keys.toml"
    keys_path.write_text(KEYS, encoding="utf-8")
    with serving(service, Keys.load(keys_path)) as base:
        answered = ask(base, "key-all", "Có bao nhiêu khách hàng ở Hà Nội?")
        assert answered["choices"][0]["message"]["content"] == "Theo dữ liệu, kết quả là **129** (customers)."
        extra = answered["turnrag"]
        assert extra["route"] == "sql" and extra["refused"] is False and extra["sources"] == []
        assert extra["sql"]["statement"].endswith("LIMIT 200") and extra["sql"]["rows"] == [[129]]
        assert {"sql_route", "sql_write", "sql_run", "total"} <= set(extra["timings_ms"])

        limited = ask(base, "key-loans", "Có bao nhiêu khách hàng ở Hà Nội?")["turnrag"]
        assert limited["route"] == "sql" and limited["refused"] is True
        assert "'customers', which is not allowed" in limited["sql"]["attempts"][0]["error"]
    assert bank.read_bytes() == before and llm.calls == 3


def test_a_keys_table_list_must_be_a_list_of_names(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text('[keys."k"]\nuser = "u"\nsql_tables = "loans"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="sql_tables must be a list"):
        Keys.load(path)
    path.write_text('[keys."k"]\nuser = "u"\nsql_tables = ["loans"]\n', encoding="utf-8")
    assert Keys.load(path).caller("Bearer k").sql_tables == frozenset({"loans"})
