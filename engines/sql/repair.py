"""Mend what a small writer gets wrong in a statement that is otherwise right, before it runs.

On the SQL set's dev split the packaged 1.5B writer lost most of its answerable turns to three slips
that need no second LLM call to fix:

- **MySQL date functions** in SQLite: ``YEAR(order_date) = 2024`` (SQLite has no YEAR()), or
  ``STRFTIME('%Y', d) = 2025``, which SQLite runs and answers with no rows (text never equals an
  integer). sqlglot parses MySQL's functions in any dialect; here they become what the database has.
- **A column read through the wrong table**: ``oi.order_date`` when ``order_date`` is a column of the
  ``orders o`` the statement already joins, or ``products.category`` with ``products`` never joined. The
  column is read from the one table in the query that has it, or that table is joined along its foreign key;
  an invented ``T2.year`` is the year of that table's one date column.
- **A value spelt otherwise than in the data**: ``tier = 'VIP'`` for ``'vip'``, ``city = 'Hue'`` for
  ``'Huế'``, ``branch_name = 'Hải Châu'`` for ``'Lá Bàng Hải Châu'``; ``category = 'Sách'`` when several
  categories begin so becomes ``LIKE 'Sách%'``. Only a literal the column does not hold is touched, and
  only when exactly one reading fits.

Pure functions over sqlglot trees (scopes from sqlglot's optimizer); the values of a column come from a
callable (the road looks them up once per column and keeps them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope

from engines.sql.guard import SQLGLOT_DIALECTS

#: table, column -> the column's distinct text values (empty when unknown or too many to list).
ValuesOf = Callable[[str, str], Sequence[str]]

#: MySQL's date-part functions and the SQLite strftime format of each part, with its printed width.
_DATE_PARTS: dict[type[exp.Expression], tuple[str, int]] = {exp.Year: ("%Y", 4), exp.Month: ("%m", 2), exp.Day: ("%d", 2)}
_EXTRACT_PARTS = {"YEAR": ("%Y", 4), "MONTH": ("%m", 2), "DAY": ("%d", 2)}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


@dataclass(frozen=True)
class Repaired:
    """The statement to run and, in words for the turn record, what was changed ("" changes: as written)."""

    sql: str
    changes: tuple[str, ...] = ()


def repair(sql: str, *, dialect: str, columns: Mapping[str, Sequence[str]], joins: Sequence[str] = (),
           values_of: ValuesOf | None = None) -> Repaired:
    """``sql`` with the slips above mended. ``columns``: each allowed table and its columns; ``joins``: the foreign
    keys as "a.x = b.y"; ``values_of``: a column's values (None: values are left as written). A statement that does
    not parse is returned as written: the guard refuses it with the reason."""
    dialect = SQLGLOT_DIALECTS.get(dialect, dialect)
    try:
        parsed = sqlglot.parse_one(sql, dialect=dialect)
    except (ParseError, TokenError, ValueError):
        return Repaired(sql)
    if parsed is None:
        return Repaired(sql)
    tree = parsed.copy()
    tables = {t.lower(): (t, {c.lower(): c for c in cs}) for t, cs in columns.items()}
    try:
        changes = [*_columns(tree, tables, _edges(joins, tables)), *(_dates(tree) if dialect == "sqlite" else ())]
        if values_of is not None:
            changes += _values(tree, tables, values_of)
    except (OptimizeError, ParseError, TokenError, ValueError):
        return Repaired(sql)
    return Repaired(tree.sql(dialect=dialect), tuple(changes)) if changes else Repaired(sql)


# --------------------------------------------------------------------------- dates

def _dates(tree: exp.Expression) -> list[str]:
    """YEAR(x), MONTH(x), DAY(x) and EXTRACT(part FROM x) as SQLite's strftime; a strftime part compared with a
    number compared as the text strftime returns ('2025', '03')."""
    changes = []
    for node in list(tree.find_all(*_DATE_PARTS, exp.Extract)):
        part = _DATE_PARTS.get(type(node)) or _EXTRACT_PARTS.get(node.this.name.upper() if isinstance(node, exp.Extract)
                                                                  else "")
        if part is None:
            continue
        argument = node.expression if isinstance(node, exp.Extract) else node.this
        argument = argument.this if isinstance(argument, (exp.TsOrDsToDate, exp.Date)) else argument
        strftime = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(part[0]), argument.copy()])
        node.replace(exp.Cast(this=strftime, to=exp.DataType.build("INT")))
        changes.append(f"{node.sql()} -> CAST(STRFTIME('{part[0]}', ...) AS INTEGER)")
    for comparison in list(tree.find_all(*_COMPARISONS, exp.In)):
        changes += _text_parts(comparison)
    return changes


def _text_parts(comparison: exp.Expression) -> list[str]:
    part = _strftime_part(comparison.this)
    if part is None:
        return []
    numbers = [comparison.expression] if not isinstance(comparison, exp.In) else comparison.expressions
    changes = []
    for number in numbers:
        if isinstance(number, exp.Literal) and number.is_int:
            text = str(int(number.this)).zfill(part[1])
            number.replace(exp.Literal.string(text))
            changes.append(f"strftime('{part[0]}') compared with {number.this} as '{text}'")
    return changes


def _strftime_part(node: exp.Expression) -> tuple[str, int] | None:
    if isinstance(node, exp.TimeToStr):
        fmt = node.args.get("format")
    elif isinstance(node, exp.Anonymous) and str(node.name).upper() == "STRFTIME" and node.expressions:
        fmt = node.expressions[0]
    else:
        return None
    return next((p for p in _EXTRACT_PARTS.values() if isinstance(fmt, exp.Literal) and fmt.this == p[0]), None)


# --------------------------------------------------------------------------- columns

Tables = Mapping[str, tuple[str, Mapping[str, str]]]  # lower name -> (name, lower column -> column)


def _edges(joins: Sequence[str], tables: Tables) -> list[tuple[str, str, str, str]]:
    """Foreign keys as (table, column, other table, other column), lower case, both directions."""
    edges = []
    for join in joins:
        sides = [s.strip().split(".") for s in join.split(" = ")]
        if len(sides) == 2 and all(len(s) == 2 and s[0].lower() in tables for s in sides):
            (a, x), (b, y) = ((s[0].lower(), s[1]) for s in sides)
            edges += [(a, x, b, y), (b, y, a, x)]
    return edges


def _columns(tree: exp.Expression, tables: Tables, edges: list[tuple[str, str, str, str]]) -> list[str]:
    changes: list[str] = []
    for scope in traverse_scope(tree):
        outer = _outer_names(scope)
        sources = _table_sources(scope, tables)
        derived = {alias.lower() for alias, source in scope.sources.items() if not isinstance(source, exp.Table)}
        written = {alias.lower(): alias for alias in scope.sources}  # the aliases as the statement spells them
        shown = {e.alias.lower() for e in scope.expression.expressions if e.alias} if isinstance(
            scope.expression, exp.Select) else set()
        for column in list(scope.columns):
            if column.find_ancestor(exp.Select) is not scope.expression:  # a subquery's own (sqlglot lists it here too)
                continue
            name, qualifier = column.name.lower(), column.table.lower()
            if (qualifier in outer and qualifier not in sources) or (not qualifier and name in shown):
                continue
            if qualifier in derived or (not qualifier and derived):  # a CTE's or a subquery's columns: not ours to judge
                continue
            if qualifier in sources and name in tables[sources[qualifier]][1]:
                continue
            if not qualifier and any(name in tables[t][1] for t in sources.values()):
                continue
            if not qualifier and any(name in tables[t][1] for t in outer.values()):
                continue
            alias = _holder(name, qualifier, sources, tables)
            if alias is None:
                alias, joined = _join_holder(scope, name, qualifier, sources, tables, edges)
                changes += [joined] if joined else []
            if alias is None and name in _PART_COLUMNS and (dated := _date_column(qualifier, sources, tables)):
                part = _PART_COLUMNS[name](this=exp.column(dated[1], table=dated[0]))
                changes.append(f"{column.sql()} -> {part.sql()}")
                column.replace(part)
                continue
            if alias:
                before = column.sql()
                column.set("table", exp.to_identifier(written.get(alias.lower(), alias)))
                changes += [f"{before} -> {column.sql()}"] if column.sql() != before else []
    return list(dict.fromkeys(changes))


#: Columns small models invent for a part of a date ("T2.year = 2025"), read from the table's one date column.
_PART_COLUMNS: dict[str, type[exp.Func]] = {"year": exp.Year, "month": exp.Month, "day": exp.Day}
_DATE_NAME = re.compile(r"(?i)(?:^|_)date(?:_|$)|_on$|_at$")


def _date_column(qualifier: str, sources: Mapping[str, str], tables: Tables) -> tuple[str, str] | None:
    """(alias, column) of the one date column of the table ``qualifier`` reads (unqualified: the one in the scope)."""
    aliases = [qualifier] if qualifier in sources else [] if qualifier else list(sources)
    found = [(alias, column) for alias in aliases for column in tables[sources[alias]][1].values()
             if _DATE_NAME.search(column)]
    return found[0] if len(found) == 1 else None


def _table_sources(scope: Scope, tables: Tables) -> dict[str, str]:
    """The scope's own tables: alias (lower) -> table (lower)."""
    return {alias.lower(): source.name.lower() for alias, source in scope.sources.items()
            if isinstance(source, exp.Table) and source.name.lower() in tables}


