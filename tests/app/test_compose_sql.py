"""The composition root and the database road: built only with a URL, failing at start-up naming the
setting, the sample warehouse wired in for the REPL, and data questions kept in scope by the router."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.compose import router_examples, with_sample_database
from app.config import SAMPLE_DB_NOTES, load_settings
from engines.conversation.router import DOCS
from engines.errors import ConfigError
from engines.sql.road import SQL_EXEMPLARS


def test_the_sample_warehouse_is_the_default_unless_a_url_is_set_or_set_empty(tmp_path: Path) -> None:
    wired = with_sample_database(load_settings(), tmp_path)
    assert wired.sql_url.get_secret_value() == f"sqlite:///{(tmp_path / 'sample_bank.sqlite3').resolve()}"
    assert wired.sql_notes == SAMPLE_DB_NOTES and (tmp_path / "sample_bank.sqlite3").is_file()
    assert with_sample_database(load_settings(sql_url=""), tmp_path).sql_url.get_secret_value() == ""
    mine = with_sample_database(load_settings(sql_url="postgresql://u:pw@h/db"), tmp_path)
    assert mine.sql_url.get_secret_value() == "postgresql://u:pw@h/db"
    assert "pw" not in str(mine.model_dump(mode="json"))  # reports quote the settings: the password stays out


@pytest.mark.parametrize("overrides, says", [
    ({"sql_url": "sqlite:////nonexistent/bank.db"}, "TURNRAG_SQL_URL"),
    ({"sql_tables": "loans,payments"}, "TURNRAG_SQL_TABLES"),
    ({"sql_notes": "/nonexistent/notes.md"}, "TURNRAG_SQL_NOTES"),
])
def test_a_wrong_database_setting_fails_when_the_pipeline_is_built(make_pipeline, tmp_path: Path, overrides,
                                                                   says: str) -> None:
    bank = with_sample_database(load_settings(), tmp_path).sql_url
    with pytest.raises(ConfigError, match=says):
        make_pipeline(**{"sql_url": bank, **overrides})


def test_with_a_database_data_questions_are_in_scope_for_the_semantic_router() -> None:
    assert set(SQL_EXEMPLARS) <= set(router_examples(load_settings(sql_url="sqlite:///x.db"))[DOCS])
    assert not set(SQL_EXEMPLARS) & set(router_examples(load_settings())[DOCS])
