"""Convert one mtRAG domain into per-turn eval rows plus a BEIR corpus.

mtRAG (IBM mt-rag-benchmark, arXiv 2501.03468) ships retrieval tasks and conversations
separately, and the task ids (``<conversation_id><::><turn>``) appear nowhere in the
conversation files. This converter joins them so that each row carries the real dialogue
history, the benchmark's labels and the qrels gold ids, ready for turn-by-turn evaluation.

Expected layout of SRC (any domain directory under retrieval_tasks/ is accepted):

  SRC/corpus/<domain>.jsonl                      {"_id", "title", "text"} per line
  SRC/retrieval_tasks/<domain>/<domain>_lastturn.jsonl   {"_id": "<conv><::><turn>", "text"}
  SRC/retrieval_tasks/<domain>/<domain>_questions.jsonl  all user turns so far, one per line
  SRC/retrieval_tasks/<domain>/<domain>_rewrite.jsonl    the authors' standalone rewrite
  SRC/retrieval_tasks/<domain>/qrels/dev.tsv     query-id TAB corpus-id TAB score (header ok)
  SRC/conversations/*.json                       {"messages": [{"speaker": "user"|"agent",
                                                  "text", "enrichments": {...}}, ...], ...}

Outputs in OUT: <domain>.jsonl (one row per user turn) and <domain>_corpus.jsonl (BEIR).

How a task finds its conversation: the ``questions`` text of task <conv><::><k> is the first k
user messages, each prefixed "|user|: " and joined by newlines. A conversation matches when
its own first k user messages give the same text (whitespace-normalised) for every task of
that conversation id; exactly one conversation must match. Turn k is the k-th user message,
1-based, as in the task id.

Which turns become rows:
  * every retrieval task of the domain (answerability ANSWERABLE or PARTIAL in mtRAG);
  * plus every user turn labelled UNANSWERABLE in a matched conversation. mtRAG leaves these
    out of its retrieval tasks, so without them no row could test refusal. They get
    in_retrieval_tasks=false, a task_id of the same form, rewrite=null. --tasks-only drops them.
  * CONVERSATIONAL turns ("thanks!") outside the tasks are skipped; they still appear in the
    history of later turns.

Row fields: conv_id, turn, history ([role, text] pairs, role "user"/"assistant", all earlier
messages in order), question (the user's text), type, gold_doc_ids (qrels ids with score > 0,
in qrels order), rewrite, domain, answerability, task_id, in_retrieval_tasks, standalone,
standalone_basis, standalone_label, multi_turn, question_type (list), reference_answer (the
agent's reference reply to this turn), collection, source_file.

type: "unanswerable" when the turn's Answerability is UNANSWERABLE (gold_doc_ids is then []
even if qrels list passages; a warning says how many were dropped); otherwise "standalone" or
"non_standalone" from the rule below.

Standalone rule (first that applies wins; the winning step is stored in standalone_basis):
  1. turn1      - turn 1 is standalone.
  2. label      - the message's own "Standalone Type" enrichment (only a handful carry one).
  3. alternative - the annotator attached an alternative text labelled "Standalone": they
                  rewrote it because the original needed context, so non_standalone.
  4. rewrite_context - the authors' rewrite adds a content word that is not in the question
                  (after light stemming, ignoring style words such as "tell"/"explain") but
                  does occur in the earlier turns: the rewrite had to import context.
  5. reference  - the question opens with a pronoun or demonstrative before any content word
                  ("Is this the best river...", "did he always...", not "is it worth to"), or
                  points back ("what about", "how about", "you said", "you mean", "mentioned",
                  "is that", "that means", "in that case").
  6. fragment   - at most two content words and no question word or auxiliary verb anywhere
                  ("Investments?", "any awards").
  7. no_cue     - none of the above: standalone.
  Steps 4-6 mark non_standalone. The "Multi-Turn" enrichment (Follow-up / Clarification /
  N/A) is carried as multi_turn but not used: it is Follow-up on nearly every later turn,
  including many fully self-contained questions, so it encodes "turn > 1", not dependence.

The corpus is rewritten, not pointed to: the output folder then holds everything an eval run
reads, each line is checked (JSON, unique _id, text present) and gold ids are checked against
it. The whole pooled corpus is written even with --limit-conversations: the distractors are
the point.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.buckets import turn_bucket
from evals.datasets.mtrag_files import (
    QUERY_KINDS,
    TASK_SEP,
    UNANSWERABLE,
    Conversation,
    MtragError,
    iter_jsonl,
    load_conversations,
    match_conversations,
    read_qrels,
    read_queries,
    resolve_layout,
    squash,
    strip_speaker,
)
from evals.datasets.mtrag_standalone import decide_standalone

logger = logging.getLogger(__name__)

_PIECE = re.compile(r"\w+|[^\w\s]")



# ---------------------------------------------------------------------------------------------
# Rows (pure)
# ---------------------------------------------------------------------------------------------


def _enrichment(message: Mapping[str, Any], key: str) -> list[str]:
    value = (message.get("enrichments") or {}).get(key)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _has_standalone_alternative(message: Mapping[str, Any]) -> bool:
    for alt in message.get("alternatives") or []:
        if not isinstance(alt, dict):
            continue
        labels = (alt.get("enrichments") or {}).get("Standalone Type") or []
        if any(str(x).lower() == "standalone" for x in labels):
            return True
    return False


@dataclass
class RowStats:
    """What was left out or overridden, for the summary and warnings."""

    skipped_turns: Counter[str] = field(default_factory=Counter)
    dropped_unanswerable_qrels: int = 0
    lastturn_mismatches: int = 0


def build_rows(
    domain: str,
    matched: Mapping[str, Conversation],
    queries: Mapping[str, Mapping[str, str]],
    gold: Mapping[str, Sequence[str]],
    *,
    tasks_only: bool = False,
    stats: RowStats | None = None,
) -> list[dict[str, Any]]:
    """One row per emitted user turn, conversations in `matched` order, turns ascending.

    `queries` maps each kind in QUERY_KINDS to {task_id: text}.
    """
    stats = stats if stats is not None else RowStats()
    rewrites, lastturns = queries["rewrite"], queries["lastturn"]
    rows: list[dict[str, Any]] = []
    for conv_id, conv in matched.items():
        user_positions = conv.user_indices()
        for turn, pos in enumerate(user_positions, start=1):
            message = conv.messages[pos]
            task_id = f"{conv_id}{TASK_SEP}{turn}"
            answerability = (_enrichment(message, "Answerability") or [None])[0]
            in_tasks = task_id in rewrites
            if not in_tasks and (tasks_only or answerability != UNANSWERABLE):
                stats.skipped_turns[answerability or "no label"] += 1
                continue
            question = message["text"].strip()
            if in_tasks and squash(strip_speaker(lastturns.get(task_id, ""))) != squash(question):
                stats.lastturn_mismatches += 1
                logger.warning("lastturn text of %s differs from the conversation turn", task_id)
            earlier = conv.messages[:pos]
            history = [
                ["user" if m["speaker"] == "user" else "assistant", m["text"].strip()]
                for m in earlier
            ]
            rewrite = strip_speaker(rewrites[task_id]) if in_tasks else None
            label = (_enrichment(message, "Standalone Type") or [None])[0]
            standalone, basis = decide_standalone(
                turn,
                question,
                rewrite,
                [m["text"] for m in earlier],
                label=label,
                has_standalone_alternative=_has_standalone_alternative(message),
            )
            gold_ids = list(gold.get(task_id, []))
            if answerability == UNANSWERABLE:
                kind = "unanswerable"
                if gold_ids:
                    stats.dropped_unanswerable_qrels += len(gold_ids)
                    logger.warning(
                        "%s is UNANSWERABLE; ignoring its %d qrels", task_id, len(gold_ids)
                    )
                gold_ids = []
            else:
                kind = "standalone" if standalone else "non_standalone"
            next_user = user_positions[turn] if turn < len(user_positions) else len(conv.messages)
            answer = next(
                (
                    m["text"].strip()
                    for m in conv.messages[pos + 1 : next_user]
                    if m["speaker"] == "agent"
                ),
                None,
            )
            rows.append(
                {
                    "conv_id": conv_id,
                    "turn": turn,
                    "history": history,
                    "question": question,
                    "type": kind,
                    "gold_doc_ids": gold_ids,
                    "rewrite": rewrite,
                    "domain": domain,
                    "answerability": answerability,
                    "task_id": task_id,
                    "in_retrieval_tasks": in_tasks,
                    "standalone": standalone,
                    "standalone_basis": basis,
                    "standalone_label": label,
                    "multi_turn": "|".join(_enrichment(message, "Multi-Turn")) or None,
                    "question_type": _enrichment(message, "Question Type"),
                    "reference_answer": answer,
                    "collection": conv.collection,
                    "source_file": conv.name,
                }
            )
    return rows


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@dataclass
class CorpusStats:
    """Passage count and length profile, to choose chunking and context budgets.

    over_256 / over_512 count passages with more word+punctuation pieces than that: a lower
    bound on the share over that many subword tokens."""

    docs: int = 0
    words: int = 0
    over_256: int = 0
    over_512: int = 0

    def add(self, text: str) -> None:
        pieces = len(_PIECE.findall(text))
        self.docs += 1
        self.words += len(text.split())
        self.over_256 += pieces > 256
        self.over_512 += pieces > 512

    @property
    def mean_words(self) -> float:
        return self.words / self.docs if self.docs else 0.0


def corpus_record(obj: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Normalise one passage to BEIR form: _id, title, text, then any other flat fields."""
    doc_id, text, title = obj.get("_id"), obj.get("text"), obj.get("title", "")
    if not isinstance(doc_id, str) or not doc_id:
        raise MtragError(f"{where}: passage has no string '_id'")
    if not isinstance(text, str):
        raise MtragError(f"{where}: passage {doc_id!r} has no string 'text'")
    record: dict[str, Any] = {
        "_id": doc_id,
        "title": title if isinstance(title, str) else "",
        "text": text,
    }
    for key, value in obj.items():
        if key not in record and (value is None or isinstance(value, (str, int, float, bool))):
            record[key] = value
    return record


