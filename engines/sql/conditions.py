"""Conditions the team's notes attach to a term, added to a statement that forgot them.

A team's notes define its words: "**Doanh thu** = tổng `order_items.line_amount` của các đơn có
`orders.status = 'completed'`". The notes passage a question uses is already repeated beside it in the
prompt (``engines.sql.schema.notes_for``), and the packaged 1.5B writer still summed every order. So the
condition is also enforced on the statement: when the question uses the term a passage defines, and the
statement reads the condition's table but says nothing of its column, the condition is added to that
SELECT's WHERE. A statement that already filters the column ("đơn bị huỷ": ``status = 'cancelled'``)
is left as written: the question asked for something else.

Pure functions over the notes, the schema's columns and sqlglot trees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from engines.sql.guard import SQLGLOT_DIALECTS

#: A condition written in code in the notes: `orders.status = 'completed'`, `status = 'completed'`, `is_active = 1`.
_CODE_CONDITION = re.compile(r"`\s*(?:(\w+)\.)?(\w+)\s*=\s*('[^'`\n]{1,60}'|\d+)\s*`")


@dataclass(frozen=True)
class Condition:
    """``table.column = value`` (value as SQL: a quoted string or a number)."""

    table: str
    column: str
    value: str

    def sql(self, qualifier: str) -> str:
        return f"{qualifier}.{self.column} = {self.value}"


#: A value written in code: "của đơn `completed`".
_CODE_VALUE = re.compile(r"`([^`\n]{1,60})`")


def conditions_in(passages: Sequence[str], columns: Mapping[str, Sequence[str]],
                  listed: Mapping[str, Mapping[str, Sequence[object]]] | None = None) -> list[Condition]:
    """The conditions written in code in each of ``passages``: ``column = value`` whose column exists (in the
    named table, or, unqualified, in exactly one of ``columns``: table -> its columns); in a passage with none,
    a lone listed value ("tổng `quantity` của đơn `completed`": one value of one column of ``listed``, table ->
    column -> its values; a passage naming several values of a column lists them, it does not require one)."""
    found: dict[Condition, None] = {}
    lowered = {t.lower(): (t, {c.lower(): c for c in cs}) for t, cs in columns.items()}
    for passage in passages:
        written = _CODE_CONDITION.findall(passage)
        if not written and listed:
            found.update(dict.fromkeys(_lone_value(passage, listed)))
        for table, column, value in written:
            holders = ([lowered[table.lower()]] if table and table.lower() in lowered
                       else [] if table else [entry for entry in lowered.values() if column.lower() in entry[1]])
            holders = [(name, cols) for name, cols in holders if column.lower() in cols]
            if len(holders) == 1:
                name, cols = holders[0]
                found[Condition(name, cols[column.lower()], value)] = None
    return list(found)


def _lone_value(passage: str, listed: Mapping[str, Mapping[str, Sequence[object]]]) -> list[Condition]:
    """``column = value`` for the one listed value ``passage`` writes in code, when it is the only value of its
    column there and no other column holds it; else none."""
    named = {m.strip() for m in _CODE_VALUE.findall(passage)}
    by_column: dict[tuple[str, str], list[object]] = {}
    for table, columns in listed.items():
        for column, values in columns.items():
            hits = [v for v in values if isinstance(v, str) and v in named]
            if hits:
                by_column[(table, column)] = hits
    if len(by_column) != 1:
        return []
    (table, column), hits = next(iter(by_column.items()))
    if len(hits) != 1:
        return []
    return [Condition(table, column, "'" + str(hits[0]).replace("'", "''") + "'")]


def with_conditions(sql: str, conditions: Sequence[Condition], dialect: str) -> tuple[str, tuple[Condition, ...]]:
    """``sql`` with each condition added to the outermost SELECT that reads its table and says nothing of its
    column anywhere; (the statement, the conditions added). Unparseable SQL comes back as it was: the
    guard refuses it with the reason."""
    if not conditions:
        return sql, ()
    dialect = SQLGLOT_DIALECTS.get(dialect, dialect)
    try:
        tree = sqlglot.parse_one(sql, dialect=dialect)
    except (ParseError, TokenError, ValueError):
        return sql, ()
    if tree is None:
        return sql, ()
    tree = tree.copy()
    added = []
    for condition in conditions:
        if _mentions_column(tree, condition):
            continue
        for select in tree.find_all(exp.Select):  # breadth-first: the outermost first
            qualifier = _reads(select, condition.table)
            if qualifier:
                select.where(condition.sql(qualifier), dialect=dialect, copy=False)
                added.append(condition)
                break
    return (tree.sql(dialect=dialect), tuple(added)) if added else (sql, ())


def _reads(select: exp.Select, table: str) -> str:
    """The name ``select`` reads ``table`` under (its alias or its name) in its own FROM and JOINs; ""."""
    sources = [select.args.get("from_") or select.args.get("from"), *(select.args.get("joins") or [])]
    for source in sources:
        node = source.this if source is not None else None
        if isinstance(node, exp.Table) and node.name.lower() == table.lower():
            return node.alias_or_name
    return ""


def _mentions_column(tree: exp.Expression, condition: Condition) -> bool:
    """Whether any column reference could be ``condition``'s column (by name: an alias hides the table)."""
    return any(column.name.lower() == condition.column.lower() for column in tree.find_all(exp.Column))