def _outer_names(scope: Scope) -> dict[str, str]:
    """The enclosing scopes' sources (a correlated subquery may read them): alias (lower) -> table (lower, or "")."""
    names: dict[str, str] = {}
    parent = scope.parent
    while parent is not None:
        for alias, source in parent.sources.items():
            names.setdefault(alias.lower(), source.name.lower() if isinstance(source, exp.Table) else "")
        parent = parent.parent
    return names


def _holder(name: str, qualifier: str, sources: Mapping[str, str], tables: Tables) -> str | None:
    """The alias of the one table in the scope that has the column (not the one it was read through)."""
    holders = [alias for alias, table in sources.items() if name in tables[table][1] and alias != qualifier]
    return holders[0] if len(holders) == 1 else None


def _join_holder(scope: Scope, name: str, qualifier: str, sources: dict[str, str], tables: Tables,
                 edges: list[tuple[str, str, str, str]]) -> tuple[str | None, str]:
    """Join the table that has the column along a foreign key from a table in the scope: (its alias, the JOIN
    added), or (None, ""). The table the statement named (``products.category``) when it has the column; else the
    one allowed table that has it."""
    nothing: tuple[str | None, str] = (None, "")
    select = scope.expression
    if not isinstance(select, exp.Select) or select.args.get("from_", select.args.get("from")) is None:
        return nothing
    named = qualifier if qualifier in tables and name in tables[qualifier][1] and qualifier not in sources else ""
    holders = [named] if named else [t for t in tables if name in tables[t][1] and t not in sources.values()]
    if len(holders) != 1 or holders[0] in sources or holders[0] in sources.values():
        return nothing
    target = holders[0]
    read_as = {table: alias for alias, table in sources.items()}
    links = [(x, read_as[b], y) for a, x, b, y in edges if a == target and b in read_as]
    via = [link for link in links if link[1] == qualifier] or links
    if len({link[1] for link in via}) != 1:
        return nothing
    column, alias, other = via[0]
    real = tables[target][0]
    written_alias = next((a for a in scope.sources if a.lower() == alias), alias)
    for unqualified in scope.columns:  # columns the new table also has would turn ambiguous: name their table now
        owners = [a for a, t in sources.items() if unqualified.name.lower() in tables[t][1]]
        if (not unqualified.table and unqualified.find_ancestor(exp.Select) is select
                and unqualified.name.lower() in tables[target][1] and len(owners) == 1):
            unqualified.set("table", exp.to_identifier(owners[0]))
    on = exp.column(column, table=real, quoted=True).eq(exp.column(other, table=written_alias, quoted=True))
    select.join(exp.Table(this=exp.to_identifier(real, quoted=True)), on=on, join_type="inner", copy=False)
    sources[target] = target
    return real, f"JOIN {real} ON {on.sql()}"