def write_corpus(source: Path, target: Path) -> tuple[CorpusStats, set[str]]:
    """Validate and rewrite the corpus; returns its stats and ids (for checking gold ids)."""
    stats, ids = CorpusStats(), set()
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            for lineno, obj in iter_jsonl(source):
                record = corpus_record(obj, f"{source}:{lineno}")
                if record["_id"] in ids:
                    raise MtragError(f"{source}:{lineno}: duplicate _id {record['_id']!r}")
                ids.add(record["_id"])
                stats.add(record["text"])
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return stats, ids


# ---------------------------------------------------------------------------------------------
# Orchestration
# ---------------------------------------------------------------------------------------------


@dataclass
class ConversionResult:
    domain: str
    rows_path: Path
    corpus_path: Path
    rows: list[dict[str, Any]]
    corpus: CorpusStats
    row_stats: RowStats
    conversations: int
    missing_gold: int


def convert(
    src: Path,
    domain: str,
    out: Path,
    *,
    limit_conversations: int | None = None,
    tasks_only: bool = False,
) -> ConversionResult:
    """Read SRC, write <out>/<domain>.jsonl and <out>/<domain>_corpus.jsonl."""
    layout = resolve_layout(src, domain)
    queries = {kind: read_queries(layout.queries(kind)) for kind in QUERY_KINDS}
    ids = [set(q) for q in queries.values()]
    if not all(s == ids[0] for s in ids):
        raise MtragError(
            f"{layout.tasks_dir}: the lastturn, questions and rewrite files list different task ids"
        )
    gold = read_qrels(layout.qrels)
    without_gold = [t for t in queries["rewrite"] if not gold.get(t)]
    if without_gold:
        logger.warning(
            "%d tasks have no qrels with score > 0 (e.g. %s)", len(without_gold), without_gold[0]
        )

    matched = match_conversations(
        queries["questions"],
        load_conversations(layout.conversations_dir),
        str(layout.queries("questions")),
    )
    if limit_conversations is not None:
        matched = dict(list(matched.items())[:limit_conversations])

    row_stats = RowStats()
    rows = build_rows(domain, matched, queries, gold, tasks_only=tasks_only, stats=row_stats)

    out.mkdir(parents=True, exist_ok=True)
    corpus_path = out / f"{domain}_corpus.jsonl"
    corpus_stats, doc_ids = write_corpus(layout.corpus, corpus_path)
    missing = sorted({d for row in rows for d in row["gold_doc_ids"] if d not in doc_ids})
    if missing:
        logger.warning(
            "%d gold ids are not in %s (e.g. %s)", len(missing), layout.corpus, missing[0]
        )

    rows_path = out / f"{domain}.jsonl"
    with rows_path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    logger.info("wrote %d rows to %s", len(rows), rows_path)
    return ConversionResult(
        domain, rows_path, corpus_path, rows, corpus_stats, row_stats, len(matched), len(missing)
    )


