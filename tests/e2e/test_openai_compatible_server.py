"""Generate mode through a real OpenAI-compatible server on 127.0.0.1: the packaged model served by
llama.cpp's own server in a process of its own (`python -m app.llm_server`), reached with
TURNRAG_LLM=openai-like, the path users take with vLLM or Ollama. Streaming included."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.compose import build_models, build_pipeline, ingest_path, new_engine, open_index, open_pipeline
from app.config import SAMPLE_CORPUS, load_settings

pytestmark = pytest.mark.e2e
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llm_server(tmp_path_factory):
    port, key = _free_port(), "e2e-key"
    log = (tmp_path_factory.mktemp("llm") / "server.log").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "app.llm_server", "--port", str(port), "--api-key", key,
                             "--parallel", "2"], cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.time() + 240
    while "serving on" not in (log.seek(0) or log.read()):
        if proc.poll() is not None or time.time() > deadline:
            log.seek(0)
            proc.kill()
            pytest.fail(f"llm server did not start: {log.read()[-2000:]}")
        time.sleep(0.5)
    yield f"http://127.0.0.1:{port}/v1", key
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@pytest.fixture(scope="module")
def generate_settings(llm_server, tmp_path_factory):
    api_base, key = llm_server
    settings = load_settings(index_dir=tmp_path_factory.mktemp("gen") / "index", log_dir=None, llm="openai-like",
                             llm_api_base=api_base, llm_api_key=key, llm_model="qwen2.5-coder-1.5b")
    assert settings.effective_answer_mode == "generate"  # the default with an OpenAI-compatible server
    ingest_path(settings, SAMPLE_CORPUS)
    return settings


@pytest.fixture(scope="module")
def generate_pipeline(generate_settings):
    return open_pipeline(generate_settings, build_models(generate_settings))


def test_a_streamed_generated_answer_through_the_server(generate_pipeline) -> None:
    engine = new_engine(generate_pipeline, log_turns=False)
    response = engine.stream_chat("What is the default API rate limit in version 2.0?")
    deltas = list(response.response_gen)
    record = engine.last_record
    answer = "".join(deltas)
    print(f"\nA: {answer}\n   {record.timings_ms}")
    assert len(deltas) > 3 and answer == record.answer  # tokens streamed as they came
    assert "500" in answer and not record.refused
    assert record.answer_mode == "generate" and record.llm_calls == 1 and "first_token" in record.timings_ms
    assert "api-rate-limit-v2-0" in {s.doc_id for s in record.sources}


def test_the_graded_check_reads_the_servers_logprobs_and_refuses_before_writing(generate_settings,
                                                                                generate_pipeline) -> None:
    """TURNRAG_ANSWER_CHECK=graded in generate mode, through the server: P(YES) comes from the first
    token's log-probabilities (a fraction, not the 0/1 of a reply read as text), and a refusal costs
    one call of one token, no written answer."""
    strict_settings = generate_settings.model_copy(update={"answer_check": "graded", "answer_check_min_score": 1.0})
    strict = build_pipeline(strict_settings, generate_pipeline.models, open_index(strict_settings))
    engine = new_engine(strict, log_turns=False)
    answer = "".join(engine.stream_chat("What is the default API rate limit in version 2.0?").response_gen)
    record = engine.last_record
    graded = record.answerability
    print(f"\nA: {answer}\n   {graded} {record.timings_ms}")
    assert 0.0 < graded["p_yes"] < 1.0 and 0.0 < graded["percentile"] < 1.0  # so the score is under 1.0
    assert record.refused and record.refusal_reason == "check_not_answered"
    assert record.llm_calls == 1 and "first_token" not in record.timings_ms  # nothing was written


def test_a_wrong_key_is_a_clear_error_not_a_hang(llm_server, generate_pipeline) -> None:
    import openai

    from engines.models.registry import LLMOptions, build_llm

    api_base, _ = llm_server
    llm = build_llm("openai-like", LLMOptions(model="x", api_base=api_base, api_key="wrong", timeout_s=30))
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    with pytest.raises(openai.AuthenticationError):
        llm.chat([ChatMessage(role=MessageRole.USER, content="hi")])
