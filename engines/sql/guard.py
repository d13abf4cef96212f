"""Safe by construction: a generated statement runs only if sqlglot parses it as exactly one
read-only SELECT over the allowed tables; a LIMIT is added (or lowered) before it runs.

This is the first of two walls; the second is the connection itself (``engines.sql.database``:
SQLite opened ``mode=ro``, PostgreSQL in a READ ONLY transaction). Questions that ask to change
data, or that try to talk the model out of its instructions, are refused before any LLM call
(:func:`request_problem`). All functions here are pure.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

#: Rows a statement may return at most (a LIMIT is added, or lowered to this).
DEFAULT_ROW_LIMIT = 200

#: Functions sqlglot does not know by type that are still plain, side-effect-free scalars. Every
#: other unknown function (pg_sleep, load_extension, pg_read_file, set_config, nextval, dblink, ...)
#: is refused; the functions sqlglot types (COUNT, SUM, ROUND, CAST, ...) are standard and pure.
SAFE_UNTYPED_FUNCTIONS = frozenset({
    "strftime", "julianday", "printf", "format", "ifnull", "nvl", "instr", "date_part", "to_char", "to_date",
    "date_trunc", "extract", "char_length", "initcap", "lpad", "rpad", "split_part", "total", "group_concat",
    "string_agg", "unixepoch", "age", "justify_days", "btrim", "ltrim", "rtrim", "sign", "trunc",
})

#: Nodes that change something or reach outside the query, wherever they appear in the tree.
FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = (
    exp.DML, exp.DDL, exp.Into, exp.Lock, exp.Command, exp.Pragma, exp.Set, exp.Transaction, exp.Commit,
    exp.Rollback, exp.Use, exp.Attach, exp.Detach, exp.Copy, exp.Merge, exp.LoadData, exp.Grant,
)


#: SQLAlchemy's dialect names where sqlglot's differ.
SQLGLOT_DIALECTS = {"postgresql": "postgres"}


class UnsafeStatement(ValueError):
    """A statement that will not run, and why (in words a log reader understands). ``retryable``: a
    mistake the writer may correct (it does not parse, it names a table it may not read); anything that
    would write or reach outside the tables is not retried."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class CheckedStatement:
    """A statement that passed: as it will run (LIMIT in place), and the tables it reads. ``capped``:
    the LIMIT is the guard's (a result of exactly ``limit`` rows may have been cut short)."""

    sql: str
    tables: tuple[str, ...]
    limit: int
    capped: bool = False


