"""Metadata filters that hold on both retrievers: department, active, date range, any flat field.

A filter is a frozen value. :meth:`MetadataFilter.matches` is the single definition of "allowed";
Chroma gets the same conditions as a ``where`` clause so it spends its top-k on allowed chunks, and
BM25 masks disallowed documents out of its score array (LlamaIndex's BM25 filter is a weight mask
that lets non-matching nodes through as score-0 filler). Both sides then re-check every node with
``matches``, so nothing outside the filter can reach fusion, the context, the sources or the
conflict report.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from engines.errors import ConfigError

Scalar = str | int | float | bool
_DATE_KEYS = ("date_from", "date_to")
_INACTIVE_KEYS = ("include_inactive", "inactive")


@dataclass(frozen=True)
class MetadataFilter:
    """Allowed values per field (any of them), an inclusive ISO date range, and inactive docs on/off.

    Documents with ``active: false``, and those another document replaces (``replaced``, from the
    index: ``engines.corpus.replacements``), are excluded unless ``include_inactive``; a date range
    excludes documents without a date.
    """

    equals: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()
    date_from: str | None = None
    date_to: str | None = None
    include_inactive: bool = False
    #: None: the index's replaced documents (``engines.retrieval.hybrid``); a set: exactly these left out
    replaced: frozenset[str] | None = None

    # ------------------------------------------------------------------ building

    @classmethod
    def parse(cls, spec: Mapping[str, Any] | None, *, where: str = "filters") -> "MetadataFilter":
        """From a mapping such as ``{"department": "tin-dung", "date_from": "2024-01-01"}``.

        Values may be a scalar or a list of scalars (any of them matches). ``include_inactive``
        (or ``inactive``) true lets superseded documents through. ``where`` names the source
        (a file and line, a setting) in error messages.
        """
        if spec is None:
            return cls()
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where}: filters must be an object such as {{\"department\": \"tin-dung\"}}, got {spec!r}")
        equals: dict[str, tuple[Scalar, ...]] = {}
        dates: dict[str, str | None] = {"date_from": None, "date_to": None}
        include_inactive = False
        for key, value in spec.items():
            if key in _DATE_KEYS:
                dates[key] = _iso_date(value, f"{where}.{key}")
            elif key in _INACTIVE_KEYS:
                include_inactive = _boolean(value, f"{where}.{key}")
            else:
                values = value if isinstance(value, (list, tuple)) else [value]
                if not values or not all(isinstance(v, (str, int, float, bool)) for v in values):
                    raise ConfigError(f"{where}.{key}: use a text, number, true/false, or a list of them; got {value!r}")
                if key == "active":
                    values = [_boolean(v, f"{where}.active") for v in values]
                    include_inactive = include_inactive or False in values
                equals[key] = tuple(values)
        if dates["date_from"] and dates["date_to"] and dates["date_from"] > dates["date_to"]:
            raise ConfigError(f"{where}: date_from {dates['date_from']} is after date_to {dates['date_to']}")
        return cls(tuple(sorted(equals.items())), dates["date_from"], dates["date_to"], include_inactive)

    @classmethod
    def parse_assignments(cls, text: str, *, base: "MetadataFilter | None" = None) -> "MetadataFilter":
        """REPL syntax: ``department=tin-dung date_from=2024-01-01 inactive=on`` (``a|b`` for several)."""
        spec: dict[str, Any] = base.to_spec() if base else {}
        for part in text.split():
            if "=" not in part:
                raise ConfigError(f"filter {part!r}: write field=value, e.g. department=tin-dung")
            key, value = part.split("=", 1)
            spec[key] = value.split("|") if "|" in value else value
        return cls.parse(spec, where="/filter")

    def merged(self, other: "MetadataFilter | None") -> "MetadataFilter":
        """Both filters at once (session filter + per-question filter): the stricter wins per field."""
        if other is None:
            return self
        equals = dict(self.equals)
        for key, values in other.equals:
            equals[key] = tuple(v for v in equals[key] if v in values) if key in equals else values
        return MetadataFilter(
            tuple(sorted(equals.items())),
            max(filter(None, (self.date_from, other.date_from)), default=None),
            min(filter(None, (self.date_to, other.date_to)), default=None),
            self.include_inactive and other.include_inactive,
            None if self.replaced is None and other.replaced is None else (self.replaced or frozenset()) | (other.replaced or frozenset()),
        )

    def excluding(self, replaced: frozenset[str]) -> "MetadataFilter":
        """This filter with ``replaced`` documents counted as inactive."""
        return self if replaced == self.replaced else replace(self, replaced=frozenset(replaced))

    def with_inactive(self, include: bool) -> "MetadataFilter":
        return replace(self, include_inactive=include)

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {k: v[0] if len(v) == 1 else list(v) for k, v in self.equals}  # []: matches nothing
        if self.date_from:
            spec["date_from"] = self.date_from
        if self.date_to:
            spec["date_to"] = self.date_to
        if self.include_inactive:
            spec["include_inactive"] = True
        return spec

    # ------------------------------------------------------------------ using

    @property
    def is_empty(self) -> bool:
        """True when nothing is excluded (not even inactive documents)."""
        return not self.equals and not self.date_from and not self.date_to and self.include_inactive

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """The one definition of "this chunk may be shown"."""
        if not self.include_inactive and (metadata.get("active", True) is False
                                          or (self.replaced and metadata.get("doc_id") in self.replaced)):
            return False
        for key, allowed in self.equals:
            if metadata.get(key) not in allowed:
                return False
        if self.date_from or self.date_to:
            date = str(metadata.get("date") or "")[:10]
            if not date:
                return False
            if self.date_from and date < self.date_from:
                return False
            if self.date_to and date > self.date_to:
                return False
        return True

    def chroma_where(self) -> dict[str, Any] | None:
        """The equality part as a Chroma ``where`` clause (dates are strings there: checked after)."""
        conditions: list[dict[str, Any]] = []
        if not self.include_inactive and "active" not in dict(self.equals):
            conditions.append({"active": {"$ne": False}})
        if not self.include_inactive and self.replaced:
            conditions.append({"doc_id": {"$nin": sorted(self.replaced)}})
        for key, allowed in self.equals:
            conditions.append({key: {"$in": list(allowed)}} if len(allowed) > 1 else {key: {"$eq": allowed[0]}})
        if not conditions:
            return None
        return conditions[0] if len(conditions) == 1 else {"$and": conditions}

    @property
    def only_excludes_inactive(self) -> bool:
        """The default filter: nothing asked for but leaving superseded documents out."""
        return not self.equals and not self.date_from and not self.date_to and not self.include_inactive

    @property
    def matches_nothing(self) -> bool:
        """Two filters that narrowed a field to no value at all (or an empty date range)."""
        empty_range = bool(self.date_from and self.date_to and self.date_from > self.date_to)
        return empty_range or any(not allowed for _, allowed in self.equals)

    @property
    def needs_post_filter(self) -> bool:
        """Conditions Chroma cannot evaluate (string date ranges)."""
        return bool(self.date_from or self.date_to)

    def describe(self) -> str:
        parts = [f"{k}={'|'.join(str(v) for v in vals)}" for k, vals in self.equals]
        if self.date_from or self.date_to:
            parts.append(f"date {self.date_from or '…'}..{self.date_to or '…'}")
        parts.append("inactive documents included" if self.include_inactive else "active documents only")
        if self.replaced and not self.include_inactive:
            parts.append(f"{len(self.replaced)} replaced document(s) left out")
        return ", ".join(parts)


NO_FILTER = MetadataFilter(include_inactive=True)


def _iso_date(value: Any, where: str) -> str | None:
    if value in (None, ""):
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10]).isoformat()
    except ValueError:
        raise ConfigError(f"{where}: {value!r} is not a date; write YYYY-MM-DD") from None


def _boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ConfigError(f"{where}: {value!r} is not true/false")
