"""End to end with the embedded defaults: real multilingual-e5 embeddings and the packaged local
LLM (Qwen2.5-1.5B GGUF via llama.cpp), over the bundled sample corpus."""

from pathlib import Path

import pytest

from app.config import SAMPLE_CORPUS, load_settings
from app.factory import build_models, ingest_path, open_pipeline

pytestmark = pytest.mark.e2e

SEED = [
    ("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", "leave-probation"),
    ("Còn hợp đồng thời vụ thì sao?", "leave-seasonal"),
    ("Cái đó có được cộng dồn không?", "leave-seasonal-carryover"),
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
    for question, gold in SEED:
        response = engine.stream_chat(question)
        answer = "".join(response.response_gen)
        record = engine.last_record
        print(f"\nQ: {question}\n   query: {record.query}\n   top: {record.retrieved_doc_ids[:3]}\n   A: {answer}")
        assert gold in record.retrieved_doc_ids[: real_pipeline.settings.top_k], (question, record.retrieved_doc_ids)
        assert answer.strip()
    assert engine.records[0].condense.used_llm is False
    assert all(r.condense.used_llm for r in engine.records[1:])


def test_off_topic_question_is_refused_without_sources(real_pipeline):
    engine = real_pipeline.new_engine(record_log=False)
    response = engine.chat("Tỷ giá bitcoin hôm nay là bao nhiêu?")
    record = engine.last_record
    assert record.refused and response.source_nodes == [] and "không tìm thấy" in response.response
