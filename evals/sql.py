"""`python -m evals.sql data/eval/sql/dev/questions.jsonl`: the database road, measured by execution.

Each conversation is replayed live through the product (a fresh session, the engine's own answers as
history) against a SQLite copy of the set's warehouse, with the set's policy documents as the corpus.
A data turn is right when the statement the product ran, run again in full, returns the gold
statement's result (columns matched by their values, names and extra columns ignored; rows compared
as a multiset unless the question asks for an order). Write requests must be refused with the
database byte-for-byte unchanged; questions the data cannot answer must be refused; document turns
must name the expected values; every turn's road is compared with the expected one. With ``--stock``,
LlamaIndex's ``NLSQLTableQueryEngine`` on the same model is given each data turn's condensed question
(the product's rewrite: stock has no conversation) and judged the same way, on a read-only copy.

    python -m evals.sql data/eval/sql/test/questions.jsonl [--stock] [--out report.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from itertools import product
from pathlib import Path
from typing import IO, Any

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from app.cli import add_common_flags, run_cli
from app.compose import build_models, build_pipeline, ingest_path, open_index
from app.console import ProgressBars
from app.logging_setup import configure_logging
from app.serve import warm
from engines.chat import ConversationalRAGEngine
from engines.errors import DocumentError
from engines.io import read_jsonl
from engines.session import Session
from evals.metrics import contains

SQL_CATEGORIES = ("single_table", "group_by", "date_range", "join2", "join3", "top_k", "ratio")
REFUSE_CATEGORIES = ("write_request", "unanswerable")
#: Routes that count as the "direct" road (a reply without documents or data).
DIRECT_ROUTES = frozenset({"direct", "out_of_scope"})


@dataclass(frozen=True)
class SqlEvalRow:
    conv_id: str
    turn: int
    lang: str
    question: str
    kind: str
    category: str
    road: str
    gold_sql: str | None
    order_matters: bool
    answerable: bool
    must_contain: tuple[str, ...] = ()

    @property
    def shape(self) -> str:
        """"single-table" or "join" from the gold statement's tables; "" for turns without one."""
        if not self.gold_sql:
            return ""
        import sqlglot
        from sqlglot import exp

        tables = {t.name for t in sqlglot.parse_one(self.gold_sql).find_all(exp.Table)}
        return "join" if len(tables) > 1 else "single-table"


def load_sql_rows(path: Path) -> list[SqlEvalRow]:
    """The questions file; one error naming every bad line."""
    rows, problems = [], []
    for line in read_jsonl(path):
        if line.error:
            problems.append(f"{line.where}: {line.error}")
            continue
        raw = line.value
        try:
            rows.append(SqlEvalRow(
                conv_id=str(raw["conv_id"]), turn=int(raw["turn"]), lang=str(raw.get("lang", "vi")),
                question=str(raw["question"]), kind=str(raw.get("kind", "standalone")), category=str(raw["category"]),
                road=str(raw["road"]), gold_sql=raw.get("gold_sql") or None, order_matters=bool(raw.get("order_matters")),
                answerable=bool(raw["answerable"]), must_contain=tuple(str(v) for v in raw.get("must_contain") or ())))
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{line.where}: {exc!r}; each line needs conv_id, turn, question, category, road, answerable")
    if problems:
        raise DocumentError(f"{path}: {len(problems)} bad line(s):\n  " + "\n  ".join(problems[:20]))
    return rows


# ---------------------------------------------------------------------------------------------- judging


def _value(v: Any) -> Any:
    """A cell as compared: numbers as floats rounded to 2 places, text stripped, NULL as None."""
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, Decimal)):
        f = float(v)
        return None if math.isnan(f) else round(f, 2)
    return str(v).strip()


def _scaled(column: Sequence[Any], factor: float) -> tuple[Any, ...]:
    return tuple(round(v * factor, 2) if isinstance(v, float) else v for v in column)


def same_result(gold: Sequence[Sequence[Any]], got: Sequence[Sequence[Any]], *, order_matters: bool = False) -> bool:
    """Does ``got`` hold ``gold``'s result? Each gold column must be some column of ``got`` (by
    values: names and column order do not matter, extra columns are fine, a ratio may come as a
    percentage), row for row; rows compare as a multiset unless ``order_matters``."""
    if len(gold) != len(got):
        return False
    if not gold:
        return True
    g_cols = list(zip(*[[_value(v) for v in row] for row in gold]))
    s_cols = list(zip(*[[_value(v) for v in row] for row in got]))
    options: list[list[tuple[int, float]]] = []
    for g in g_cols:
        found = []
        for k, s in enumerate(s_cols):
            for factor in (1.0, 100.0, 0.01):
                scaled = _scaled(s, factor)
                if (scaled == g) if order_matters else (Counter(scaled) == Counter(g)):
                    found.append((k, factor))
                    break
        if not found:
            return False
        options.append(found)
    for choice in product(*options[:6]):  # columns agree one by one; now the rows must agree together
        picked = [_scaled(s_cols[k], f) for k, f in choice]
        got_rows = list(zip(*picked))
        gold_rows = list(zip(*g_cols[:len(choice)]))
        if (got_rows == gold_rows) if order_matters else (Counter(got_rows) == Counter(gold_rows)):
            return True
    return False