def format_summary(result: ConversionResult) -> str:
    """Counts by type x turn bucket, plus what was skipped and the corpus profile."""
    buckets = ("turn1", "turn2", "turn3+")
    kinds = ("standalone", "non_standalone", "unanswerable")
    table = Counter((row["type"], turn_bucket(row["turn"])) for row in result.rows)
    lines = [
        f"mtRAG {result.domain}: {len(result.rows)} rows from {result.conversations} conversations"
        f" -> {result.rows_path}",
        f"{'type':<16}" + "".join(f"{b:>9}" for b in buckets) + f"{'total':>9}",
    ]
    for kind in kinds:
        counts = [table[(kind, b)] for b in buckets]
        lines.append(f"{kind:<16}" + "".join(f"{c:>9}" for c in counts) + f"{sum(counts):>9}")
    totals = [sum(table[(k, b)] for k in kinds) for b in buckets]
    lines.append(f"{'total':<16}" + "".join(f"{c:>9}" for c in totals) + f"{sum(totals):>9}")
    answerability = Counter(str(row["answerability"]) for row in result.rows)
    basis = Counter(row["standalone_basis"] for row in result.rows)
    lines.append(
        "answerability: " + ", ".join(f"{k} {v}" for k, v in sorted(answerability.items()))
    )
    lines.append("standalone basis: " + ", ".join(f"{k} {v}" for k, v in basis.most_common()))
    skipped = result.row_stats.skipped_turns
    if skipped:
        lines.append("skipped turns: " + ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())))
    if result.row_stats.dropped_unanswerable_qrels:
        lines.append(
            f"qrels ignored on UNANSWERABLE turns: {result.row_stats.dropped_unanswerable_qrels}"
        )
    if result.missing_gold:
        lines.append(f"gold ids missing from corpus: {result.missing_gold}")
    c = result.corpus
    share = (lambda n: f"{100 * n / c.docs:.1f}%") if c.docs else (lambda n: "n/a")
    lines.append(
        f"corpus: {c.docs} passages, mean {c.mean_words:.1f} words, "
        f"over 256 / 512 tokens (lower bound, word+punct pieces): "
        f"{share(c.over_256)} / {share(c.over_512)}"
        f" -> {result.corpus_path}"
    )
    return "\n".join(lines)


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.datasets.mtrag",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("src", type=Path, metavar="SRC", help="the mtRAG folder (layout above)")
    parser.add_argument("--domain", required=True, help="a folder name under SRC/retrieval_tasks/")
    parser.add_argument("--out", required=True, type=Path, help="output folder (created if needed)")
    parser.add_argument(
        "--limit-conversations",
        type=_positive_int,
        metavar="N",
        help="only the first N conversations in task-file order (the corpus is still whole)",
    )
    parser.add_argument(
        "--tasks-only",
        action="store_true",
        help="emit retrieval tasks only, without the UNANSWERABLE turns mtRAG leaves out of them",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress at INFO level")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: returns 0, or 2 on a bad SRC (message on stderr, no traceback)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    try:
        result = convert(
            args.src,
            args.domain,
            args.out,
            limit_conversations=args.limit_conversations,
            tasks_only=args.tasks_only,
        )
    except MtragError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
