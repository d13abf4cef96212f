"""Two service processes on one `chroma run` server and one `redis-server`: a conversation alternating
between them keeps its memory, a document ingested into the shared store is seen by both (BM25
follows the store), and one ingest writes at a time across processes (the lock lives in Redis)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from engines.io import redis_lock
from tests.conftest import DOCS, write_doc
from tests.engines.conversation.test_store import _free_port, redis_url  # noqa: F401 - the fixture
from tests.engines.corpus.test_chroma_server import chroma_server  # noqa: F401 - the fixture

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]


def _env(chroma_port: int, redis: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "TURNRAG_CHROMA_HOST": "127.0.0.1", "TURNRAG_CHROMA_PORT": str(chroma_port),
            "TURNRAG_SESSION_STORE": redis, "TURNRAG_EMBEDDING": "fake", "TURNRAG_LLM": "fake",
            "TURNRAG_ROUTER": "off", "TURNRAG_CONFLICTS": "false", "TURNRAG_REFUSAL_MIN_VECTOR": "0.25",
            "TURNRAG_STORE_FOLLOW_S": "0.5", "TURNRAG_LOG_DIR": "", **extra}


def _ingest(folder: Path, index: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.ingest", str(folder), "--index", str(index), "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, chroma_server, redis_url):  # noqa: F811
    """Started once for the module: the tests below run in order on the same two replicas."""
    tmp_path = tmp_path_factory.mktemp("replicas")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for doc_id, (title, date, body) in DOCS.items():
        write_doc(corpus, doc_id, title, date, body)
    env = _env(chroma_server, redis_url)
    assert _ingest(corpus, tmp_path / "index-a", env).returncode == 0
    procs, bases = [], []
    for name in ("a", "b"):  # b never ingested: its manifest and BM25 come from the store
        port = _free_port()
        procs.append(subprocess.Popen([sys.executable, "-m", "app.serve", "--port", str(port),
                                       "--index", str(tmp_path / f"index-{name}")], cwd=ROOT, env=env,
                                      stdout=subprocess.DEVNULL, stderr=(tmp_path / f"{name}.log").open("w")))
        bases.append(f"http://127.0.0.1:{port}")
    deadline = time.time() + 120
    for base, proc, name in zip(bases, procs, "ab"):
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"replica {name} did not become ready: {(tmp_path / f'{name}.log').read_text()[-3000:]}")
            time.sleep(0.2)
    yield bases, env, corpus
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_conversation_alternating_between_replicas_keeps_its_memory(replicas) -> None:
    (a, b), _, _ = replicas
    sid = httpx.post(f"{a}/v1/sessions").json()["id"]
    first = httpx.post(f"{a}/v1/sessions/{sid}/messages", timeout=60,
                       json={"content": "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?"}).json()
    assert first["sources"][0]["doc_id"] == "leave-probation"
    second = httpx.post(f"{b}/v1/sessions/{sid}/messages", timeout=60,
                        json={"content": "Còn hợp đồng thời vụ thì sao?"}).json()
    # b rewrote the follow-up from a's stored turn: the swap rule needs the previous question
    assert second["record"]["condense"]["rule"] == "swap"
    # (which words the swap replaces is the corpus's call; the hashed test embedder cannot judge it)
    assert "nghỉ phép năm" in second["query"] and "hợp đồng thời vụ" in second["query"]
    assert len(httpx.get(f"{a}/v1/sessions/{sid}").json()["messages"]) == 4


def test_a_document_ingested_into_the_shared_store_is_seen_by_both(replicas, tmp_path) -> None:
    (a, b), env, _ = replicas
    new = tmp_path / "new"
    new.mkdir()
    write_doc(new, "card-zx-9031", "Thẻ ZX-9031", "2024-06-01", "Thẻ mã ZX-9031 có hạn mức rút tiền 7.000.000 đồng/ngày.")
    done = _ingest(new, tmp_path / "index-c", env)  # a third machine, its own folder
    assert done.returncode == 0, done.stderr
    question = {"messages": [{"role": "user", "content": "Hạn mức rút tiền thẻ ZX-9031?"}]}
    for base in (a, b):
        deadline = time.time() + 20
        while True:
            reply = httpx.post(f"{base}/v1/chat/completions", json=question, timeout=60).json()
            candidates = {c["doc_id"]: c["raw_scores"] for c in _record(base, reply)}
            if "bm25" in candidates.get("card-zx-9031", {}):
                break  # BM25 was rebuilt from the store; the vectors were the server's all along
            assert time.time() < deadline, f"{base} never saw the new document in BM25: {candidates}"
            time.sleep(0.5)


def _record(base: str, reply: dict) -> list[dict]:
    """The candidates of a stateless turn (the OpenAI API returns sources; a session returns the record)."""
    sid = httpx.post(f"{base}/v1/sessions").json()["id"]
    turn = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"content": "Hạn mức rút tiền thẻ ZX-9031?"},
                      timeout=60).json()
    return turn["record"]["candidates"]


def test_one_ingest_at_a_time_across_machines(replicas, tmp_path, chroma_server, redis_url) -> None:  # noqa: F811
    _, env, corpus = replicas
    name = f"turnrag:ingest-lock:127.0.0.1:{chroma_server}/turnrag"
    with redis_lock(redis_url, name):  # another machine is ingesting
        blocked = _ingest(corpus, tmp_path / "index-d", env)
    assert blocked.returncode == 2 and "being written by another ingest" in blocked.stderr
    assert str(os.getpid()) in blocked.stderr  # names the holder
    assert _ingest(corpus, tmp_path / "index-d", env).returncode == 0  # released
