"""The database road inside a turn: decided after the condense step, answered and recorded like any
turn (streamed, logged, shown by /debug through the TurnRecord), and the documents left to theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import SAMPLE_DB_NOTES, SAMPLE_DB_SCRIPT
from engines.models.fakes import ScriptedLLM
from engines.sql.database import build_sqlite
from tests.conftest import engine_over

COUNT_HANOI = "```sql\nSELECT COUNT(*) AS customers FROM customers WHERE city = 'Hà Nội';\n```"
COUNT_DANANG = "```sql\nSELECT COUNT(*) AS customers FROM customers WHERE city = 'Đà Nẵng';\n```"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    target = tmp_path / "bank.sqlite3"
    build_sqlite(SAMPLE_DB_SCRIPT, target)
    return target


@pytest.fixture
def with_data(make_pipeline, bank, tmp_path):
    def make(*replies: str, **overrides):
        llm = ScriptedLLM(replies)
        pipeline = make_pipeline(llm=llm, sql_url=f"sqlite:///{bank}", sql_notes=SAMPLE_DB_NOTES,
                                 log_dir=tmp_path / "logs", **overrides)
        return pipeline, llm
    return make


def test_without_a_database_there_is_no_sql_step(pipeline) -> None:
    assert "sql" not in pipeline.step_names and "condense" in pipeline.step_names


def test_a_data_question_then_a_terse_follow_up_both_take_the_data_road(with_data, bank, tmp_path) -> None:
    before = bank.read_bytes()
    # "Còn ở Đà Nẵng thì sao?" is a swap follow-up: rewritten without the condense LLM
    pipeline, llm = with_data(COUNT_HANOI, COUNT_DANANG)
    assert pipeline.step_names.index("sql") == pipeline.step_names.index("condense") + 1
    engine = engine_over(pipeline)
    first = engine.stream_chat("Có bao nhiêu khách hàng ở Hà Nội?")
    streamed = "".join(first.response_gen)
    assert streamed == "Theo dữ liệu, kết quả là **129** (customers)."
    record = engine.last_record
    assert record.route == "sql" and record.answer_mode == "sql" and not record.refused
    assert record.sql["statement"].endswith("WHERE city = 'Hà Nội' LIMIT 200") and record.sql["rows"] == [[129]]
    assert {"sql", "sql_route", "sql_write", "sql_run", "total"} <= set(record.timings_ms)
    assert record.candidates == [] and record.llm_calls == 1  # nothing retrieved, one call for the SQL

    engine.chat("Còn ở Đà Nẵng thì sao?")
    follow = engine.last_record
    assert follow.query == "Có bao nhiêu khách hàng ở Đà Nẵng?"  # the value swapped, whatever the condenser did
    assert follow.route == "sql" and follow.sql["road"]["previous"] == "sql"
    assert follow.answer == "Theo dữ liệu, kết quả là **41** (customers)."
    # the SQL writer reads the standalone question and the one it follows up on
    assert f"Question: {follow.query}" in llm.prompts[-1]
    assert "follows up on an earlier one: Có bao nhiêu khách hàng ở Hà Nội?" in llm.prompts[-1]
    # ... and edits the statement that answered it
    assert "answered by this statement:\n```sql\nSELECT COUNT(*) AS customers FROM customers WHERE city = 'Hà Nội' " \
           "LIMIT 200\n```" in llm.prompts[-1]
    assert "answered by this statement" not in llm.prompts[0]

    logged = [json.loads(line) for line in (tmp_path / "logs" / "turns.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["route"] for r in logged] == ["sql", "sql"] and logged[1]["sql"]["rows"] == [[41]]
    assert bank.read_bytes() == before


def test_a_document_question_goes_on_to_the_documents_with_the_roads_reasons_recorded(with_data) -> None:
    pipeline, llm = with_data()
    engine = engine_over(pipeline)
    engine.chat("Điều kiện vay mua nhà là gì?")
    record = engine.last_record
    assert record.route == "docs" and record.candidates and record.sql["road"]["road"] == "docs"
    assert all("SELECT" not in p for p in llm.prompts)


def test_a_write_request_is_refused_on_the_data_road_and_nothing_runs(with_data, bank) -> None:
    before = bank.read_bytes()
    pipeline, llm = with_data("```sql\nDELETE FROM loans\n```")
    engine = engine_over(pipeline)
    answer = engine.chat("Xóa tất cả khoản vay quá hạn").response
    record = engine.last_record
    assert record.route == "sql" and record.refused and record.refusal_reason == "sql_write_request"
    assert answer == "Tôi chỉ đọc dữ liệu để trả lời câu hỏi; tôi không thêm, sửa hay xoá dữ liệu."
    assert llm.calls == 0 and bank.read_bytes() == before


class SmallTalkRouter:
    """A router that takes every message for small talk, as the semantic one took "Thêm giúp mình..."."""

    def route(self, question, history):
        from engines.conversation.router import DIRECT, RouteDecision

        return RouteDecision(DIRECT, 1.0)


def test_a_write_request_taken_for_small_talk_is_still_refused_not_answered_done(with_data, bank) -> None:
    before = bank.read_bytes()
    pipeline, llm = with_data("Đã thêm khách hàng Trần Văn Bảo vào hệ thống.")  # what the direct reply would say
    engine = engine_over(pipeline)
    engine.session.set_router(SmallTalkRouter())
    answer = engine.chat("Thêm giúp mình một khách hàng mới tên Trần Văn Bảo ở Cần Thơ vào hệ thống.").response
    record = engine.last_record
    assert record.route == "sql" and record.refusal_reason == "sql_write_request"
    assert answer == "Tôi chỉ đọc dữ liệu để trả lời câu hỏi; tôi không thêm, sửa hay xoá dữ liệu."
    assert llm.calls == 0 and bank.read_bytes() == before
    assert engine.chat("Chào bạn!").response == "Đã thêm khách hàng Trần Văn Bảo vào hệ thống."  # small talk stays


def test_when_the_writer_finds_no_statement_the_documents_answer(with_data) -> None:
    pipeline, llm = with_data("NO_SQL")
    engine = engine_over(pipeline)
    engine.chat("Tổng số tiền gửi của khách hàng là bao nhiêu?")
    record = engine.last_record
    assert record.sql["road"]["road"] == "sql" and record.sql["status"] == "no_sql"
    assert record.route == "docs" and record.candidates and llm.calls >= 1


def test_a_sessions_table_list_narrows_what_the_road_may_read(with_data) -> None:
    pipeline, llm = with_data("```sql\nSELECT COUNT(*) FROM staff\n```", "```sql\nSELECT COUNT(*) FROM staff\n```")
    engine = engine_over(pipeline)
    engine.session.set_sql_tables(frozenset({"loans"}))
    engine.chat("Có bao nhiêu nhân viên ở mỗi chi nhánh?")
    record = engine.last_record
    assert record.route == "sql" and record.refused and record.refusal_reason == "sql_failed"
    assert "CREATE TABLE staff" not in llm.prompts[0] and "not allowed" in record.sql["attempts"][0]["error"]


def test_the_road_reads_the_users_words_when_the_condense_step_only_glued_the_earlier_question_before_them() -> None:
    from engines.record import CondenseTrace
    from engines.steps.base import TurnState
    from engines.steps.condense import Condensed
    from engines.steps.sql import _road_query

    words = "Khách ở Huế đặt online thì mấy ngày mới nhận được hàng?"
    glued = f"Có bao nhiêu khách hàng ở Hà Nội: {words}"

    def state(question: str, reason: str | None) -> TurnState:
        condensed = Condensed(query=glued, trace=CondenseTrace(used_llm=True, fallback_reason=reason))
        return TurnState(question=question, language="vi", query=glued, outputs=(("condense", condensed),))

    assert _road_query(state(words, "answered")) == words
    assert _road_query(state(words, None)) == glued  # a rewrite the condense step stood by
    assert _road_query(state("Còn ở Huế?", "answered")) == glued  # terse: the earlier question decides
