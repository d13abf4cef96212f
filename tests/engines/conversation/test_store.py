"""Conversation stores: whole turns, owners, deletion; SQLite on disk and a real redis-server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from engines.conversation.store import RedisConversations, SQLiteConversations, StoredTurn, StoreUnavailable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require(binary: str) -> str:
    """A system program the tests start for real; missing is a skip locally, a failure in CI."""
    path = shutil.which(binary)
    if path is None:
        message = f"{binary} is not installed (make test installs it with apt-get)"
        if os.environ.get("TURNRAG_REQUIRE_SYSTEM_DEPS"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def start_redis(port: int, folder) -> subprocess.Popen:
    """A real redis-server on 127.0.0.1:``port`` (no persistence), once it accepts connections."""
    proc = subprocess.Popen([require("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)], stdout=subprocess.DEVNULL)
    deadline = time.time() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            assert proc.poll() is None and time.time() < deadline, "redis-server did not start"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    port = _free_port()
    proc = start_redis(port, tmp_path_factory.mktemp("redis"))
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


def _exercise(store) -> None:
    sid = store.create("owner-a")
    assert store.owner(sid) == "owner-a" and store.turns(sid) == []
    store.append(sid, StoredTurn("Câu 1?", "Trả lời 1.", {"query": "Câu 1?"}))
    store.append(sid, StoredTurn("Câu 2?", "Trả lời 2.", {"query": "Câu hai đầy đủ?"}))
    turns = store.turns(sid)
    assert [t.question for t in turns] == ["Câu 1?", "Câu 2?"] and turns[1].query == "Câu hai đầy đủ?"
    other = store.create("owner-b")
    assert store.turns(other) == [] and store.owner(other) == "owner-b"  # sessions never share history
    assert store.delete(sid) and store.owner(sid) is None and store.turns(sid) == []
    assert not store.delete(sid)
    store.ping()


def test_sqlite_store(tmp_path) -> None:
    _exercise(SQLiteConversations(tmp_path / "s.sqlite3"))
    reopened = SQLiteConversations(tmp_path / "s.sqlite3")
    sid = reopened.create("x")
    reopened.append(sid, StoredTurn("q", "a"))
    assert SQLiteConversations(tmp_path / "s.sqlite3").turns(sid)[0].answer == "a"  # on disk, not in memory


def test_redis_store(redis_url) -> None:
    _exercise(RedisConversations(redis_url))


def test_an_unreachable_redis_is_named() -> None:
    store = RedisConversations(f"redis://127.0.0.1:{_free_port()}/0")
    with pytest.raises(StoreUnavailable, match=r"redis at redis://127\.0\.0\.1"):
        store.ping()