def check_statement(sql: str, *, dialect: str, allowed: Collection[str],
                    limit: int = DEFAULT_ROW_LIMIT) -> CheckedStatement:
    """``sql`` made safe to run, or :class:`UnsafeStatement`. ``allowed``: table names (any case);
    ``dialect``: SQLAlchemy's name or sqlglot's."""
    dialect = SQLGLOT_DIALECTS.get(dialect, dialect)
    try:
        statements = [s for s in sqlglot.parse(sql, dialect=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        raise UnsafeStatement(f"not parseable as {dialect} SQL: {str(exc).splitlines()[0][:200]}",
                              retryable=True) from None
    if len(statements) != 1:
        raise UnsafeStatement(f"{len(statements)} statements; exactly one SELECT may run")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise UnsafeStatement(f"a {tree.key.upper()} statement; only SELECT may run")
    for node in tree.walk():
        if isinstance(node, FORBIDDEN_NODES):
            raise UnsafeStatement(f"contains {node.key.upper()}; only a plain SELECT may run")
        if isinstance(node, exp.Anonymous) and str(node.name).lower() not in SAFE_UNTYPED_FUNCTIONS:
            raise UnsafeStatement(f"calls {node.name}(), which is not on the list of plain functions")
    tables = _tables_read(tree, {a.lower() for a in allowed})
    limited = _limited(tree, limit)
    return CheckedStatement(sql=limited.sql(dialect=dialect), tables=tables, limit=limit, capped=limited is not tree)


def _tables_read(tree: exp.Expression, allowed: set[str]) -> tuple[str, ...]:
    """The allowed tables the statement reads; :class:`UnsafeStatement` for any other source."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    read: dict[str, None] = {}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            raise UnsafeStatement(f"reads from a function ({table.this.sql()[:60]}); only tables may be read")
        name = table.name.lower()
        if table.db or table.catalog:
            raise UnsafeStatement(f"names a schema ({table.sql()}); use the table names as given")
        if name in ctes:
            continue
        if name not in allowed:
            raise UnsafeStatement(f"reads table {table.name!r}, which is not allowed (allowed: "
                                  f"{', '.join(sorted(allowed)) or 'none'})", retryable=True)
        read[name] = None
    if not read:
        raise UnsafeStatement("reads no table", retryable=True)
    return tuple(read)


def _limited(tree: exp.Query, limit: int) -> exp.Query:
    """The statement with a LIMIT of at most ``limit``."""
    current = tree.args.get("limit")
    value = current.expression if isinstance(current, exp.Limit) else None
    if isinstance(value, exp.Literal) and value.is_int and int(value.this) <= limit:
        return tree
    return tree.limit(limit, copy=True)


# --------------------------------------------------------------------------- the question itself

#: "giúp mình", "cho tôi", "hộ em": the politeness between a Vietnamese verb and what it acts on.
_PLEASE = r"(?:\s+(?:giúp|cho|hộ|dùm|giùm)(?:\s+(?:mình|tôi|em|anh|chị|tớ))?)?"
#: Verbs that change stored data whatever the sentence around them.
_WRITE_REQUEST = re.compile(
    r"(?iu)\b(?:delete|drop|truncate|insert|update|alter|grant|revoke|create\s+(?:a\s+)?(?:new\s+)?(?:table|view|index)|"
    r"tạo" + _PLEASE + r"\s+(?:một\s+)?(?:bảng|view|chỉ\s+mục)|(?:xoá|xóa)(?!\s+nợ)|thêm\s+(?:mới\s+)?(?:một|1|các|mấy)?\s*(?:dòng|bản\s+ghi)|"
    r"cập\s+nhật|sửa|chỉnh\s+sửa|đổi" + _PLEASE + r"\s+(?:tên|giá\s+trị|trạng\s+thái)|"
    r"ghi\s+đè|huỷ\s+bảng|hủy\s+bảng)\b")
#: Requests that read as an order only when the sentence is not a question ("xoá nợ", a debt
#: write-off, is also a banking term people ask about): "đổi nó thành completed",
#: "chuyển đơn 250 sang trạng thái huỷ", "huỷ đơn 250 giúp mình", "nâng hạng khách An lên VIP",
#: "Please change ...", "Could you mark order 7 as shipped"; but "Khi nào nhân viên thử việc được
#: chuyển thành chính thức?" and "Change in revenue from 2023 to 2024?" are questions.
_WRITE_ORDER = re.compile(
    r"(?imu)\b(?:(?:xoá|xóa)\s+nợ|thêm" + _PLEASE + r"\s+(?:mới\s+)?(?:một|1|các|mấy)?\s*(?:khách|khoản|nhân\s+viên|chi\s+nhánh|"
    r"sản\s+phẩm|nhà\s+cung\s+cấp|đơn)|"
    r"(?:đổi|chuyển)(?!\s+(?:trả|đổi))(?:\s+\w+){0,5}?\s+(?:thành(?!\s+(?:công|viên|phố))|sang\s+trạng\s+thái)|"
    r"(?:huỷ|hủy)" + _PLEASE + r"\s+(?:đơn|khoản|hợp\s+đồng)|(?:nâng|hạ|tăng|giảm)\s+(?:hạng|lương|giá)|"
    r"đặt\s+trạng\s+thái|gán\s+(?:\w+\s+){0,4}?(?:vào|cho)\s+hạng)\b"
    r"|^\s*(?:(?:please|can\s+you|could\s+you|would\s+you)\s+)?(?:change|set|mark|rename|add|remove|cancel)\b"
    r"(?![-\s]*(?:up|in|of|on|ons|to)\b)")
#: A question, not an order: a question word or a closing question mark, unless it opens as a request
#: ("Could you ...?", "Hãy ...", "Làm ơn ...").
_ASKS = re.compile(r"(?iu)^\s*(?:(?:please|can\s+you|could\s+you|would\s+you)\b|hãy\b|làm\s+ơn\b|nhờ\b)")
_QUESTION = re.compile(
    r"(?iu)\?\s*$|\b(?:bao\s+nhiêu|bao\s+lâu|khi\s+nào|ở\s+đâu|thế\s+nào|như\s+thế\s+nào|tại\s+sao|vì\s+sao|"
    r"có\s+\w+(?:\s+\w+){0,6}\s+không|nào|gì|"
    r"how|what|which|when|where|why|who|whose|is\s+it|are\s+there|does|do)\b")
_INJECTION = re.compile(
    r"(?iu)(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|your)\s+"
    r"(?:instructions?|rules?|prompts?)|system\s+prompt|you\s+are\s+now\b|developer\s+mode|"
    r"bỏ\s+qua\s+(?:mọi|tất\s+cả|các|những)?\s*(?:hướng\s+dẫn|chỉ\s+dẫn|quy\s+tắc|lệnh|yêu\s+cầu)\s*(?:trước|trên)?|"
    r"quên\s+(?:mọi|tất\s+cả|các)?\s*(?:hướng\s+dẫn|chỉ\s+dẫn|quy\s+tắc)|;\s*--|\bunion\s+select\b")
_NEGATED_STATE = re.compile(
    r"(?iu)\b(?:đã|bị|được)\s+(?:xoá|xóa|cập\s+nhật|sửa|chuyển|đổi|huỷ|hủy|nâng)|(?:deleted|updated|inserted)\b")

WRITE_REQUEST, INJECTION = "write_request", "injection"


def request_problem(question: str) -> str | None:
    """Why a question must not reach the SQL writer: it asks to change data (``write_request``) or
    tries to override the instructions (``injection``); None for a question to answer.

    Asking *about* changes ("how many loans were updated", "khoản vay đã bị xoá nợ") is a question;
    the softer verbs (change, move, upgrade) count only outside a question."""
    if _INJECTION.search(question):
        return INJECTION
    text = _NEGATED_STATE.sub(" ", question)
    if _WRITE_REQUEST.search(text):
        return WRITE_REQUEST
    return WRITE_REQUEST if _WRITE_ORDER.search(text) and not is_question(text) else None


def is_question(text: str) -> bool:
    """Asked, not ordered: "Quy định đổi ca thế nào?" but not "Could you change order 250?"."""
    return not _ASKS.search(text) and bool(_QUESTION.search(text))