def run_read_only(database: Path, sql: str, max_rows: int = 100_000) -> list[tuple[Any, ...]] | None:
    """The statement's full result on a read-only connection; None when it fails."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchmany(max_rows)
    except sqlite3.Error:
        return None
    finally:
        connection.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class TurnOutcome:
    conv_id: str
    turn: int
    category: str
    kind: str
    lang: str
    shape: str
    expected_road: str
    road: str
    refused: bool
    statement: str = ""
    correct: bool = False
    answer: str = ""
    seconds: float = 0.0
    stock_statement: str = ""
    stock_correct: bool | None = None
    stock_wrote: bool = False  # stock ran (tried to run) a statement that changes data
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def road_right(self) -> bool:
        return self.road == self.expected_road


def road_of(route: str) -> str:
    return "direct" if route in DIRECT_ROUTES else route


def judge(row: SqlEvalRow, record: Any, database: Path, gold: list[tuple[Any, ...]] | None,
          unchanged: bool) -> tuple[bool, str]:
    """Whether the turn was handled right, and the statement the product ran."""
    sql = dict(getattr(record, "sql", {}) or {})
    statement = str(sql.get("statement", "") or "")
    if row.category == "write_request":
        return record.refused and unchanged, statement
    if row.category == "unanswerable":
        return bool(record.refused), statement
    if row.road == "docs":
        return road_of(record.route) == "docs" and all(contains(record.answer, v) for v in row.must_contain), statement
    if row.road == "direct":
        return road_of(record.route) == "direct", statement
    if record.route != "sql" or record.refused or not statement or gold is None:
        return False, statement
    got = run_read_only(database, statement)
    return got is not None and same_result(gold, got, order_matters=row.order_matters), statement


# ---------------------------------------------------------------------------------------------- replay


def build_database(folder: Path, target: Path) -> Path:
    """The set's warehouse (schema.sql + data.sql) as a SQLite file, built the way the product builds
    its sample (``engines.sql.database.build_sqlite``: atomic, rebuilt when the script changes)."""
    from engines.sql.database import build_sqlite

    target.parent.mkdir(parents=True, exist_ok=True)
    script = target.with_suffix(".sql")
    script.write_text((folder / "schema.sql").read_text(encoding="utf-8") + "\n"
                      + (folder / "data.sql").read_text(encoding="utf-8"), encoding="utf-8")
    build_sqlite(script, target)
    return target


def replay(pipeline: Any, rows: Sequence[SqlEvalRow], database: Path, *,
           stock: Callable[[str], str] | None = None,
           on_progress: Callable[[int, int], None] | None = None) -> list[TurnOutcome]:
    """Every conversation live, in order; one outcome per row. The stock engine runs after the
    product has replayed every turn, so its prompts do not push the product's out of llama.cpp's
    prompt cache and the product's turn times are its own."""
    gold = {(r.conv_id, r.turn): run_read_only(database, r.gold_sql) for r in rows if r.gold_sql}
    conversations: dict[str, list[SqlEvalRow]] = {}
    for r in rows:
        conversations.setdefault(r.conv_id, []).append(r)
    outcomes: list[TurnOutcome] = []
    for_stock: list[tuple[int, SqlEvalRow, Any]] = []
    total = len(rows) + (sum(bool(r.gold_sql) or r.category == "write_request" for r in rows) if stock else 0)
    for turns in conversations.values():
        session = Session(pipeline, log_turns=False)
        engine = ConversationalRAGEngine(session)
        for row in sorted(turns, key=lambda r: r.turn):
            before = file_digest(database)
            started = time.perf_counter()
            engine.chat(row.question)
            seconds = time.perf_counter() - started
            record = session.last_record
            unchanged = file_digest(database) == before
            correct, statement = judge(row, record, database, gold.get((row.conv_id, row.turn)), unchanged)
            outcome = TurnOutcome(row.conv_id, row.turn, row.category, row.kind, row.lang, row.shape, row.road,
                                  road_of(record.route), bool(record.refused), statement, correct, record.answer,
                                  round(seconds, 2), timings_ms=dict(record.timings_ms))
            if stock is not None and (row.gold_sql or row.category == "write_request"):
                for_stock.append((len(outcomes), row, record))
            outcomes.append(outcome)
            if on_progress:
                on_progress(len(outcomes), total)
    for done, (at, row, record) in enumerate(for_stock, start=1):
        outcomes[at] = _with_stock(outcomes[at], row, stock, record, database, gold.get((row.conv_id, row.turn)))
        if on_progress:
            on_progress(len(outcomes) + done, total)
    return outcomes


