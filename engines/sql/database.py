"""The second wall: the connection itself cannot write. SQLite is opened with ``mode=ro`` (and
``PRAGMA query_only``), PostgreSQL runs every statement in a READ ONLY transaction that is rolled
back; both stop a statement that runs past its time (SQLite through a progress handler,
PostgreSQL through ``statement_timeout``). Only these two dialects are supported, because for
them read-only is something the database enforces, not something we hope.

Engines are SQLAlchemy's; LlamaIndex's ``SQLDatabase.run_sql`` is not used to execute: it runs
whatever it is given in a committing transaction (``engine.begin()``), with no timeout, and hands
back rows as one string.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from engines.errors import ConfigError

SUPPORTED = ("sqlite", "postgresql")
DEFAULT_TIMEOUT_S = 5.0


class StatementFailed(RuntimeError):
    """The database refused or stopped a statement; the message is the database's own words
    (what the SQL writer is shown when it gets a second try)."""


@dataclass(frozen=True)
class Rows:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False  # more rows existed than were fetched


def open_engine(url: str, *, setting: str = "sql_url / TURNRAG_SQL_URL") -> Engine:
    """A read-only SQLAlchemy engine for ``url``, or :class:`ConfigError` naming the setting."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(f"setting {setting}: not a SQLAlchemy URL (not shown: it may hold a password); use "
                          "sqlite:///path.db or postgresql://user@host/db") from None
    backend = parsed.get_backend_name()
    if backend not in SUPPORTED:
        raise ConfigError(f"setting {setting}: {backend} is not supported; the SQL road runs only where the "
                          f"database itself enforces read-only ({', '.join(SUPPORTED)})")
    if backend == "sqlite":
        return _sqlite_engine(parsed.database or "", setting)
    if parsed.drivername == "postgresql" and importlib.util.find_spec("psycopg2") is None:
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, the driver we install
    try:
        return create_engine(parsed, pool_pre_ping=True,
                             connect_args={"options": "-c default_transaction_read_only=on"})
    except (ImportError, SQLAlchemyError) as exc:
        raise ConfigError(f"setting {setting}: cannot use {parsed.drivername} ({exc}); install psycopg "
                          "(pip install 'psycopg[binary]')") from exc


def _sqlite_engine(database: str, setting: str) -> Engine:
    if not database or database == ":memory:" or database.startswith("file:"):
        raise ConfigError(f"setting {setting}: give the SQLite file as sqlite:///path/to/file.db")
    path = Path(database).expanduser().resolve()
    if not path.is_file():
        raise ConfigError(f"setting {setting}: the SQLite file {path} does not exist")
    uri = f"file:{quote(str(path))}?mode=ro"

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        connection.execute("PRAGMA query_only = ON")
        return connection

    return create_engine("sqlite://", creator=connect)


def fetch(engine: Engine, sql: str, *, max_rows: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> Rows:
    """Run one checked SELECT read-only; at most ``max_rows`` rows. :class:`StatementFailed` on any
    database error (a syntax error, a missing column, the timeout)."""
    try:
        with engine.connect() as connection:
            raw = connection.connection.dbapi_connection
            if engine.dialect.name == "postgresql":
                connection.exec_driver_sql("SET TRANSACTION READ ONLY")
                connection.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
            else:
                deadline = time.monotonic() + timeout_s
                raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
            try:
                result = connection.exec_driver_sql(sql)
                if not result.returns_rows:
                    raise StatementFailed("the statement returns no rows; only a SELECT may run")
                columns = tuple(result.keys())
                rows = result.fetchmany(max_rows + 1)
            finally:
                if engine.dialect.name != "postgresql":
                    raw.set_progress_handler(None, 0)
                connection.rollback()
    except DBAPIError as exc:
        message = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        if "interrupted" in message:
            message = f"the statement ran longer than {timeout_s:g} s and was stopped"
        raise StatementFailed(message) from exc
    except SQLAlchemyError as exc:
        raise StatementFailed(str(exc).splitlines()[0]) from exc
    return Rows(columns=columns, rows=tuple(tuple(r) for r in rows[:max_rows]), truncated=len(rows) > max_rows)


def build_sqlite(script: Path, target: Path) -> bool:
    """Build the SQLite file ``target`` from the SQL ``script`` unless it was built from this very
    script already (its hash sits beside it). Atomic: a half-built file is never left in place.
    True when it was (re)built."""
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == digest:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        with sqlite3.connect(tmp) as connection:
            connection.executescript(script.read_text(encoding="utf-8"))
        connection.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    stamp.write_text(digest + "\n")
    return True


def column_values(engine: Engine, table: str, columns: Sequence[str], *, most: int,
                  timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, tuple[Any, ...]]:
    """The distinct values of each text column of ``table`` that has at most ``most`` of them
    (cities, products, statuses: what a WHERE clause must spell exactly)."""
    quote_id = engine.dialect.identifier_preparer.quote
    out: dict[str, tuple[Any, ...]] = {}
    for column in columns:
        sql = (f"SELECT DISTINCT {quote_id(column)} FROM {quote_id(table)} WHERE {quote_id(column)} IS NOT NULL "
               f"ORDER BY 1 LIMIT {most + 1}")
        try:
            found = fetch(engine, sql, max_rows=most + 1, timeout_s=timeout_s).rows
        except StatementFailed:
            continue
        if 0 < len(found) <= most:
            out[column] = tuple(row[0] for row in found)
    return out
