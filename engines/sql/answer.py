"""Writing what the rows say without an LLM: one value as a sentence, anything else as a short
Markdown table, numbers in the question's language (Vietnamese 1.234.567,5; English 1,234,567.5).
Pure functions."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

#: Rows a table shows; the rest are counted.
SHOWN_ROWS = 20

MESSAGES = {
    "vi": {
        "value": "Theo dữ liệu, kết quả là {value} ({label}).",
        "value_unlabelled": "Theo dữ liệu, kết quả là {value}.",
        "table": "Theo dữ liệu ({n} dòng):",
        "more": "… và {n} dòng nữa.",
        "capped": "(Chỉ đọc {n} dòng đầu.)",
        "empty": "Dữ liệu không có dòng nào khớp với câu hỏi.",
        "failed": "Tôi không trả lời được câu hỏi này từ dữ liệu.",
        "write": "Tôi chỉ đọc dữ liệu để trả lời câu hỏi; tôi không thêm, sửa hay xoá dữ liệu.",
        "unsafe": "Tôi không chạy câu lệnh này: tôi chỉ đọc dữ liệu trong các bảng được phép.",
        "source": "dữ liệu",
    },
    "en": {
        "value": "According to the data, the answer is {value} ({label}).",
        "value_unlabelled": "According to the data, the answer is {value}.",
        "table": "According to the data ({n} rows):",
        "more": "… and {n} more rows.",
        "capped": "(Only the first {n} rows were read.)",
        "empty": "No rows in the data match the question.",
        "failed": "I could not answer this from the data.",
        "write": "I only read the data to answer questions; I do not add, change or delete anything.",
        "unsafe": "I did not run that statement: I only read the allowed tables.",
        "source": "data",
    },
}

#: Columns whose numbers are names, not quantities: never grouped (2024, not 2.024).
_IDENTIFIER_COLUMN = re.compile(r"(?i)(?:^|_)(?:id|year|nam|code|ma|phone|zip|so_dien_thoai)$|^(?:year|nam|id)\b")
_EXPRESSION_LABEL = re.compile(r"[()*]")


def message(language: str, key: str, **values: Any) -> str:
    return MESSAGES.get(language, MESSAGES["en"])[key].format(**values)


def format_number(value: int | float | Decimal, language: str, *, group: bool = True) -> str:
    """1234567.5 -> "1.234.567,5" (vi) or "1,234,567.5" (en); at most two decimals, none for whole numbers."""
    number = float(value) if isinstance(value, Decimal) else value
    if isinstance(number, float) and (math.isnan(number) or math.isinf(number)):
        return str(number)
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e15:
        number = int(number)
    text = f"{number:,}" if isinstance(number, int) else f"{number:,.2f}".rstrip("0").rstrip(".")
    if not group:
        text = text.replace(",", "")
    if language == "vi":
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


def format_value(value: Any, language: str, column: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return {"vi": "có" if value else "không"}.get(language, "yes" if value else "no")
    if isinstance(value, (int, float, Decimal)):
        return format_number(value, language, group=not _IDENTIFIER_COLUMN.search(column))
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value).replace("|", "\\|").replace("\n", " ")


def label_of(column: str) -> str | None:
    """A column alias read as words ("total_balance" -> "total balance"); None for an expression."""
    if not column or _EXPRESSION_LABEL.search(column):
        return None
    return column.replace("_", " ").strip() or None


def compose(columns: Sequence[str], rows: Sequence[Sequence[Any]], language: str, *, truncated: bool = False,
            shown: int = SHOWN_ROWS) -> str:
    """The answer text for the rows a statement returned."""
    if not rows:
        return message(language, "empty")
    if len(rows) == 1 and len(columns) == 1:
        value = format_value(rows[0][0], language, columns[0])
        label = label_of(columns[0])
        return (message(language, "value", label=label, value=f"**{value}**") if label
                else message(language, "value_unlabelled", value=f"**{value}**"))
    lines = [message(language, "table", n=format_number(len(rows), language)), "", markdown_table(
        columns, rows[:shown], language)]
    if len(rows) > shown:
        lines += ["", message(language, "more", n=format_number(len(rows) - shown, language))]
    if truncated:
        lines += ["", message(language, "capped", n=format_number(len(rows), language))]
    return "\n".join(lines)


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], language: str) -> str:
    header = "| " + " | ".join(label_of(c) or c for c in columns) + " |"
    rule = "|" + "|".join("---:" if _numeric(rows, i) else "---" for i in range(len(columns))) + "|"
    body = ["| " + " | ".join(format_value(v, language, columns[i]) for i, v in enumerate(row)) + " |" for row in rows]
    return "\n".join([header, rule, *body])


def _numeric(rows: Sequence[Sequence[Any]], i: int) -> bool:
    values = [row[i] for row in rows if row[i] is not None]
    return bool(values) and all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in values)


def plain(value: Any) -> Any:
    """A cell as JSON can hold it (the turn record, the log, the API)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    return str(value)