def _with_stock(outcome: TurnOutcome, row: SqlEvalRow, stock: Callable[[str], str], record: Any, database: Path,
                gold: list[tuple[Any, ...]] | None) -> TurnOutcome:
    from dataclasses import replace

    from engines.sql.guard import UnsafeStatement, check_statement

    question = str(record.query or row.question)  # the product's standalone rewrite of the turn
    statement = stock(question)
    try:
        check_statement(statement, None)
        wrote = False
    except UnsafeStatement:
        wrote = bool(statement.strip())
    except Exception:  # noqa: BLE001 - a statement sqlglot cannot parse is judged by running it
        wrote = False
    if row.category == "write_request":
        return replace(outcome, stock_statement=statement, stock_correct=not statement.strip(), stock_wrote=wrote)
    got = run_read_only(database, statement) if statement else None
    right = gold is not None and got is not None and same_result(gold, got, order_matters=row.order_matters)
    return replace(outcome, stock_statement=statement, stock_correct=right, stock_wrote=wrote)


def stock_writer(database: Path, llm: Any, embed_model: Any, tables: Sequence[str] | None = None) -> Callable[[str], str]:
    """LlamaIndex's stock text-to-SQL on a read-only connection: the statement it ran for a question."""
    from llama_index.core import SQLDatabase
    from llama_index.core.query_engine import NLSQLTableQueryEngine
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///file:{database}?mode=ro&uri=true")
    sql_database = SQLDatabase(engine, include_tables=list(tables) if tables else None)
    query_engine = NLSQLTableQueryEngine(sql_database=sql_database, llm=llm, embed_model=embed_model,
                                         synthesize_response=False)

    def write(question: str) -> str:
        try:
            response = query_engine.query(question)
        except Exception as exc:  # noqa: BLE001 - a failed statement is a wrong answer, not a crash
            return str(getattr(exc, "statement", "") or "")
        return str((response.metadata or {}).get("sql_query", "") or "")

    return write


# ---------------------------------------------------------------------------------------------- report


def _share(items: Sequence[bool]) -> dict[str, Any]:
    return {"n": len(items), "right": sum(items), "share": round(sum(items) / len(items), 3) if items else None}


