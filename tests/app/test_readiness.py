"""Ready means ready: the first turn's slow parts are loaded before /readyz says 200, and /readyz
says 503 while the LLM cannot answer."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from app.serve import warm
from app.service.keys import Keys
from engines.models.fakes import ScriptedLLM
from engines.models.health import LLMProbe
from tests.app.test_service import dept_corpus, service, serving  # noqa: F401  (fixtures)


class RemoteLLM:
    """What the probe reads of an OpenAI-compatible client."""

    def __init__(self, api_base: str) -> None:
        self.api_base, self.api_key = api_base, "k"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _models_server():
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_readyz_says_503_naming_the_llm_while_it_is_down_and_200_when_it_is_back(service, tmp_path) -> None:  # noqa: F811
    built = service()
    port = _dead_port()
    built.llm_probe = LLMProbe(RemoteLLM(f"http://127.0.0.1:{port}/v1"), keep_s=0)
    with serving(built, Keys(None), wait_ready=False) as base:
        down = httpx.get(f"{base}/readyz", timeout=10)
        assert down.status_code == 503 and down.headers["Retry-After"]
        assert down.json()["error"]["code"] == "llm_unavailable" and str(port) in down.json()["error"]["message"]
        upstream = _models_server()
        try:
            built.llm_probe = LLMProbe(RemoteLLM(f"http://127.0.0.1:{upstream.server_address[1]}/v1"), keep_s=0)
            assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        finally:
            upstream.shutdown()


def test_the_warm_up_runs_a_follow_up_through_condense_and_leaves_no_trace(make_pipeline, tmp_path) -> None:
    llm = ScriptedLLM(["Ngày nghỉ trong tuần được quy định thế nào?"])
    pipeline = make_pipeline(llm=llm, log_dir=tmp_path / "logs")
    seconds = warm(pipeline)
    assert seconds >= 0 and llm.calls == 1  # the follow-up was condensed: the LLM has read a first prompt
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())


def test_quoted_answers_are_not_turned_away_behind_a_busy_llm(service) -> None:  # noqa: F811
    """One LLM slot, no queue, and the slot taken (a written answer in progress): a turn whose answer
    is quoted still runs; a turn whose answer the LLM would write is refused at once (503)."""
    import asyncio

    import pytest

    from app.service.admission import Busy
    from app.service.keys import LOCAL

    question = "Thẻ SKU-4471 có phí thường niên bao nhiêu?"

    async def while_the_llm_is_busy(turns) -> list[str]:
        async with turns.admission.slot():  # someone else's answer is being written
            session = turns.session(LOCAL)
            return [name async for name, _ in turns.events(session, question, [], api="openai")]

    quoting = service(slots=1, queue=0, answer_mode="extract")
    assert asyncio.run(while_the_llm_is_busy(quoting))[-1] == "done"
    writing = service(slots=1, queue=0)
    with pytest.raises(Busy):
        asyncio.run(while_the_llm_is_busy(writing))


def test_with_keys_the_operational_endpoints_want_a_key_too(service, tmp_path) -> None:  # noqa: F811
    from tests.app.test_service import keys_file

    with serving(service(), keys_file(tmp_path)) as base:
        for path in ("/metrics", "/docs", "/openapi.json"):
            assert httpx.get(f"{base}{path}").status_code == 401, path
            assert httpx.get(f"{base}{path}", headers={"Authorization": "Bearer key-all"}).status_code == 200, path
        assert httpx.get(f"{base}/healthz").status_code == 200  # liveness stays open for the orchestrator
    with serving(service(), Keys(None)) as base:  # no keys: loopback only, everything open
        assert httpx.get(f"{base}/metrics").status_code == 200 and httpx.get(f"{base}/docs").status_code == 200


def test_with_a_database_the_warm_up_has_the_llm_read_the_sql_prompt_once(make_pipeline, tmp_path) -> None:
    from app.compose import with_sample_database
    from app.config import load_settings

    llm = ScriptedLLM(["Ngày nghỉ trong tuần được quy định thế nào?", "```sql\nSELECT COUNT(*) FROM loans\n```"])
    bank = with_sample_database(load_settings(), tmp_path).sql_url
    warm(make_pipeline(llm=llm, sql_url=bank))
    assert llm.calls == 2 and "CREATE TABLE loans" in llm.prompts[-1]  # the schema prompt, now in the cache
