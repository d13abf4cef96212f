"""API keys from a TOML file (``TURNRAG_API_KEYS``)::

    [keys."KEY"]
    user = "loan-officer"
    filters = { department = "tin-dung" }   # same form as TURNRAG_FILTERS; optional
    sql_tables = ["branches", "loans"]      # the tables its questions may read (docs/sql.md); optional

A key's filter is enforced on the server; a request may narrow it, never widen it. A session
belongs to the key that created it (``Caller.owner``, a hash of the key: the key itself is never
stored).
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.errors import ConfigError
from engines.retrieval.filters import MetadataFilter


@dataclass(frozen=True)
class Caller:
    user: str
    owner: str
    filter: MetadataFilter = field(default_factory=lambda: MetadataFilter(include_inactive=True))
    sql_tables: frozenset[str] | None = None  # None: every table TURNRAG_SQL_TABLES allows


#: Who calls when the server runs without keys (loopback only).
LOCAL = Caller(user="local", owner="local")


def owner_of(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Keys:
    """The accepted keys; ``None`` means no keys file (every caller is :data:`LOCAL`)."""

    def __init__(self, callers: Mapping[str, Caller] | None) -> None:
        self._callers = dict(callers) if callers is not None else None

    @property
    def required(self) -> bool:
        return self._callers is not None

    def caller(self, authorization: str | None) -> Caller | None:
        """The caller for an ``Authorization`` header, or None when the key is missing or wrong."""
        if self._callers is None:
            return LOCAL
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._callers.get(token.strip())

    @classmethod
    def load(cls, path: Path | None) -> "Keys":
        if path is None:
            return cls(None)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"API keys file {path} (TURNRAG_API_KEYS): cannot be read ({exc.strerror})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"API keys file {path} (TURNRAG_API_KEYS): not valid TOML ({exc})") from exc
        keys = data.get("keys")
        if not isinstance(keys, dict) or not keys:
            raise ConfigError(f'API keys file {path}: expected one or more [keys."KEY"] tables with a user')
        callers: dict[str, Caller] = {}
        for key, entry in keys.items():
            where = f'API keys file {path}, [keys."{key[:4]}…"]'
            if not isinstance(entry, dict) or not str(entry.get("user", "")).strip():
                raise ConfigError(f"{where}: needs user = \"...\"")
            unknown = set(entry) - {"user", "filters", "sql_tables"}
            if unknown:
                raise ConfigError(f"{where}: unknown field(s) {sorted(unknown)}; use user, filters and sql_tables")
            tables = entry.get("sql_tables")
            if tables is not None and (not isinstance(tables, list) or not all(isinstance(t, str) for t in tables)):
                raise ConfigError(f'{where}: sql_tables must be a list of table names, e.g. ["branches", "loans"]')
            spec: Any = entry.get("filters") or {}
            flt = MetadataFilter.parse(spec, where=f"{where} filters").with_inactive(
                bool(spec.get("include_inactive", True)) if isinstance(spec, dict) else True)
            callers[key] = Caller(user=str(entry["user"]), owner=owner_of(key), filter=flt,
                                  sql_tables=None if tables is None else frozenset(tables))
        return cls(callers)
