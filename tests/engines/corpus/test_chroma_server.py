"""Server mode: a real `chroma run` on 127.0.0.1, ingestion and retrieval through HttpClient."""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.compose import ingest_path, open_pipeline
from app.config import load_settings

CHROMA = Path(sys.executable).parent / "chroma"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_chroma(folder: Path) -> tuple[subprocess.Popen, int]:
    """`chroma run` on 127.0.0.1 with its data in ``folder``; (process, port) once it listens."""
    exe = str(CHROMA) if CHROMA.exists() else shutil.which("chroma")
    if exe is None:
        pytest.fail("the `chroma` command (from the chromadb package) is not installed")
    port = _free_port()
    log = (folder / "chroma.log").open("w")
    proc = subprocess.Popen([exe, "run", "--path", str(folder / "server-data"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited: {(folder / 'chroma.log').read_text()}")
            time.sleep(0.2)
    return proc, port


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    proc, port = start_chroma(tmp_path_factory.mktemp("chroma"))
    yield port
    stop(proc)


@pytest.mark.server
def test_retrieval_through_a_chroma_server(tmp_path, corpus, chroma_server):
    settings = load_settings(index_dir=tmp_path / "index", chroma_host="127.0.0.1", chroma_port=chroma_server,
                             embedding="fake", llm="fake", log_dir=None, top_k=3, candidate_k=10, conflicts=False)
    report = ingest_path(settings, corpus)
    assert report.total_chunks == 7
    assert not (tmp_path / "index" / "chroma").exists()  # vectors live in the server, not embedded
    pipeline = open_pipeline(settings)
    assert type(pipeline.index.collection._client).__name__ != "PersistentClient"
    results = pipeline.retriever().retrieve("Thẻ SKU-4417 có phí thường niên bao nhiêu?")
    assert results[0].node.metadata["doc_id"] == "card-sku-4417"
    assert "vector" in results[0].raw_scores
    assert not ingest_path(settings, corpus).changed  # idempotent against the server too


@pytest.mark.server
def test_unreachable_server_is_explained(tmp_path, corpus):
    from engines.errors import IndexUnavailable

    settings = load_settings(index_dir=tmp_path / "index", chroma_host="127.0.0.1", chroma_port=_free_port(),
                             embedding="fake", llm="fake", log_dir=None)
    with pytest.raises(IndexUnavailable, match="chroma run"):
        ingest_path(settings, corpus)


@pytest.mark.server
def test_a_chroma_server_that_goes_away_is_named(tmp_path, corpus):
    from engines.errors import IndexUnavailable

    proc, port = start_chroma(tmp_path)
    try:
        settings = load_settings(index_dir=tmp_path / "index", chroma_host="127.0.0.1", chroma_port=port,
                                 embedding="fake", llm="fake", log_dir=None, top_k=3, candidate_k=10, conflicts=False)
        ingest_path(settings, corpus)
        pipeline = open_pipeline(settings)
    finally:
        stop(proc)
    with pytest.raises(IndexUnavailable, match="Chroma server is unreachable"):
        pipeline.retriever().retrieve("Thẻ SKU-4417 có phí thường niên bao nhiêu?")
