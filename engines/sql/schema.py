"""What the SQL writer and the router know of the database: read from the database itself.

LlamaIndex's :class:`~llama_index.core.utilities.sql_wrapper.SQLDatabase` reflects the allowed
tables (``include_tables``; it also checks that each exists) and names the dialect. Its own table
description ("Table 'x' has columns: ...") is not what goes into the prompt: Qwen2.5-Coder and most
code models were trained on ``CREATE TABLE`` text, so the prompt shows SQLAlchemy's DDL for each
reflected table, a few sample rows, and the exact values of small text columns (a WHERE clause must
spell "Đà Nẵng" as the data does). The notes (``TURNRAG_SQL_NOTES``) say in words what the tables
and columns mean; their **bold** and `code` phrases become the router's schema terms.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from llama_index.core.utilities.sql_wrapper import SQLDatabase
from sqlalchemy import String, Text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.schema import CreateTable

from engines.errors import ConfigError
from engines.sql.database import DEFAULT_TIMEOUT_S, StatementFailed, column_values, fetch
from engines.text import normalize

SAMPLE_ROWS = 3
#: A text column with at most this many distinct values has them listed in the prompt.
LISTED_VALUES = 12


@dataclass(frozen=True)
class Table:
    name: str
    ddl: str  # CREATE TABLE ...
    columns: tuple[str, ...]
    sample: tuple[tuple[Any, ...], ...] = ()
    values: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # small text columns: every value
    joins: tuple[str, ...] = ()  # its foreign keys as join conditions: "loans.branch_id = branches.id"


@dataclass(frozen=True)
class Schema:
    """The allowed tables as the database describes them, the notes, and the dialect."""

    dialect: str
    tables: dict[str, Table]
    notes: str = ""

    def allowed(self, only: Collection[str] | None = None) -> tuple[str, ...]:
        """The table names a turn may read: all, or those of ``only`` (a key's list) that exist."""
        if only is None:
            return tuple(self.tables)
        wanted = {t.lower() for t in only}
        return tuple(name for name in self.tables if name.lower() in wanted)

    def describe(self, tables: Sequence[str]) -> str:
        """The prompt's picture of ``tables``: DDL, sample rows, listed values."""
        parts = []
        for name in tables:
            table = self.tables[name]
            lines = [table.ddl]
            if table.sample:
                lines.append(f"/* {len(table.sample)} rows of {name}:")
                lines.append("\t".join(table.columns))
                lines.extend("\t".join(_shown(v) for v in row) for row in table.sample)
                lines.append("*/")
            for column, values in table.values.items():
                lines.append(f"-- {name}.{column} is one of: " + ", ".join(_shown(v) for v in values))
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    def terms(self, tables: Iterable[str] | None = None) -> frozenset[str]:
        """Words that name the schema: table and column names (and their parts), and the notes' bold
        or `code` phrases; lower case."""
        names = self.tables if tables is None else tables
        found: set[str] = set()
        for name in names:
            found |= _name_terms(name)
            for column in self.tables[name].columns:
                found |= _name_terms(column)
        found |= note_terms(self.notes)
        return frozenset(t for t in found if len(t) >= 3 and t not in GENERIC_COLUMN_WORDS)

    def values(self, tables: Iterable[str] | None = None) -> frozenset[str]:
        """The listed values of small text columns (cities, products, statuses), lower case: naming
        one keeps a terse follow-up on the data road."""
        return frozenset(self.value_columns(tables))

    def value_columns(self, tables: Iterable[str] | None = None) -> dict[str, frozenset[str]]:
        """Each listed value (lower case) and the columns ("table.column") that hold it: "đà nẵng" and
        "hà nội" share branches.city, so one may replace the other in a follow-up."""
        out: dict[str, set[str]] = {}
        for name in self.tables if tables is None else tables:
            for column, values in self.tables[name].values.items():
                for value in values:
                    text = normalize(str(value)).lower()
                    if len(text) >= 3 and not text.isdigit():
                        out.setdefault(text, set()).add(f"{name}.{column}")
        return {value: frozenset(columns) for value, columns in out.items()}

    def columns(self, tables: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Each of ``tables`` and its columns: where a condition the notes write may be checked and added."""
        return {t: self.tables[t].columns for t in tables}

    def joins(self, tables: Sequence[str]) -> list[str]:
        """The foreign keys between ``tables`` as join conditions."""
        return [j for t in tables for j in self.tables[t].joins if j.split(" = ")[1].split(".")[0] in tables]

    def recap(self, tables: Sequence[str]) -> str:
        """Each table's columns and the joins, in two lines next to the question: a small model reads
        what is near the question better than the DDL far above it."""
        columns = "; ".join(f"{t}({', '.join(self.tables[t].columns)})" for t in tables)
        joins = self.joins(tables)
        return f"Columns: {columns}\n" + (f"Joins: {'; '.join(joins)}\n" if joins else "")

    def hint(self, error: str, tables: Sequence[str], statement: str = "") -> str:
        """For a second try: where the columns an error names really are, and the JOIN that reaches
        them from the tables the failed ``statement`` read (the packaged model wrote loans.city and,
        told only "no such column: city", wrote it again)."""
        lines = []
        named = {m.lower() for m in re.findall(r"(?i)\b(?:from|join)\s+[\"`]?(\w+)", statement)}
        read = [t for t in tables if t.lower() in named]
        for word in dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", error)):
            holders = [t for t in tables if word in self.tables[t].columns and len(word) > 2]
            if not holders or any(t in read for t in holders):
                continue
            lines.append(f"Column {word} is not in {', '.join(read) or 'those tables'}; it is in {', '.join(holders)}.")
            for holder in holders:
                for join in self.joins(tables):
                    ends = {side.split(".")[0] for side in join.split(" = ")}
                    if holder in ends and ends & set(read):
                        lines.append(f"Use JOIN {holder} ON {join} and then {holder}.{word}.")
        return "\n".join(lines)


#: Parts of column names that say nothing about what a question is about.
GENERIC_COLUMN_WORDS = frozenset({"id", "ids", "name", "code", "date", "type", "status", "value", "created",
                                  "updated", "at", "on", "is", "no", "num", "the"})


def _name_terms(name: str) -> set[str]:
    parts = [p for p in re.split(r"[_\W]+", name.lower()) if p]
    return {name.lower().replace("_", " "), *parts, *(_singular(p) for p in parts)}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


#: Notes passages repeated next to the question, and the characters each may take.
NOTES_FOR_QUESTION, NOTE_CHARS = 3, 420


def note_passages(notes: str) -> list[str]:
    """The notes cut into what one rule is: a bullet (with its wrapped lines) or a paragraph, the
    heading above it kept in front (so "## loans — ..." stays with the paragraph it names)."""
    passages: list[str] = []
    heading = ""
    for block in re.split(r"\n\s*\n", notes):
        lines: list[str] = []
        for line in block.strip().splitlines():
            if line.startswith("#"):
                if lines:  # a rule written right above the heading belongs to the one before
                    passages.append(_with_heading(heading, " ".join(lines)))
                    lines = []
                heading = line.lstrip("#").strip()
                continue
            if re.match(r"\s*[-*] ", line) and lines:
                passages.append(_with_heading(heading, " ".join(lines)))
                lines = []
            lines.append(line.strip())
        if lines:
            passages.append(_with_heading(heading, " ".join(lines)))
    return passages


def notes_for(question: str, notes: str, *, most: int = NOTES_FOR_QUESTION, defined_only: bool = False) -> list[str]:
    """The notes passages whose keys the question uses, longest match first: the phrases marked at
    its start (the term it defines) and the `code` values anywhere in it. A bold word in the middle
    is emphasis: matching "**chi nhánh**" there put a rule about Hà Nội beside a question about every
    branch, and the writer added WHERE city = 'Hà Nội'. A 1.5B writer read "revenue counts completed orders only" three
    thousand tokens above the question and summed every order; the same line beside the question
    is followed. ``defined_only``: only the passages whose defined term (marked at their start) the question uses."""
    asked = f" {_plain(question)} "
    scored = []
    for order, passage in enumerate(_passages(notes)):
        keys = {_plain(k) for k in (_marked(passage[:DEFINED_WITHIN]) if defined_only else _keys(passage))}
        hit = max((len(k) for k in keys if len(k) >= 3 and f" {k} " in asked), default=0)
        if hit:
            scored.append((-hit, order, passage))
    chosen = sorted(scored)[:most]
    return [p if len(p) <= NOTE_CHARS else p[: NOTE_CHARS - 3] + "..." for _, _, p in sorted(chosen, key=lambda x: x[1])]


@lru_cache(maxsize=8)
def _passages(notes: str) -> tuple[str, ...]:
    """:func:`note_passages`, cut once per notes text (a pipeline's notes never change; every data turn reads them)."""
    return tuple(note_passages(notes))


#: Where notes list alternatives: "a / b", "a, b", "a (b)", quoted "a".
_ALTERNATIVES = re.compile(r'\s*(?:/|,|\(|\)|")\s*')


#: Characters at a passage's start where a marked phrase is the term it defines.
DEFINED_WITHIN = 80


def _keys(passage: str) -> set[str]:
    return _marked(passage[:DEFINED_WITHIN]) | set(re.findall(r"`([^`\n]{2,60})`", passage))


def _with_heading(heading: str, text: str) -> str:
    """A heading that names a table (it marks a phrase) goes in front; "Conventions" does not."""
    text = re.sub(r"^[-*]\s+", "", text)
    return f"{heading}: {text}" if heading and _marked(heading) else text


def _marked(passage: str) -> set[str]:
    """A passage's marked phrases, split where the notes list alternatives ("a / b", "a", "b")."""
    found = re.findall(r'\*\*([^*\n]{2,80})\*\*|`([^`\n]{2,60})`|"([^"\n]{2,40})"', passage)
    return {part for group in found for phrase in group if phrase
            for part in _ALTERNATIVES.split(phrase) if part.strip()}


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", normalize(text).lower()))


def note_terms(notes: str) -> set[str]:
    """The phrases the notes use as names of things: **bold** and `code`, and the words they give a
    table, a column or a value ("### `orders` — đơn hàng (một hoá đơn)", "`list_price` — giá niêm
    yết", "`completed` (hoàn tất)"): a team writes those in its users' language."""
    marked = re.findall(r"\*\*([^*\n]{2,60})\*\*|`([^`\n]{2,60})`", notes)
    found = set()
    for phrase in (p for pair in marked for p in pair if p.strip()):
        parts = [x.strip() for x in _ALTERNATIVES.split(normalize(phrase).lower())]
        found.update(x for x in (parts if len(parts) > 1 else [normalize(phrase).strip().lower()]) if x)
    for phrase in (part for text in [*_DESCRIBED.findall(notes), *_GLOSSED.findall(notes)]
                   for part in _ALTERNATIVES.split(text)):
        words = re.findall(r"\w+", normalize(phrase).lower())
        # in words, one word alone is too often an ordinary one ("thường" in "bồi thường")
        if 2 <= len(words) <= 4 and not any(w.isdigit() for w in words):
            found.add(" ".join(words))
    return {t for t in found if t not in GENERIC_NOTE_WORDS}


#: Marked in notes for emphasis, not as names: "**không** tính vào doanh thu", "**mọi** đơn".
GENERIC_NOTE_WORDS = frozenset({"không", "không có", "mọi", "một trong", "hiện tại", "đọc", "thời gian", "tất cả",
                                "ví dụ", "lưu ý", "chú ý",
                                "not", "all", "only", "never", "none", "current", "every"})


#: "`name` — words" up to the first stop, and "`value` (words)".
_DESCRIBED = re.compile(r"`[^`\n]{2,60}`\s+[—–-]\s+([^.:;=\n`*]{2,60}?)\s*(?=[.:;=\n`*]|$)")
_GLOSSED = re.compile(r"`[^`\n]{2,60}`\s*\(([^)\n`]{2,40})\)")


def _shown(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_notes(path: Path | None, *, setting: str = "sql_notes / TURNRAG_SQL_NOTES") -> str:
    if path is None:
        return ""
    try:
        return normalize(Path(path).read_text(encoding="utf-8")).strip()
    except OSError as exc:
        raise ConfigError(f"setting {setting}: cannot read {path} ({exc.strerror}); give a Markdown file "
                          "describing the tables and columns in words") from exc


def read_schema(engine: Engine, tables: Sequence[str] = (), *, notes: str = "", sample_rows: int = SAMPLE_ROWS,
                timeout_s: float = DEFAULT_TIMEOUT_S, setting: str = "sql_tables / TURNRAG_SQL_TABLES") -> Schema:
    """Reflect ``tables`` (empty: every table) through LlamaIndex's SQLDatabase; :class:`ConfigError`
    naming ``setting`` for a table the database does not have."""
    try:
        database = SQLDatabase(engine, include_tables=list(tables) or None, sample_rows_in_table_info=0)
    except ValueError as exc:  # "include_tables {...} not found in database"
        raise ConfigError(f"setting {setting}: {exc}; tables there: "
                          f"{', '.join(SQLDatabase(engine).get_usable_table_names())}") from None
    except SQLAlchemyError as exc:  # unreachable, wrong password, no such database
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ConfigError(f"setting sql_url / TURNRAG_SQL_URL: cannot read the database ({reason}); check the URL "
                          "and that the server is up, or set TURNRAG_SQL_URL= (empty) to turn the SQL road off") from None
    described: dict[str, Table] = {}
    for name in database.get_usable_table_names():
        table = database.metadata_obj.tables[name]
        columns = tuple(c.name for c in table.columns)
        ddl = str(CreateTable(table).compile(engine)).strip()
        quote_id = engine.dialect.identifier_preparer.quote
        try:
            sample = fetch(engine, f"SELECT * FROM {quote_id(name)} LIMIT {sample_rows}", max_rows=sample_rows,
                           timeout_s=timeout_s).rows if sample_rows else ()
        except StatementFailed:
            sample = ()
        texts = [c.name for c in table.columns if isinstance(c.type, (String, Text))]
        values = column_values(engine, name, texts, most=LISTED_VALUES, timeout_s=timeout_s)
        joins = tuple(f"{name}.{fk.parent.name} = {fk.column.table.name}.{fk.column.name}"
                      for fk in sorted(table.foreign_keys, key=lambda fk: fk.parent.name))
        described[name] = Table(name=name, ddl=ddl, columns=columns, sample=sample, values=values, joins=joins)
    if not described:
        raise ConfigError(f"setting {setting}: the database holds no table to read")
    return Schema(dialect=database.dialect, tables=described, notes=notes)
