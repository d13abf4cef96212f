"""Asking the LLM for one SELECT, and reading the statement out of what it replies.

The prompt gives the dialect, the allowed tables as ``CREATE TABLE`` text with sample rows and
listed values, the notes, and the standalone question; a second try adds the failed statement and
the database's error. Small code models answer in a ```sql fence, after "SQLQuery:", or bare, often
with a sentence around it: :func:`parse_sql` takes any of these. A reply of ``NO_SQL`` means the
tables cannot answer the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_index.core.prompts import PromptTemplate

NO_SQL = "NO_SQL"

SQL_PROMPT = PromptTemplate(
    "You write one {dialect} SELECT statement that answers a question from the tables below.\n"
    "Rules: read only these tables; never change data (no INSERT, UPDATE, DELETE, DDL or PRAGMA); one "
    "statement; give computed columns a short alias; use text values exactly as they appear in the data; "
    "LIMIT lists to at most {limit} rows. If these tables cannot answer the question, reply {no_sql}.\n"
    "Reply with the statement in a ```sql block and nothing else.\n{dialect_tips}\n"
    "{schema}\n\n"
    "Notes on the tables:\n{notes}\n\n"
    "{recap}"
    "{rules}"
    "{context}"
    "Question: {question}\n"
)
CONTEXT = "This question follows up on an earlier one: {earlier}\n"
EDIT = ("The earlier question was answered by this statement:\n```sql\n{statement}\n```\n"
        "Start from it: keep its tables, joins and conditions, and change only what this question changes.\n")
RULES = "Notes that apply to this question (follow them):\n{rules}\n"

#: What small models get wrong per dialect (they were trained mostly on MySQL-flavoured SQL).
DIALECT_TIPS = {
    "sqlite": "SQLite keeps dates as text 'YYYY-MM-DD' and has no YEAR() or MONTH(): filter a year with "
              "col >= '2024-01-01' AND col < '2025-01-01'; a month is substr(col, 1, 7).\n",
}

RETRY = "That statement failed.\nStatement:\n{failed}\nDatabase error: {error}\n{hint}Write a corrected statement in a ```sql block."

_FENCE = re.compile(r"```[ \t]*(?:sql|sqlite|postgres(?:ql)?)?[ \t]*\n?(.*?)(?:```|\Z)", re.S | re.I)
_LABEL = re.compile(r"(?im)^\s*(?:SQL\s*Query|SQL|Query|Câu\s+lệnh)\s*:\s*")
_START = re.compile(r"(?is)\b(WITH|SELECT)\b")
_STATEMENT_END = re.compile(r"(?s);|\n\s*\n|\n(?=(?:SQLResult|Answer|Explanation|This query|Note)\b)")


def sql_prompt(*, dialect: str, schema: str, notes: str, question: str, limit: int, earlier: str = "",
               recap: str = "", rules: Sequence[str] = (), previous_sql: str = "") -> str:
    """The first request. ``earlier``: the standalone question a follow-up continues (a rewrite may
    have lost what was counted); ``recap``: the columns and joins again, next to the question;
    ``rules``: the notes passages this question touches, repeated after everything that is the same
    for every question (so llama.cpp's prompt cache still holds the long part); ``previous_sql``: the statement
    that answered the earlier question (a follow-up edits it rather than writing anew)."""
    shown = RULES.format(rules="\n".join(f"- {r.strip()}" for r in rules)) if rules else ""
    context = CONTEXT.format(earlier=earlier.strip()) if earlier.strip() and earlier.strip() != question.strip() else ""
    if context and previous_sql.strip():
        context += EDIT.format(statement=previous_sql.strip())
    return SQL_PROMPT.format(dialect=dialect, dialect_tips=DIALECT_TIPS.get(dialect, ""), schema=schema,
                             notes=notes.strip() or "(none)", question=question.strip(), limit=limit, no_sql=NO_SQL,
                             context=context, recap=recap, rules=shown)


def retry_message(*, failed: str, error: str, hint: str = "") -> str:
    """The user's turn after a failed statement, the model's reply standing before it in the chat:
    the statement, the database's error, and ``hint`` (where the columns it names are)."""
    return RETRY.format(failed=failed.strip(), error=error.strip(), hint=f"{hint.strip()}\n" if hint.strip() else "")


def parse_sql(reply: str) -> str | None:
    """The statement in an LLM reply; None when it holds none (or says NO_SQL).

    A statement that writes (DELETE ...) is returned as written: refusing it is the guard's job, and
    the record shows what the model tried."""
    text = (reply or "").strip()
    fenced = [m.strip() for m in _FENCE.findall(text) if m.strip()]
    if fenced:
        text = fenced[0]
    elif NO_SQL in text.upper().replace(" ", "_"):
        return None
    text = _LABEL.sub("", text, count=1).strip()
    if not fenced:
        start = _START.search(text)
        if start is None:
            return _bare_statement(text)
        text = text[start.start():]
        end = _STATEMENT_END.search(text)
        text = text[: end.start() if end else len(text)]
    text = text.strip().rstrip(";").strip()
    return text or None


def _bare_statement(text: str) -> str | None:
    """A reply with no SELECT at all: the first line if it reads like a statement (DELETE FROM ...), so
    the guard can refuse it by name; otherwise None."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    word = first.split(" ", 1)[0].upper() if first else ""
    if word in {"INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "CREATE", "PRAGMA", "ATTACH", "COPY", "TRUNCATE",
                "REPLACE", "GRANT", "VACUUM", "SET"}:
        return first.rstrip(";")
    return None