# --------------------------------------------------------------------------- values

def _values(tree: exp.Expression, tables: Tables, values_of: ValuesOf) -> list[str]:
    changes: list[str] = []
    for scope in traverse_scope(tree):
        sources = _table_sources(scope, tables)
        for node in list(scope.expression.find_all(exp.EQ, exp.NEQ, exp.In)):
            if node.find_ancestor(exp.Select) is not scope.expression:
                continue
            column = node.this
            derived = any(not isinstance(source, exp.Table) for source in scope.sources.values())
            owner = _owner(column, sources, tables, derived) if isinstance(column, exp.Column) else None
            if owner is None:
                continue
            known = [v for v in values_of(tables[owner][0], tables[owner][1][column.name.lower()]) if isinstance(v, str)]
            literals = node.expressions if isinstance(node, exp.In) else [node.expression]
            for literal in literals:
                if not (isinstance(literal, exp.Literal) and literal.is_string) or not known or literal.this in known:
                    continue
                found = link_value(literal.this, known)
                if found is None:
                    continue
                value, prefix = found
                if prefix and isinstance(node, exp.EQ):
                    node.replace(exp.Like(this=column.copy(), expression=exp.Literal.string(value + "%")))
                    changes.append(f"{column.sql()} = '{literal.this}' -> LIKE '{value}%'")
                elif not prefix:
                    changes.append(f"'{literal.this}' -> '{value}' ({column.sql()})")
                    literal.replace(exp.Literal.string(value))
    return changes


