"""`make chat` on the bundled sample shows the database road out of the box; an empty
TURNRAG_SQL_URL keeps it off."""

from __future__ import annotations

import io
from pathlib import Path

from app.chat import run
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM

COUNT = "```sql\nSELECT COUNT(*) AS customers FROM customers WHERE city = 'Hà Nội';\n```"


def scripted(*replies: str):
    def models(settings):
        llm = ScriptedLLM(replies)
        return Models(embed_model=HashEmbedding(), llm=llm, condense_llm=llm)
    return models


def chat(lines: list[str], *replies: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["--llm", "fake", "--embedding", "fake"], stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out,
               stderr=err, models=scripted(*replies))
    return code, out.getvalue(), err.getvalue()


def test_the_sample_repl_reads_the_sample_warehouse_unless_told_not_to(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default index folder, built from data/sample on first run
    monkeypatch.setenv("TURNRAG_LOG_DIR", "")
    monkeypatch.delenv("TURNRAG_SQL_URL", raising=False)
    code, out, err = chat(["/debug", "Có bao nhiêu khách hàng ở Hà Nội?"], COUNT)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "Theo dữ liệu, kết quả là **129** (customers)."
    assert lines[2] == "Nguồn: dữ liệu, bảng (customers)"
    assert any(line.startswith("sql road: sql (names the schema and asks for") for line in lines)
    assert "  sql: SELECT COUNT(*) AS customers FROM customers WHERE city = 'Hà Nội' LIMIT 200" in lines
    assert "llm_calls=1 refused=False" in out and "sql_run=" in out
    assert (tmp_path / ".turnrag" / "sample_bank.sqlite3").is_file()

    monkeypatch.setenv("TURNRAG_SQL_URL", "")
    code, out, err = chat(["Có bao nhiêu khách hàng ở Hà Nội?"], COUNT)
    assert code == 0, err
    assert "Theo dữ liệu" not in out and out.startswith("Xin lỗi")  # the documents' refusal: no data road
