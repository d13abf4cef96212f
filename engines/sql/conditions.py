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
        """The condition as text, read as ``qualifier.column`` (the turn record shows it so)."""
        return f"{qualifier}.{self.column} = {self.value}"

    def expression(self, qualifier: str, dialect: str) -> exp.Expression:
        """The condition as a tree, identifiers quoted where the dialect needs it ("order", "order items")."""
        value = sqlglot.parse_one(self.value, dialect=dialect)
        return exp.column(self.column, table=qualifier, quoted=True).eq(value)


#: A value written in code: "của đơn `completed`", unless a word before it in its sentence excludes it ("không tính
#: đơn `cancelled`", "excluding `cancelled`"): the note then names what the term leaves out.
_CODE_VALUE = re.compile(r"`([^`\n]{1,60})`")
_EXCLUDED = re.compile(r"(?iu)(?<!\w)(?:không|chưa|trừ|ngoại\s+trừ|loại\s+trừ|loại|bỏ|except|excluding|excludes?|"
                       r"without|not|other\s+than)(?!\w)[^.;\n`]*$")


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
    named = {m.group(1).strip() for m in _CODE_VALUE.finditer(passage) if not _EXCLUDED.search(passage[: m.start()])}
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
    """``sql`` with each condition added to every SELECT that reads its table in its own FROM or inner JOINs, when
    the statement says nothing of that column of that table anywhere; (the statement, the conditions added).
    Left as written: a statement that does not parse (the guard refuses it with the reason), a set operation
    (UNION: one branch may count what another leaves out), and a table read through an outer join (a WHERE
    on it would turn the outer join into an inner one)."""
    if not conditions:
        return sql, ()
    dialect = SQLGLOT_DIALECTS.get(dialect, dialect)
    try:
        tree = sqlglot.parse_one(sql, dialect=dialect)
    except (ParseError, TokenError, ValueError):
        return sql, ()
    if tree is None or tree.find(exp.SetOperation) is not None:
        return sql, ()
    tree = tree.copy()
    added = []
    for condition in conditions:
        readers = [(select, q) for select in tree.find_all(exp.Select) if (q := _reads(select, condition.table))]
        if not readers or _mentions_column(tree, condition) or any(q is None for _, q in readers):
            continue
        try:
            for select, qualifier in readers:
                select.where(condition.expression(qualifier, dialect), dialect=dialect, copy=False)
        except (ParseError, TokenError, ValueError):
            return sql, ()
        added.append(condition)
    return (tree.sql(dialect=dialect), tuple(added)) if added else (sql, ())


def _reads(select: exp.Select, table: str) -> str | None:
    """The name ``select`` reads ``table`` under (its alias or its name) in its own FROM and JOINs; "" when it does
    not read it; None when it reads it through an outer join."""
    source = select.args.get("from_") or select.args.get("from")
    if source is not None and _is(source.this, table):
        return source.this.alias_or_name
    for join in select.args.get("joins") or []:
        if _is(join.this, table):
            return None if join.side else join.this.alias_or_name
    return ""


def _is(node: exp.Expression | None, table: str) -> bool:
    return isinstance(node, exp.Table) and node.name.lower() == table.lower()


def _mentions_column(tree: exp.Expression, condition: Condition) -> bool:
    """Whether a column reference names ``condition``'s column of its table: qualified by the table's name or an
    alias of it, or unqualified (it may be that table's)."""
    names = {t.alias_or_name.lower() for t in tree.find_all(exp.Table) if t.name.lower() == condition.table.lower()}
    return any(column.name.lower() == condition.column.lower() and (not column.table or column.table.lower() in names)
               for column in tree.find_all(exp.Column))
