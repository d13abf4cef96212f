"""The HTTP service for real: uvicorn on 127.0.0.1 over a pipeline with scripted models, spoken to
with the official `openai` client and plain HTTP (SSE included)."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from app.service.admission import Admission
from app.service.api import ServiceState, create_app
from app.service.keys import Keys
from app.service.metrics import Metrics
from app.service.turns import Limits, TurnService
from engines.conversation.store import SQLiteConversations
from engines.models.fakes import ScriptedLLM
from tests.conftest import write_doc

KEYS = """
[keys."key-hr"]
user = "hr-officer"
filters = { department = "nhan-su" }

[keys."key-all"]
user = "admin"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(service: TurnService, keys: Keys, *, wait_ready: bool = True):
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(ServiceState(lambda: service), keys, "turnrag-test"),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 20
    while True:
        try:
            if httpx.get(f"{base}/{'readyz' if wait_ready else 'healthz'}", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.time() < deadline, "service did not become ready"
        time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def dept_corpus(corpus: Path) -> Path:
    write_doc(corpus, "hr-leave-carry", "Phép năm chuyển sang năm sau", "2024-01-10",
              "Phép năm chưa nghỉ được chuyển sang quý 1 năm sau, tối đa 5 ngày.", department="nhan-su")
    write_doc(corpus, "credit-leave-carry", "Phép năm khối tín dụng", "2024-01-10",
              "Cán bộ tín dụng được chuyển tối đa 3 ngày phép năm sang năm sau.", department="tin-dung")
    return corpus


@pytest.fixture
def service(dept_corpus, make_pipeline, tmp_path):  # the corpus is complete before it is ingested
    def build(llm=None, *, slots=2, queue=4, store=None, **settings):
        pipeline = make_pipeline(llm=llm or ScriptedLLM(), **settings)
        return TurnService(pipeline, store or SQLiteConversations(tmp_path / "sessions.sqlite3"),
                           Admission(slots, queue), Metrics(), Limits(max_message_chars=200, max_history_messages=4))
    return build


def keys_file(tmp_path: Path) -> Keys:
    path = tmp_path / "keys.toml"
    path.write_text(KEYS, encoding="utf-8")
    return Keys.load(path)


def events_of(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_openai_client_chat_and_stream(service, tmp_path) -> None:
    import openai

    with serving(service(ScriptedLLM(["Thẻ SKU-4471 có phí thường niên 200.000 đồng."] * 2)), keys_file(tmp_path)) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-all")
        assert [m.id for m in client.models.list()] == ["turnrag-test"]
        reply = client.chat.completions.create(model="turnrag-test", messages=[
            {"role": "user", "content": "Phí thường niên thẻ SKU-4471 là bao nhiêu?"}])
        assert reply.choices[0].message.content == "Thẻ SKU-4471 có phí thường niên 200.000 đồng."
        extra = reply.model_extra["turnrag"]
        assert extra["sources"][0]["doc_id"] == "card-sku-4471" and extra["refused"] is False
        assert extra["query"] == "Phí thường niên thẻ SKU-4471 là bao nhiêu?"
        chunks = list(client.chat.completions.create(model="turnrag-test", stream=True, messages=[
            {"role": "user", "content": "Phí thường niên thẻ SKU-4471 là bao nhiêu?"}]))
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        assert text == "Thẻ SKU-4471 có phí thường niên 200.000 đồng." and len(chunks) > 3
        assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["turnrag"]["sources"]


def test_session_api_json_sse_history_and_delete(service, tmp_path) -> None:
    llm = ScriptedLLM(["Nhân viên thử việc không có phép năm.", "Ngày phép thời vụ có được cộng dồn không?",
                       "Không được cộng dồn."])
    with serving(service(llm), keys_file(tmp_path)) as base:
        auth = {"Authorization": "Bearer key-all"}
        sid = httpx.post(f"{base}/v1/sessions", headers=auth).json()["id"]
        first = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers=auth,
                           json={"content": "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?"}, timeout=30).json()
        assert first["answer"] == "Nhân viên thử việc không có phép năm." and first["sources"][0]["doc_id"] == "leave-probation"
        assert set(first) == {"answer", "sources", "query", "refused", "conflicts", "record"}
        streamed = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers={**auth, "Accept": "text/event-stream"},
                              json={"content": "Cái đó có được cộng dồn không?"}, timeout=30)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        events = events_of(streamed.text)
        names = [name for name, _ in events]
        assert names[:2] == ["query", "sources"] and names[-1] == "done" and "token" in names
        assert events[0][1]["query"] == "Ngày phép thời vụ có được cộng dồn không?"  # condensed with the stored history
        assert "".join(d["text"] for n, d in events if n == "token") == "Không được cộng dồn."
        history = httpx.get(f"{base}/v1/sessions/{sid}", headers=auth).json()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"] * 2
        assert history["messages"][-1]["content"] == "Không được cộng dồn."
        assert httpx.delete(f"{base}/v1/sessions/{sid}", headers=auth).status_code == 204
        assert httpx.get(f"{base}/v1/sessions/{sid}", headers=auth).status_code == 404


