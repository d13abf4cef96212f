"""End to end with the embedded defaults: real multilingual-e5 embeddings and the packaged local
LLM (Qwen2.5-1.5B GGUF via llama.cpp), over the bundled sample corpus."""

import re

import pytest

from app.config import SAMPLE_CORPUS, load_settings
from app.factory import build_models, ingest_path, open_pipeline

pytestmark = pytest.mark.e2e

#: (question, gold document, what a correct answer says: a regex over the answer)
SEED = [
    # probation: no paid annual leave during probation (1 day per month is accrued for later)
    ("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", "leave-probation", r"không"),
    # seasonal contracts: 1 day of paid leave per full month worked
    ("Còn hợp đồng thời vụ thì sao?", "leave-seasonal", r"\b1 ngày|một ngày"),
    # carry-over: only within the contract, never to the next year or the next contract
    ("Cái đó có được cộng dồn không?", "leave-seasonal-carryover", r"không|chỉ"),
]


@pytest.fixture(scope="module")
def real_pipeline(tmp_path_factory):
    index = tmp_path_factory.mktemp("e2e") / "index"
    settings = load_settings(index_dir=index, log_dir=None)  # embedded defaults: e5-small + local LLM
    assert settings.embedding == "e5-small" and settings.llm == "local"
    ingest_path(settings, SAMPLE_CORPUS)
    return open_pipeline(settings, build_models(settings))


def test_seed_conversation_retrieves_the_right_document_at_every_turn(real_pipeline):
    engine = real_pipeline.new_engine(record_log=False)
    for question, gold, correct in SEED:
        response = engine.stream_chat(question)
        answer = "".join(response.response_gen)
        record = engine.last_record
        print(f"\nQ: {question}\n   query: {record.query}\n   top: {record.retrieved_doc_ids[:3]}\n   A: {answer}")
        assert gold in record.retrieved_doc_ids[: real_pipeline.settings.top_k], (question, record.retrieved_doc_ids)
        assert answer.strip()
        # Whether the answer is right is the packaged 1.5B model's doing: printed (run with -s) and
        # reported in the README, not asserted. Measured 2026-11-30: it quotes the accrual clause on
        # turn 1, confuses probation and seasonal staff on turn 2 and answers NOT_FOUND on turn 3,
        # each time with the right document ranked first or second.
        print(f"   refused: {record.refused}; matches what a correct answer says ({correct}): "
              f"{bool(re.search(correct, answer, flags=re.I))}")
    assert engine.records[0].condense.used_llm is False
    assert all(r.condense.used_llm for r in engine.records[1:])


def test_off_topic_question_is_refused_without_sources(real_pipeline):
    engine = real_pipeline.new_engine(record_log=False)
    response = engine.chat("Tỷ giá bitcoin hôm nay là bao nhiêu?")
    record = engine.last_record
    # The router declines it as out of scope before retrieval; without the router the gate refuses it.
    assert record.refused and response.source_nodes == [] and record.sources == []
    assert record.refusal_reason in ("out_of_scope", "no_relevant_documents")
    assert "Xin lỗi" in response.response
