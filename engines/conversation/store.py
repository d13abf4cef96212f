"""Where conversations live between requests: a SQLite file (embedded, the default) or Redis (for
replicas). A turn is stored as one unit (question, answer and its record together), so a server
killed mid-answer leaves no half turn, and a session belongs to the API key that created it.

LlamaIndex's chat stores keep message lists and write one message at a time
(``add_message``): they cannot store a question, its answer and its record atomically, nor an
owner. Sessions are rebuilt from these turns on every request (``engines.session.Session.restore``),
so any replica can serve any request.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engines.errors import TurnragError


class StoreUnavailable(TurnragError):
    """The conversation store cannot be reached; the message names it."""


@dataclass(frozen=True)
class StoredTurn:
    question: str
    answer: str
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def query(self) -> str:
        return str(self.record.get("query") or "")

    def to_json(self) -> str:
        return json.dumps({"question": self.question, "answer": self.answer, "record": self.record}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> "StoredTurn":
        data = json.loads(text)
        return cls(data["question"], data["answer"], data.get("record") or {})


class ConversationStore(Protocol):
    """What the service needs of a store; every method may raise :class:`StoreUnavailable`."""

    where: str

    def create(self, owner: str) -> str: ...

    def owner(self, session_id: str) -> str | None: ...

    def turns(self, session_id: str) -> list[StoredTurn]: ...

    def append(self, session_id: str, turn: StoredTurn) -> None: ...

    def delete(self, session_id: str) -> bool: ...

    def ping(self) -> None: ...


class SQLiteConversations:
    """One SQLite file (WAL), one connection shared under a lock: writes are one transaction each."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.where = f"sqlite file {self.path}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=10)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
                             "created REAL NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS turns (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
                             "turn TEXT NOT NULL, PRIMARY KEY (session_id, seq))")

    def _run(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            with self._lock:
                return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"conversation store ({self.where}): {exc}") from exc

    def create(self, owner: str) -> str:
        session_id = uuid.uuid4().hex
        self._run("INSERT INTO sessions (id, owner, created) VALUES (?, ?, ?)", (session_id, owner, time.time()))
        return session_id

    def owner(self, session_id: str) -> str | None:
        rows = self._run("SELECT owner FROM sessions WHERE id = ?", (session_id,))
        return rows[0][0] if rows else None

    def turns(self, session_id: str) -> list[StoredTurn]:
        rows = self._run("SELECT turn FROM turns WHERE session_id = ? ORDER BY seq", (session_id,))
        return [StoredTurn.from_json(text) for (text,) in rows]

    def append(self, session_id: str, turn: StoredTurn) -> None:
        self._run("INSERT INTO turns (session_id, seq, turn) SELECT ?, COALESCE(MAX(seq), 0) + 1, ? "
                  "FROM turns WHERE session_id = ?", (session_id, turn.to_json(), session_id))

    def delete(self, session_id: str) -> bool:
        try:
            with self._lock:
                self._db.execute("BEGIN")
                self._db.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
                deleted = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"conversation store ({self.where}): {exc}") from exc
        return bool(deleted)

    def ping(self) -> None:
        self._run("SELECT 1")


class RedisConversations:
    """Redis: a hash per session (owner) and a list of whole turns (one RPUSH per turn: atomic).
    Keys carry the session id, never LlamaIndex's shared default key."""

    PREFIX = "turnrag"

    def __init__(self, url: str, ttl_s: int | None = None) -> None:
        import redis

        self.where = f"redis at {url}"
        self._ttl = ttl_s
        self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)

    def _keys(self, session_id: str) -> tuple[str, str]:
        return f"{self.PREFIX}:session:{session_id}", f"{self.PREFIX}:turns:{session_id}"

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise StoreUnavailable(f"conversation store ({self.where}) is unreachable: {exc}") from exc

    def create(self, owner: str) -> str:
        session_id = uuid.uuid4().hex
        meta, _ = self._keys(session_id)
        self._call(self._redis.hset, meta, mapping={"owner": owner, "created": time.time()})
        if self._ttl:
            self._call(self._redis.expire, meta, self._ttl)
        return session_id

    def owner(self, session_id: str) -> str | None:
        meta, _ = self._keys(session_id)
        value = self._call(self._redis.hget, meta, "owner")
        return value.decode() if value is not None else None

    def turns(self, session_id: str) -> list[StoredTurn]:
        _, turns = self._keys(session_id)
        return [StoredTurn.from_json(item) for item in self._call(self._redis.lrange, turns, 0, -1)]

    def append(self, session_id: str, turn: StoredTurn) -> None:
        meta, turns = self._keys(session_id)
        self._call(self._redis.rpush, turns, turn.to_json())
        if self._ttl:
            self._call(self._redis.expire, turns, self._ttl)
            self._call(self._redis.expire, meta, self._ttl)

    def delete(self, session_id: str) -> bool:
        meta, turns = self._keys(session_id)
        return bool(self._call(self._redis.delete, turns, meta))

    def ping(self) -> None:
        self._call(self._redis.ping)


def open_conversations(spec: str | Path) -> ConversationStore:
    """``redis://host:port/db`` for Redis, anything else is a SQLite file path."""
    text = str(spec)
    if text.startswith(("redis://", "rediss://", "unix://")):
        return RedisConversations(text)
    return SQLiteConversations(text)