def _owner(column: exp.Column, sources: Mapping[str, str], tables: Tables, derived: bool = False) -> str | None:
    """The table a compared column is read from; None when it may be a CTE's or a subquery's."""
    qualifier, name = column.table.lower(), column.name.lower()
    if qualifier:
        table = sources.get(qualifier)
        return table if table and name in tables[table][1] else None
    holders = [t for t in sources.values() if name in tables[t][1]]
    return holders[0] if len(set(holders)) == 1 and not derived else None


def fold(text: str) -> list[str]:
    """Words without case or Vietnamese marks ("Huế" and "hue", "Đà Nẵng" and "da nang" are the same words)."""
    plain = "".join(c for c in unicodedata.normalize("NFD", text.replace("đ", "d").replace("Đ", "D"))
                    if not unicodedata.combining(c))
    return re.findall(r"[^\W_]+", plain.lower())


def link_value(literal: str, known: Sequence[str]) -> tuple[str, bool] | None:
    """The data's spelling of ``literal``: (value, False) for the one value with the same words, or the one value
    whose words hold it (never one it holds: 'Nam Định' is not 'Nam'); (prefix, True) when several values begin with its words and no other
    holds them (a LIKE 'prefix%'); None when nothing, or more than one reading, fits."""
    words = fold(literal)
    if not words:
        return None
    folded = [(value, fold(value)) for value in known]
    same = [value for value, w in folded if w == words]
    if same:
        return (same[0], False) if len(set(same)) == 1 else None
    holding = [(value, w) for value, w in folded if _contains(w, words)]
    if len(holding) == 1:
        return holding[0][0], False
    if len(holding) > 1:
        if all(w[: len(words)] == words for _, w in holding) and len(holding) < len(folded):  # not every value
            first = holding[0][0]
            match = re.match(r"\W*" + r"\W+".join([r"[^\W_]+"] * len(words)), first)
            return (match.group(0), True) if match else None
        return None
    return None


def _contains(words: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(words[i:i + n]) == list(part) for i in range(len(words) - n + 1))
