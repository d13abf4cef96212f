"""Files, the one way: JSONL lines with their file:line, atomic writes, and exclusive locks.

Every reader of a JSONL file (corpora, evaluation rows, conflict pairs, caches) goes through
:func:`read_jsonl`, so a bad line is always reported the same way; every file another process
may read while it changes (manifest, BM25 pointer, model marker) is written by :func:`atomic_write`;
every "one writer at a time" is a :func:`exclusive_lock` (``filelock``; the OS releases it
when the holder dies).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from engines.errors import DocumentError, TurnragError


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line: its parsed value, or why it could not be parsed."""

    source: str
    number: int
    value: Any = None
    error: str | None = None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.number}"


def parse_jsonl(lines: Iterable[str], source: str = "<lines>") -> Iterator[JsonLine]:
    """JSON lines from any text lines (blank ones skipped); ``source`` names them in errors."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield JsonLine(source, number, json.loads(line))
        except json.JSONDecodeError as exc:
            yield JsonLine(source, number, error=f"invalid JSON ({exc.msg} at column {exc.colno})")


def read_jsonl(path: Path | str) -> Iterator[JsonLine]:
    """The non-blank lines of a UTF-8 JSONL file, read as a stream; a line that is not JSON comes
    back with ``error`` set (callers collect every problem and report them at once)."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError(f"{path}: file does not exist") from None
    except OSError as exc:
        raise DocumentError(f"{path}: cannot be read ({exc.strerror})") from exc
    with handle:
        lines = parse_jsonl(handle, str(path))
        last = 0
        try:
            for line in lines:
                last = line.number
                yield line
        except UnicodeDecodeError as exc:
            raise DocumentError(f"{path}: not UTF-8 text after line {last} ({exc.reason}); "
                                "re-save it as UTF-8") from None


def append_jsonl(path: Path | str, value: Any) -> None:
    """Append one JSON line (UTF-8, non-ASCII kept readable)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(value, ensure_ascii=False) + "\n")


def atomic_write(path: Path | str, data: str | bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` so a reader sees the old content or the new, never half: write a temp file
    beside it, fsync, rename, fsync the folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Persist a rename: without this a power cut can lose the directory entry."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LockHeld(TurnragError):
    """Another process holds an exclusive lock; the message names it and what to do."""


@contextmanager
def exclusive_lock(path: Path | str, *, wait: bool = True, busy_message: str = "",
                   error: type[TurnragError] = LockHeld) -> Iterator[None]:
    """Hold ``path`` as a cross-process lock. ``wait=False`` raises :class:`LockHeld` at once when
    another process holds it, with ``busy_message`` formatted with ``{path}`` and ``{pid}`` (the
    holder's pid, kept in ``<path>.owner``), as ``error``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    owner = path.with_name(path.name + ".owner")
    lock = FileLock(str(path), timeout=-1 if wait else 0)
    try:
        lock.acquire()
    except Timeout:
        holder = owner.read_text(encoding="utf-8").strip() if owner.exists() else "?"
        raise error((busy_message or "{path} is held by process {pid}").format(path=path, pid=holder or "?")) from None
    try:
        owner.write_text(str(os.getpid()), encoding="utf-8")
        yield
    finally:
        lock.release()


@contextmanager
def redis_lock(url: str, name: str, *, busy_message: str = "", error: type[TurnragError] = LockHeld,
               ttl_s: int = 60) -> Iterator[None]:
    """A lock in Redis (``SET name owner NX EX ttl``) for writers on several machines sharing one
    store; renewed while held, so a dead holder's lock lapses after ``ttl_s`` seconds."""
    import socket

    import redis

    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    owner = f"{os.getpid()}@{socket.gethostname()}"
    try:
        acquired = client.set(name, owner, nx=True, ex=ttl_s)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise error(f"the lock store (redis at {url}) is unreachable: {exc}") from exc
    if not acquired:
        holder = (client.get(name) or b"?").decode()
        raise error((busy_message or "{path} is held by {pid}").format(path=f"{name} in {url}", pid=holder))
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(ttl_s / 3):
            try:
                client.expire(name, ttl_s)
            except redis.exceptions.RedisError:  # the next renewal tries again; the ttl bounds the gap
                continue

    renewer = threading.Thread(target=renew, name="turnrag-lock-renew", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        # release only our own lock (it may have lapsed and been taken by another writer)
        client.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
                    1, name, owner)