def test_keys_sessions_and_filters_are_enforced(service, tmp_path) -> None:
    with serving(service(refusal_min_vector=-1.0), keys_file(tmp_path)) as base:
        assert httpx.post(f"{base}/v1/sessions").status_code == 401
        assert httpx.post(f"{base}/v1/sessions", headers={"Authorization": "Bearer nope"}).status_code == 401
        hr = {"Authorization": "Bearer key-hr"}
        sid = httpx.post(f"{base}/v1/sessions", headers=hr).json()["id"]
        other = {"Authorization": "Bearer key-all"}
        assert httpx.get(f"{base}/v1/sessions/{sid}", headers=other).status_code == 404  # not even its existence
        answer = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers=hr, timeout=30,
                            json={"content": "Phép năm được chuyển sang năm sau tối đa bao nhiêu ngày?"}).json()
        assert {s["doc_id"] for s in answer["sources"]} <= {"hr-leave-carry"}
        candidates = answer["record"]["candidates"]
        assert candidates and all(c["doc_id"] == "hr-leave-carry" for c in candidates)  # both retrievers filtered
        widened = httpx.post(f"{base}/v1/chat/completions", headers=hr, timeout=30, json={
            "messages": [{"role": "user", "content": "Phép năm khối tín dụng chuyển bao nhiêu ngày?"}],
            "filters": {"department": "tin-dung"}}).json()
        assert "turnrag" in widened, widened
        assert widened["turnrag"]["sources"] == []  # a request may narrow the key's filter, never widen it


def test_bad_requests_get_a_clear_4xx(service, tmp_path) -> None:
    with serving(service(), Keys(None)) as base:
        sid = httpx.post(f"{base}/v1/sessions").json()["id"]
        too_long = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "x" * 201})
        assert too_long.status_code == 413 and "TURNRAG_MAX_MESSAGE_CHARS" in too_long.json()["error"]["message"]
        bad_json = httpx.post(f"{base}/v1/sessions/{sid}/messages", content=b"{not json",
                              headers={"Content-Type": "application/json"})
        assert bad_json.status_code == 400 and bad_json.json()["error"]["code"] == "invalid_json"
        assert httpx.post(f"{base}/v1/sessions/nope/messages", json={"content": "hi"}).status_code == 404
        history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}] * 3
        long_history = httpx.post(f"{base}/v1/chat/completions", json={"messages": history + [{"role": "user", "content": "c"}]})
        assert long_history.status_code == 413
        assert httpx.post(f"{base}/v1/chat/completions", json={"messages": []}).status_code == 400


class SlowLLM(ScriptedLLM):
    """1.5 s a reply; its async stream waits off the event loop, as a real async client does."""

    def _reply(self, prompt: str) -> str:
        time.sleep(1.5)
        return super()._reply(prompt)

    async def astream_chat(self, messages, **kwargs):
        import asyncio

        parts = await asyncio.to_thread(lambda: list(self.stream_chat(messages, **kwargs)))

        async def replay():
            for part in parts:
                yield part

        return replay()


def test_a_full_queue_answers_503_with_retry_after_never_hangs(service, tmp_path) -> None:
    with serving(service(SlowLLM(), slots=1, queue=0), Keys(None)) as base:
        body = {"messages": [{"role": "user", "content": "Thẻ SKU-4471 có phí thường niên bao nhiêu?"}]}
        results: list[httpx.Response] = []

        def ask() -> None:
            results.append(httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30))

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
            time.sleep(0.2)
        for t in threads:
            t.join()
        codes = sorted(r.status_code for r in results)
        assert codes[0] == 200 and 503 in codes
        busy = next(r for r in results if r.status_code == 503)
        assert busy.headers["retry-after"] and "busy" in busy.json()["error"]["message"]
        metrics = httpx.get(f"{base}/metrics").text
        assert "turnrag_turns_total" in metrics and "turnrag_step_seconds_bucket" in metrics


class BrokenLLM(ScriptedLLM):
    def stream_complete(self, prompt, formatted=False, **kwargs):
        def gen():
            from llama_index.core.base.llms.types import CompletionResponse

            yield CompletionResponse(text="Half an", delta="Half an")
            raise ConnectionError("LLM server went away")
        return gen()