def summarize(outcomes: Sequence[TurnOutcome]) -> dict[str, Any]:
    """Execution accuracy by shape, category, turn position, kind and language; road accuracy
    (overall and in mixed conversations); refusals; the stock engine beside, where it ran."""
    data = [o for o in outcomes if o.category in SQL_CATEGORIES]
    mixed = {o.conv_id for o in outcomes if o.expected_road != "sql"} & {o.conv_id for o in outcomes
                                                                          if o.expected_road == "sql"}
    out: dict[str, Any] = {"turns": len(outcomes), "execution": _share([o.correct for o in data])}
    groups = {
        **{f"shape {s}": [o for o in data if o.shape == s] for s in ("single-table", "join")},
        **{f"category {c}": [o for o in data if o.category == c] for c in SQL_CATEGORIES},
        "turn 1": [o for o in data if o.turn == 1], "turn 2+": [o for o in data if o.turn >= 2],
        "standalone": [o for o in data if o.kind == "standalone"],
        "follow_up": [o for o in data if o.kind == "follow_up"],
        "vi": [o for o in data if o.lang == "vi"], "en": [o for o in data if o.lang == "en"],
    }
    out["by"] = {name: _share([o.correct for o in group]) for name, group in groups.items()}
    if any(o.stock_correct is not None for o in data):
        out["stock_execution"] = _share([bool(o.stock_correct) for o in data])
        out["stock_by"] = {name: _share([bool(o.stock_correct) for o in group]) for name, group in groups.items()}
        out["stock_writes_attempted"] = sum(o.stock_wrote for o in outcomes)
    out["road"] = _share([o.road_right for o in outcomes if o.category not in REFUSE_CATEGORIES])
    out["road_mixed"] = _share([o.road_right for o in outcomes if o.conv_id in mixed
                                and o.category not in REFUSE_CATEGORIES])
    out["write_requests_refused"] = _share([o.correct for o in outcomes if o.category == "write_request"])
    out["unanswerable_refused"] = _share([o.correct for o in outcomes if o.category == "unanswerable"])
    out["answerable_refused"] = _share([o.refused for o in data])
    out["docs"] = _share([o.correct for o in outcomes if o.expected_road == "docs"])
    seconds = sorted(o.seconds for o in outcomes if o.road == "sql" and o.expected_road == "sql")
    out["sql_turn_p50_s"] = seconds[len(seconds) // 2] if seconds else None
    return out


def _table(summary: dict[str, Any]) -> Table:
    table = Table(title=f"database road: {summary['turns']} turns")
    stock = "stock_by" in summary
    for column in ("bucket", "ours", *(["stock NLSQLTableQueryEngine"] if stock else [])):
        table.add_column(column)

    def cell(s: dict[str, Any]) -> str:
        return f"{s['right']}/{s['n']} ({s['share']})" if s["n"] else "-"

    table.add_row("execution, all data turns", cell(summary["execution"]),
                  *([cell(summary["stock_execution"])] if stock else []))
    for name, s in summary["by"].items():
        if s["n"]:
            table.add_row(name, cell(s), *([cell(summary["stock_by"][name])] if stock else []))
    for name in ("road", "road_mixed", "write_requests_refused", "unanswerable_refused", "answerable_refused", "docs"):
        table.add_row(name.replace("_", " "), cell(summary[name]), *([""] if stock else []))
    if stock:
        table.add_row("write statements stock would run", "0", str(summary["stock_writes_attempted"]))
    table.add_row("SQL-road turn p50 (s)", str(summary["sql_turn_p50_s"]), *([""] if stock else []))
    return table


# ---------------------------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals.sql", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, help="questions.jsonl of a split (data/eval/sql/dev or test)")
    parser.add_argument("--set", type=Path, help="the set's folder (schema.sql, data.sql, notes.md, docs/); "
                        "default: two levels above the questions file")
    parser.add_argument("--stock", action="store_true", help="also run LlamaIndex's NLSQLTableQueryEngine on each data turn")
    parser.add_argument("--limit", type=int, help="only the first N conversations (a smoke run)")
    parser.add_argument("--out", type=Path, help="write the summary and every turn as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_common_flags(parser)
    return parser


def main(argv: list[str] | None = None, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    out = Console(file=stdout or sys.stdout, highlight=False, width=140)
    err = Console(file=stderr or sys.stderr, highlight=False, soft_wrap=True)
    return run_cli(lambda: _run(args, out, err), err, interrupted="interrupted; nothing written.")


def evaluate(questions: Path, set_folder: Path, work: Path, *, stock: bool = False, limit: int | None = None,
             models: Any = None, progress: Callable[[int, int], None] | None = None,
             **overrides: Any) -> tuple[list[TurnOutcome], dict]:
    """Build the warehouse and the documents' index under ``work``, replay, summarise. ``models``:
    already loaded ones to share (the embedder and the LLM); ``overrides``: settings."""
    from app.config import load_settings

    rows = load_sql_rows(questions)
    if limit:
        keep = list(dict.fromkeys(r.conv_id for r in rows))[:limit]
        rows = [r for r in rows if r.conv_id in keep]
    database = build_database(set_folder, work / "warehouse.sqlite3")
    settings = load_settings(None, **{"index_dir": work / "index", "log_dir": None, **overrides,
                                      "sql_url": SecretStr(f"sqlite:///{database}"), "sql_notes": set_folder / "notes.md"})
    models = models or build_models(settings)
    ingest_path(settings, set_folder / "docs", embed_model=models.embed_model,
                companion_embed_model=models.companion_embed_model)
    pipeline = build_pipeline(settings, models, open_index(settings))
    warm(pipeline)  # as the service does before it says ready
    writer = stock_writer(database, models.llm, models.embed_model) if stock else None
    outcomes = replay(pipeline, rows, database, stock=writer, on_progress=progress)
    return outcomes, summarize(outcomes)


def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    set_folder = args.set or args.questions.resolve().parent.parent
    overrides = {k: v for k, v in (("embedding", args.embedding), ("llm", args.llm)) if v}
    with tempfile.TemporaryDirectory(prefix="turnrag-sql-eval-") as work, \
            ProgressBars(err.file, disable=args.quiet) as bars:
        outcomes, summary = evaluate(args.questions, set_folder, Path(work), stock=args.stock, limit=args.limit,
                                     progress=lambda done, total: bars("turns", done, total), **overrides)
    out.print(_table(summary))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"questions": str(args.questions), "summary": summary,
                                        "turns": [asdict(o) for o in outcomes]}, ensure_ascii=False, indent=1),
                            encoding="utf-8")
        out.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
