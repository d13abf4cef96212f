"""Multi-turn evaluation rows: load, validate, bucket, and a sanity count before any scoring.

One JSONL line is one user turn with the conversation so far::

    {"conv_id": "hr-01", "turn": 3, "history": [["user", "..."], ["assistant", "..."]],
     "question": "Cái đó có được cộng dồn không?", "type": "non_standalone",
     "gold_doc_ids": ["leave-seasonal-carryover"]}

Optional: ``answer`` (reference answer), ``must_contain`` (strings a correct answer holds),
``stale_value`` (the outdated value a wrong answer would quote), ``rewrite`` (a standalone
reference rewrite), ``filters``. Any other field is kept in :attr:`EvalRow.extra` and carried to
the report. Every bad line is reported at once as ``file:line: field 'x': problem``.

Buckets exist because one average hides where users see failures: turn 1 is the demo,
follow-ups are the product.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.errors import ConfigError, DocumentError
from engines.io import JsonLine, parse_jsonl, read_jsonl
from engines.retrieval.filters import MetadataFilter
from evals.buckets import POSITIONS, TURN_BUCKETS, turn_buckets, turn_position

ROW_TYPES = ("standalone", "non_standalone", "unanswerable")
ANSWERABLE_TYPES = ("standalone", "non_standalone")
ROLES = {"user": "user", "assistant": "assistant", "bot": "assistant"}
REQUIRED = ("conv_id", "turn", "history", "question", "type", "gold_doc_ids")
OPTIONAL = ("answer", "must_contain", "stale_value", "rewrite", "filters")

#: Type buckets for retrieval metrics (unanswerable rows have no gold documents to find).
TYPE_BUCKETS = ("all", "standalone", "non_standalone")
#: Share of turn-1 (or standalone) rows at which the set measures the demo, not the product.
SKEW_WARNING_SHARE = 0.9
MAX_LISTED_ERRORS = 20


class EvalDataError(DocumentError):
    """An evaluation dataset line is malformed; the message names file:line and the field."""


@dataclass(frozen=True)
class EvalRow:
    """One user turn to replay, with its labels."""

    conv_id: str
    turn: int
    history: tuple[tuple[str, str], ...]
    question: str
    type: str
    gold_doc_ids: tuple[str, ...]
    answer: str | None = None
    must_contain: tuple[str, ...] = ()
    stale_value: str | None = None
    rewrite: str | None = None
    filters: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    line: int = 0

    @property
    def answerable(self) -> bool:
        return self.type != "unanswerable"

    @property
    def key(self) -> str:
        return f"{self.conv_id}#{self.turn}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def previous_user_turns(self) -> list[str]:
        return [text for role, text in self.history if role == "user"]


# ---------------------------------------------------------------------------------- buckets


def bucket_key(row_type: str, turn: str) -> str:
    """The report key of a type × turn bucket, e.g. "non_standalone/turn2+" or "all/all"."""
    return f"{row_type}/{turn}"


def all_bucket_keys() -> list[str]:
    return [bucket_key(t, b) for t in TYPE_BUCKETS for b in TURN_BUCKETS]


def row_bucket_keys(row_type: str, turn: int) -> list[str]:
    """The retrieval buckets an answerable row belongs to (none for unanswerable rows)."""
    if row_type not in ANSWERABLE_TYPES:
        return []
    return [bucket_key(t, b) for t in ("all", row_type) for b in turn_buckets(turn)]


# ---------------------------------------------------------------------------------- loading


def load_rows(path: Path | str) -> list[EvalRow]:
    """Read and validate a JSONL dataset; raises one :class:`EvalDataError` listing bad lines."""
    path = Path(path)
    if not path.is_file():
        raise EvalDataError(f"{path}: dataset file does not exist")
    try:
        return _rows(read_jsonl(path), source=str(path))
    except DocumentError as exc:
        if isinstance(exc, EvalDataError):
            raise
        raise EvalDataError(str(exc)) from None


def parse_rows(lines: Iterable[str], source: str = "<rows>") -> list[EvalRow]:
    """Validate JSONL lines (blank lines skipped); every problem is collected, then raised once."""
    return _rows(parse_jsonl(lines, source), source)


def _rows(lines: Iterable[JsonLine], source: str) -> list[EvalRow]:
    rows: list[EvalRow] = []
    errors: list[str] = []
    seen: dict[tuple[str, int], int] = {}
    for line in lines:
        lineno, obj = line.number, line.value
        if line.error is not None:
            errors.append(f"{source}:{lineno}: {line.error}")
            continue
        problems = row_problems(obj)
        if problems:
            errors.extend(f"{source}:{lineno}: {p}" for p in problems)
            continue
        row = build_row(obj, source, lineno)
        first = seen.setdefault((row.conv_id, row.turn), lineno)
        if first != lineno:
            errors.append(f"{source}:{lineno}: field 'turn': conversation {row.conv_id!r} turn {row.turn} "
                          f"already appears on line {first}")
            continue
        rows.append(row)
    if not rows and not errors:
        errors.append(f"{source}: no rows (expected one JSON object per line)")
    if errors:
        shown = errors[:MAX_LISTED_ERRORS]
        more = len(errors) - len(shown)
        tail = [f"... and {more} more"] if more else []
        raise EvalDataError("invalid evaluation dataset:\n  " + "\n  ".join(shown + tail))
    return rows


def row_problems(obj: Any) -> list[str]:
    """Why a parsed line is not a valid row (empty list: valid). Each problem names its field."""
    if not isinstance(obj, dict):
        return [f"expected a JSON object, got {type(obj).__name__}"]
    problems = [f"field '{name}': missing (required: {', '.join(REQUIRED)})" for name in REQUIRED if name not in obj]
    if problems:
        return problems
    conv_id, turn = obj["conv_id"], obj["turn"]
    if isinstance(conv_id, bool) or not isinstance(conv_id, (str, int)) or not str(conv_id).strip():
        problems.append(f"field 'conv_id': expected a non-empty string, got {conv_id!r}")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        problems.append(f"field 'turn': expected an integer >= 1, got {turn!r}")
    problems.extend(_history_problems(obj["history"]))
    if not isinstance(obj["question"], str) or not obj["question"].strip():
        problems.append(f"field 'question': expected a non-empty string, got {obj['question']!r}")
    row_type = obj["type"]
    if row_type not in ROW_TYPES:
        problems.append(f"field 'type': {row_type!r} is not one of {', '.join(ROW_TYPES)}")
    gold = obj["gold_doc_ids"]
    if not _string_list(gold):
        problems.append(f"field 'gold_doc_ids': expected a list of non-empty strings, got {gold!r}")
    elif row_type in ANSWERABLE_TYPES and not gold:
        problems.append(f"field 'gold_doc_ids': empty for a {row_type} row; list the documents that answer it "
                        "(or set type 'unanswerable')")
    elif row_type == "unanswerable" and gold:
        problems.append("field 'gold_doc_ids': must be [] for an unanswerable row (nothing in the corpus answers it)")
    if obj.get("must_contain") is not None and not _string_list(obj["must_contain"]):
        # [] is allowed: an optional list with nothing in it means nothing to check
        problems.append(f"field 'must_contain': expected a list of non-empty strings, got {obj['must_contain']!r}")
    for name in ("answer", "stale_value", "rewrite"):
        value = obj.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            problems.append(f"field '{name}': expected a non-empty string or null, got {value!r}")
    if obj.get("filters") is not None:
        if not isinstance(obj["filters"], dict):
            problems.append(f"field 'filters': expected an object or null, got {obj['filters']!r}")
        else:
            try:
                MetadataFilter.parse(obj["filters"], where="field 'filters'")
            except ConfigError as exc:
                problems.append(str(exc))
    return problems


def _history_problems(history: Any) -> list[str]:
    if not isinstance(history, list):
        return [f"field 'history': expected a list of [role, text] pairs, got {type(history).__name__}"]
    for i, item in enumerate(history):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            return [f"field 'history': item {i} must be a [role, text] pair, got {item!r}"]
        role, text = item
        if role not in ROLES:
            return [f"field 'history': item {i} has role {role!r}; use one of {', '.join(ROLES)}"]
        if not isinstance(text, str):
            return [f"field 'history': item {i} text must be a string, got {type(text).__name__}"]
    return []


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def build_row(obj: Mapping[str, Any], source: str, line: int) -> EvalRow:
    """An :class:`EvalRow` from a validated object ("bot" becomes "assistant")."""
    known = set(REQUIRED) | set(OPTIONAL)
    return EvalRow(
        conv_id=str(obj["conv_id"]),
        turn=int(obj["turn"]),
        history=tuple((ROLES[role], text) for role, text in obj["history"]),
        question=obj["question"],
        type=obj["type"],
        gold_doc_ids=tuple(dict.fromkeys(obj["gold_doc_ids"])),
        answer=obj.get("answer"),
        must_contain=tuple(obj.get("must_contain") or ()),
        stale_value=obj.get("stale_value"),
        rewrite=obj.get("rewrite"),
        filters=obj.get("filters"),
        extra={k: v for k, v in obj.items() if k not in known},
        source=source,
        line=line,
    )


# ---------------------------------------------------------------------------------- sanity


@dataclass(frozen=True)
class DatasetSanity:
    """Rows by type × turn position, and what the mix means for the numbers."""

    n_rows: int
    n_conversations: int
    counts: dict[str, dict[str, int]]  # type -> position -> rows
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows, "n_conversations": self.n_conversations,
                "counts": self.counts, "warnings": list(self.warnings)}


def sanity(rows: Sequence[EvalRow]) -> DatasetSanity:
    """Count rows by type and turn position; warn when the set measures the demo, not the product."""
    counter = Counter((r.type, turn_position(r.turn)) for r in rows)
    counts = {t: {p: counter[(t, p)] for p in POSITIONS} for t in ROW_TYPES}
    n = len(rows)
    warnings: list[str] = []
    if n:
        turn1 = sum(1 for r in rows if r.turn == 1) / n
        standalone = sum(1 for r in rows if r.type == "standalone") / n
        if turn1 >= SKEW_WARNING_SHARE:
            warnings.append(f"{turn1:.0%} of rows are turn 1: this set measures single-question demos, "
                            "not follow-ups. Add later turns from real conversations.")
        if standalone >= SKEW_WARNING_SHARE:
            warnings.append(f"{standalone:.0%} of rows are standalone: rewriting cannot show an effect. "
                            "Add non_standalone follow-ups.")
        if not any(r.type == "unanswerable" for r in rows):
            warnings.append("no unanswerable rows: the refusal rate cannot be measured, so better retrieval "
                            "will look like a pure gain.")
        if any(r.type == "non_standalone" and r.turn == 1 for r in rows):
            warnings.append("some non_standalone rows are turn 1 (no history to depend on); check the labels.")
    return DatasetSanity(n, len({r.conv_id for r in rows}), counts, warnings)