def test_sessions_survive_a_restart_and_a_failed_turn_stores_nothing(service, tmp_path) -> None:
    store_path = tmp_path / "kept.sqlite3"
    with serving(service(ScriptedLLM(["Không có phép năm."]), store=SQLiteConversations(store_path)), Keys(None)) as base:
        sid = httpx.post(f"{base}/v1/sessions").json()["id"]
        httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "Thử việc nghỉ phép năm bao nhiêu ngày?"}, timeout=30)
    with serving(service(BrokenLLM(), store=SQLiteConversations(store_path)), Keys(None)) as base:  # a new process
        assert len(httpx.get(f"{base}/v1/sessions/{sid}").json()["messages"]) == 2
        broken = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers={"Accept": "text/event-stream"},
                            json={"content": "Thẻ SKU-4471 có phí thường niên bao nhiêu?"}, timeout=30)
        assert events_of(broken.text)[-1][0] == "error"
        assert len(httpx.get(f"{base}/v1/sessions/{sid}").json()["messages"]) == 2  # no half turn


def test_no_keys_means_loopback_only() -> None:
    from app.serve import main

    assert main(["--host", "0.0.0.0", "--llm", "fake", "--embedding", "fake"]) == 2


class APIConnectionError(Exception):
    """Named like the openai client's when nothing listens at the LLM's URL."""


class DownLLM(ScriptedLLM):
    def _reply(self, prompt: str) -> str:
        raise APIConnectionError("Connection error.")


def test_an_llm_server_that_is_down_is_a_503_naming_its_url(service, tmp_path) -> None:
    url = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    with serving(service(DownLLM(), llm_api_base=url), Keys(None)) as base:
        body = {"messages": [{"role": "user", "content": "Thẻ SKU-4471 có phí thường niên bao nhiêu?"}]}
        reply = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
        assert reply.status_code == 503, reply.text
        assert url in reply.json()["error"]["message"] and "APIConnectionError" in reply.json()["error"]["message"]
        sid = httpx.post(f"{base}/v1/sessions").json()["id"]
        sse_reply = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers={"Accept": "text/event-stream"},
                               json={"content": "Thẻ SKU-4471 có phí thường niên bao nhiêu?"}, timeout=30)
        name, data = events_of(sse_reply.text)[-1]
        assert name == "error" and url in data["message"]
        assert httpx.get(f"{base}/v1/sessions/{sid}").json()["messages"] == []  # nothing stored


class DripLLM(ScriptedLLM):
    """Streams a long answer a word at a time and counts the words it produced."""

    produced: int = 0

    def stream_complete(self, prompt, formatted=False, **kwargs):
        from llama_index.core.base.llms.types import CompletionResponse

        self.prompts.append(prompt)

        def gen():
            text = ""
            for i in range(60):
                time.sleep(0.05)
                self.produced += 1
                text += f"từ{i} "
                yield CompletionResponse(text=text, delta=f"từ{i} ")
        return gen()


def test_a_client_that_disconnects_mid_stream_stops_generation_and_stores_nothing(service, tmp_path) -> None:
    llm = DripLLM()
    with serving(service(llm), Keys(None)) as base:
        sid = httpx.post(f"{base}/v1/sessions").json()["id"]
        with httpx.stream("POST", f"{base}/v1/sessions/{sid}/messages", headers={"Accept": "text/event-stream"},
                          json={"content": "Thẻ SKU-4471 có phí thường niên bao nhiêu?"}, timeout=30) as reply:
            for line in reply.iter_lines():
                if line == "event: token":
                    break  # the user closed the tab
        time.sleep(1.5)  # the whole answer would take 3 s
        produced = llm.produced
        time.sleep(1.0)
        assert produced < 60 and llm.produced == produced  # stopped, and stays stopped
        assert httpx.get(f"{base}/v1/sessions/{sid}").json()["messages"] == []


def test_redis_down_is_a_503_naming_it_and_the_service_recovers_when_it_returns(service, tmp_path) -> None:
    from engines.conversation.store import RedisConversations
    from tests.engines.conversation.test_store import start_redis

    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    redis = start_redis(port, tmp_path)
    try:
        with serving(service(store=RedisConversations(url)), Keys(None)) as base:
            sid = httpx.post(f"{base}/v1/sessions").json()["id"]
            redis.terminate()
            redis.wait(timeout=10)
            down = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "Thẻ SKU-4471 phí bao nhiêu?"},
                              timeout=30)
            assert down.status_code == 503 and f"127.0.0.1:{port}" in down.json()["error"]["message"]
            ready = httpx.get(f"{base}/readyz", timeout=10)
            assert ready.status_code == 503 and "redis" in ready.json()["error"]["message"]
            redis = start_redis(port, tmp_path)  # back (empty: no persistence configured here)
            assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
            sid = httpx.post(f"{base}/v1/sessions").json()["id"]
            back = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "Thẻ SKU-4471 phí bao nhiêu?"},
                              timeout=30)
            assert back.status_code == 200 and back.json()["answer"]
    finally:
        redis.terminate()
        redis.wait(timeout=10)
