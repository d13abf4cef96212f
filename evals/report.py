"""Report tables for the terminal (rich) and Markdown, report.json, and the hit@k-by-turn plot.

Tables are built once as plain data (:class:`Table`) and rendered twice, so the terminal and
report.md always show the same numbers. Order follows how a reader should check a run: is the
dataset worth measuring, where does retrieval fail, does the bot refuse the right questions,
are answers right, what does it cost, is a difference real, can the rewrites be trusted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.audit import audit_summary
from evals.buckets import POSITIONS
from evals.dataset import ROW_TYPES, all_bucket_keys
from evals.losses import STAGES
from evals.metrics import LATENCY_STEPS, hit_metric

if TYPE_CHECKING:
    from rich.console import Console

    from evals.evaluation import EvaluationResult

KEY_BUCKETS = ("all/all", "all/turn1", "all/turn2+", "standalone/all", "non_standalone/turn2+")
PLOT_GROUPS = (("non_standalone", "non_standalone"), ("all", "all answerable"))
PLOT_FILE = "hit_by_turn.png"
MARKERS = ("o", "s", "^", "D", "v", "P")
JITTER = 0.05
DASH = "–"
#: Turn buckets of the losses table (its per-type rows are follow-ups only).
LOSS_BUCKETS = ("all", "turn1", "turn2+")
MAX_AUDIT_EXAMPLES_TERMINAL = 10


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReportPaths:
    json: Path
    markdown: Path
    plot: Path


# ---------------------------------------------------------------------------------- formatting


def rate(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def rate_of(value: float | None, count: int, n: int) -> str:
    """"0.75 (3/4)": the rate with what it is made of, so a rate over 2 rows cannot pass as robust."""
    return DASH if not n or value is None else f"{value:.2f} ({count}/{n})"


def ms(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f}"


def pvalue(value: float | None) -> str:
    return DASH if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


# ---------------------------------------------------------------------------------- tables


def build_tables(result: "EvaluationResult", *, full: bool = False) -> list[Table]:
    """Every report table in reading order; ``full`` adds all buckets and examples (report.md)."""
    tables = [dataset_table(result), hit_by_bucket_table(result), metrics_table(result), refusal_table(result)]
    if not result.retrieval_only:
        tables.append(answers_table(result))
        tables.append(losses_table(result))
    tables.append(cost_table(result))
    if result.comparisons:
        tables.append(comparison_table(result, full=full))
    if result.audit:
        tables.append(audit_table(result))
        tables.append(audit_examples_table(result, limit=None if full else MAX_AUDIT_EXAMPLES_TERMINAL))
    return tables


def dataset_table(result: "EvaluationResult") -> Table:
    counts = result.dataset.counts
    rows = [[t, *(str(counts[t][p]) for p in POSITIONS), str(sum(counts[t].values()))] for t in ROW_TYPES]
    totals = [sum(counts[t][p] for t in ROW_TYPES) for p in POSITIONS]
    rows.append(["total", *(str(v) for v in totals), str(sum(totals))])
    title = (f"Dataset: {result.dataset.n_rows} rows in {result.dataset.n_conversations} conversations, "
             "by type × turn")
    return Table(title, ["type", *(f"turn {p}" for p in POSITIONS), "total"], rows,
                 [f"warning: {w}" for w in result.dataset.warnings])


def _shown_buckets(result: "EvaluationResult") -> list[str]:
    return [b for b in all_bucket_keys() if any(result.summary[c][b]["n"] for c in result.configs)]


def hit_by_bucket_table(result: "EvaluationResult") -> Table:
    hit = hit_metric(result.k)
    rows = []
    for bucket in _shown_buckets(result):
        cells = [rate_of(s[hit], s["hits"], s["n"]) for s in (result.summary[c][bucket] for c in result.configs)]
        rows.append([bucket, *cells])
    notes = [f"{hit} at document level over answerable rows; cells are rate (hits/rows). "
             "turn2+ = turn2 and turn3+ together."]
    skipped = {c: result.summary[c]["n_skipped"] for c in result.configs if result.summary[c]["n_skipped"]}
    notes += [f"{c}: {n} rows skipped ({', '.join(result.summary[c]['skipped'])})" for c, n in skipped.items()]
    return Table(f"Retrieval {hit} by type/turn", ["bucket", *result.configs], rows, notes)


def metrics_table(result: "EvaluationResult") -> Table:
    rows = []
    for config in result.configs:
        for bucket in ("all/all", "all/turn1", "all/turn2+", "non_standalone/turn2+"):
            s = result.summary[config][bucket]
            rows.append([config, bucket, str(s["n"]), *(rate(s[m]) for m in result.metrics)])
    return Table("Retrieval metrics", ["config", "bucket", "n", *result.metrics], rows)


def refusal_table(result: "EvaluationResult") -> Table:
    rows = []
    for config in result.configs:
        by_turn = result.summary[config]["refusal"]["by_turn"]
        refusal = [rate_of(by_turn[b]["refusal_rate"], by_turn[b]["refused_unanswerable"], by_turn[b]["n_unanswerable"])
                   for b in ("all", "turn1", "turn2+")]
        false = [rate_of(by_turn[b]["false_refusal_rate"], by_turn[b]["refused_answerable"], by_turn[b]["n_answerable"])
                 for b in ("all", "turn1", "turn2+")]
        rows.append([config, *refusal, *false])
    columns = ["config", "refused unans. all", "turn1", "turn2+", "false refusal all", "turn1", "turn2+"]
    return Table("Refusal on unanswerable rows (higher is better) vs false refusal on answerable rows "
                 "(lower is better)", columns, rows, ["from the turn record's structured `refused` flag"])


def answers_table(result: "EvaluationResult") -> Table:
    rows = []
    for config in result.configs:
        by_turn = result.summary[config]["answers"]["by_turn"]
        must = [rate_of(by_turn[b]["must_contain_rate"], by_turn[b]["must_contain_hits"], by_turn[b]["n_must_contain"])
                for b in ("all", "turn1", "turn2+")]
        stale = rate_of(by_turn["all"]["stale_rate"], by_turn["all"]["stale_count"], by_turn["all"]["n_stale"])
        rows.append([config, *must, stale])
    return Table("Answers", ["config", "must_contain all", "turn1", "turn2+", "stale (lower is better)"], rows,
                 ["stale = quotes stale_value and lacks a must_contain string"])


def losses_table(result: "EvaluationResult") -> Table:
    """Answerable rows with expected values, by the stage after which the value was gone (evals.losses)."""
    rows = []
    for config in result.configs:
        lost = result.summary[config]["answers"].get("lost_at") or {}
        for bucket, counts in lost.items():
            if bucket in LOSS_BUCKETS or "/" in bucket:
                rows.append([config, bucket, *(str(counts[stage]) for stage in STAGES), str(sum(counts.values()))])
    return Table("Where the expected value was lost", ["config", "bucket", *STAGES, "rows"], rows,
                 ["not retrieved: in none of the top-k chunks; set aside: retrieved, then removed by the conflict "
                  "check; not quoted: in the passages read, not in the answer"])


def cost_table(result: "EvaluationResult") -> Table:
    rows = []
    steps = [s for s in LATENCY_STEPS
             if any(result.summary[c]["cost"]["latency_ms"][s]["n"] for c in result.configs)]
    for config in result.configs:
        cost = result.summary[config]["cost"]
        latency = cost["latency_ms"]
        fallbacks = result.summary[config]["condense"]["fallbacks"]
        rows.append([
            config, rate(cost["llm_calls_per_turn"]), rate(cost["llm_calls_by_turn"]["turn1"]),
            rate(cost["llm_calls_by_turn"]["turn2+"]),
            *(f"{ms(latency[s]['p50'])} / {ms(latency[s]['p95'])}" for s in steps),
            ", ".join(f"{k}={v}" for k, v in sorted(fallbacks.items())) or "0",
        ])
    columns = ["config", "LLM calls/turn", "turn1", "turn2+", *(f"{s} ms p50/p95" for s in steps), "condense fallbacks"]
    return Table("Cost", columns, rows)


def comparison_table(result: "EvaluationResult", *, full: bool = False) -> Table:
    hit = hit_metric(result.k)
    buckets = _shown_buckets(result) if full else [b for b in KEY_BUCKETS if b in _shown_buckets(result)]
    rows = []
    for c in result.comparisons:
        if c.bucket not in buckets or (not full and c.metric != hit):
            continue
        star = "*" if c.significant else ""
        delta = DASH if c.delta is None else f"{c.delta:+.2f}"
        rows.append([f"{c.config} vs {c.baseline}", c.metric, c.bucket, str(c.n),
                     f"{c.wins}/{c.ties}/{c.losses}", delta, pvalue(c.p_value) + star])
    notes = [f"W/T/L = rows where the config scores higher/same/lower than {result.baseline}; "
             f"p from a {result.comparisons[0].test} (fixed seed); * = p < 0.05 with n >= 5"]
    return Table(f"Paired comparison against {result.baseline}",
                 ["configs", "metric", "bucket", "n", "W/T/L", "Δ", "p"], rows, notes)


def audit_table(result: "EvaluationResult") -> Table:
    rows = []
    for config, s in audit_summary(result.audit).items():
        fallbacks = ", ".join(f"{k}={v}" for k, v in sorted(s["fallbacks"].items())) or "0"
        rows.append([config, str(s["n"]), str(s["answered"]), str(s["unchanged"]), str(s["new_content"]),
                     str(s["flagged"]), fallbacks])
    return Table("Rewrite audit (non_standalone rows)",
                 ["config", "rows", "answered", "unchanged", "new_content", "any flag", "condense fallbacks"], rows,
                 ["answered: not a question; unchanged: same content words as the question; "
                  "new_content: words in neither the history nor the question"])


def audit_examples_table(result: "EvaluationResult", *, limit: int | None) -> Table:
    flagged = [a for a in result.audit if a.flags]
    shown = flagged if limit is None else flagged[:limit]
    rows = [[a.config, f"{a.conv_id}#{a.turn}", a.question, a.query,
             ", ".join(a.flags) + (f" ({', '.join(a.new_words)})" if a.new_words else "")] for a in shown]
    notes = [f"{len(flagged) - len(shown)} more in report.json"] if len(shown) < len(flagged) else []
    if not flagged:
        notes.append("no flagged rewrites")
    return Table("Flagged rewrites", ["config", "row", "question", "query used", "flags"], rows, notes)


# ---------------------------------------------------------------------------------- rendering


def print_report(result: "EvaluationResult", console: "Console", *, full: bool = False) -> None:
    """All tables on a rich console (notes and warnings under each table)."""
    from rich.table import Table as RichTable
    from rich.text import Text

    for table in build_tables(result, full=full):
        rich_table = RichTable(title=table.title, title_justify="left", show_lines=False)
        for i, column in enumerate(table.columns):
            rich_table.add_column(column, justify="left" if i == 0 or not _numeric(table, i) else "right",
                                  overflow="fold")
        for row in table.rows:
            rich_table.add_row(*(Text(cell) for cell in row))
        console.print(rich_table)
        for note in table.notes:
            console.print(Text(note, style="yellow" if note.startswith("warning") else "dim"), soft_wrap=True)
        console.print()


def _numeric(table: Table, column: int) -> bool:
    return all(row[column][:1].isdigit() or row[column] in (DASH, "0") or row[column][:1] in "+-<"
               for row in table.rows)


def markdown(result: "EvaluationResult", plot_name: str | None = PLOT_FILE) -> str:
    """report.md: the meta line, the plot, then every table in full."""
    meta = result.meta
    lines = ["# Multi-turn evaluation", ""]
    described = [f"dataset `{meta.get('dataset', '?')}`", f"corpus `{meta.get('corpus', '?')}`",
                 f"k={result.k}", f"mode {result.mode}", "retrieval-only" if result.retrieval_only else "with answers",
                 f"configs {', '.join(result.configs)}", f"at {meta.get('timestamp', '?')}"]
    lines += [", ".join(described) + ".", ""]
    settings = meta.get("settings") or {}
    if settings:
        lines += ["Settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()) + ".", ""]
    if plot_name:
        lines += [f"![{hit_metric(result.k)} by turn position]({plot_name})", ""]
    for table in build_tables(result, full=True):
        lines += [f"## {table.title}", "", _md_row(table.columns), _md_row(["---"] * len(table.columns))]
        lines += [_md_row(row) for row in table.rows]
        lines += [""] + [f"> {note}" for note in table.notes] + ([""] if table.notes else [])
    return "\n".join(lines).rstrip() + "\n"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def plot_hit_by_turn(result: "EvaluationResult", path: Path) -> Path:
    """hit@k by turn position (1..5+), one line per configuration; non_standalone and all rows."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import (
        Figure,  # the object API: no pyplot global state, Agg canvas
    )

    hit = hit_metric(result.k)
    fig = Figure(figsize=(10, 4), dpi=110)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(PLOT_GROUPS), sharey=True)
    x = list(range(len(POSITIONS)))
    for ax, (group, label) in zip(axes, PLOT_GROUPS):
        n_by_position = [max(result.summary[c]["by_position"][group][p]["n"] for c in result.configs)
                         for p in POSITIONS]
        for i, config in enumerate(result.configs):
            cells = result.summary[config]["by_position"][group]
            y = [math.nan if cells[p][hit] is None else cells[p][hit] for p in POSITIONS]
            shift = (i - (len(result.configs) - 1) / 2) * JITTER  # equal scores stay visible side by side
            ax.plot([v + shift for v in x], y, marker=MARKERS[i % len(MARKERS)], label=config, alpha=0.85)
        ax.set_xticks(x, [f"{p}\nn={n}" for p, n in zip(POSITIONS, n_by_position)])
        ax.set_title(f"{hit}, {label}")
        ax.set_xlabel("turn")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(hit)
    axes[-1].legend(loc="lower left", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    return path


def write_report(result: "EvaluationResult", out_dir: Path | str) -> ReportPaths:
    """report.json, report.md and the PNG plot in ``out_dir`` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(out / "report.json", out / "report.md", out / PLOT_FILE)
    paths.json.write_text(json.dumps(result.to_json(), ensure_ascii=False, indent=2, default=_json_default) + "\n",
                          encoding="utf-8")
    plot_hit_by_turn(result, paths.plot)
    paths.markdown.write_text(markdown(result, paths.plot.name), encoding="utf-8")
    return paths


def _json_default(value: Any) -> Any:
    """numpy scalars and paths from engine reports; anything else as its string."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)
