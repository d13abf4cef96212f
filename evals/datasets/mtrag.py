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
import csv
import json
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.errors import DocumentError

logger = logging.getLogger(__name__)

TASK_SEP = "<::>"
USER_PREFIX = "|user|:"
QUERY_KINDS = ("lastturn", "questions", "rewrite")
UNANSWERABLE = "UNANSWERABLE"
# Word and punctuation pieces: what a BERT-style tokenizer splits on before WordPiece, so a
# count of them is a lower bound on subword tokens (measured on mtRAG: tokens are 1.15-1.3x).
_PIECE = re.compile(r"\w+|[^\w\s]")

LAYOUT_HELP = """\
expected layout:
  SRC/corpus/<domain>.jsonl
  SRC/retrieval_tasks/<domain>/<domain>_{lastturn,questions,rewrite}.jsonl
  SRC/retrieval_tasks/<domain>/qrels/dev.tsv
  SRC/conversations/*.json"""


class MtragError(DocumentError):
    """The benchmark folder is incomplete or a file in it cannot be read."""


# ---------------------------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DomainLayout:
    """Paths of one domain inside SRC, so every message can name the exact file."""

    src: Path
    domain: str

    @property
    def corpus(self) -> Path:
        return self.src / "corpus" / f"{self.domain}.jsonl"

    @property
    def tasks_dir(self) -> Path:
        return self.src / "retrieval_tasks" / self.domain

    def queries(self, kind: str) -> Path:
        return self.tasks_dir / f"{self.domain}_{kind}.jsonl"

    @property
    def qrels(self) -> Path:
        return self.tasks_dir / "qrels" / "dev.tsv"

    @property
    def conversations_dir(self) -> Path:
        return self.src / "conversations"

    def required_files(self) -> list[Path]:
        return [self.corpus, *(self.queries(k) for k in QUERY_KINDS), self.qrels]


def available_domains(src: Path) -> list[str]:
    """Domain names are the folders under retrieval_tasks/; nothing is hard-coded."""
    tasks_root = src / "retrieval_tasks"
    if not tasks_root.is_dir():
        return []
    return sorted(p.name for p in tasks_root.iterdir() if p.is_dir())


def resolve_layout(src: Path, domain: str) -> DomainLayout:
    """Check SRC up front so a broken layout fails before any work, naming the missing path."""
    if not src.is_dir():
        raise MtragError(f"{src}: not a directory\n{LAYOUT_HELP}")
    tasks_root = src / "retrieval_tasks"
    if not tasks_root.is_dir():
        raise MtragError(f"{tasks_root}: missing directory\n{LAYOUT_HELP}")
    domains = available_domains(src)
    if domain not in domains:
        listed = ", ".join(domains) if domains else "(none)"
        raise MtragError(f"unknown domain {domain!r} in {tasks_root}; available: {listed}")
    layout = DomainLayout(src, domain)
    for path in layout.required_files():
        if not path.is_file():
            raise MtragError(f"{path}: missing file\n{LAYOUT_HELP}")
    if not layout.conversations_dir.is_dir() or not any(layout.conversations_dir.glob("*.json")):
        raise MtragError(f"{layout.conversations_dir}: no *.json conversations\n{LAYOUT_HELP}")
    return layout


# ---------------------------------------------------------------------------------------------
# Readers (every error names file and line)
# ---------------------------------------------------------------------------------------------


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object), skipping blank lines."""
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MtragError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise MtragError(f"{path}:{lineno}: expected a JSON object per line")
            yield lineno, obj


def parse_task_id(task_id: str, where: str) -> tuple[str, int]:
    """Split '<conv><::><turn>' into (conv, turn)."""
    conv, sep, turn = task_id.rpartition(TASK_SEP)
    if not sep or not conv or not turn.isdigit() or int(turn) < 1:
        raise MtragError(f"{where}: task id {task_id!r} is not '<conversation_id><::><turn>'")
    return conv, int(turn)


def strip_speaker(text: str) -> str:
    """Drop the '|user|:' prefix the task files put before each user turn."""
    text = text.strip()
    if text.startswith(USER_PREFIX):
        text = text[len(USER_PREFIX) :]
    return text.strip()


def read_queries(path: Path) -> dict[str, str]:
    """BEIR queries file as {task_id: raw text}, in file order."""
    queries: dict[str, str] = {}
    for lineno, obj in iter_jsonl(path):
        task_id, text = obj.get("_id"), obj.get("text")
        if not isinstance(task_id, str) or not isinstance(text, str):
            raise MtragError(f"{path}:{lineno}: expected string fields '_id' and 'text'")
        if task_id in queries:
            raise MtragError(f"{path}:{lineno}: duplicate task id {task_id!r}")
        parse_task_id(task_id, f"{path}:{lineno}")
        queries[task_id] = text
    return queries


def read_qrels(path: Path) -> dict[str, list[str]]:
    """{task_id: [corpus ids with score > 0]} in file order; an optional header is skipped."""
    gold: dict[str, list[str]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for lineno, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if len(row) != 3:
                raise MtragError(
                    f"{path}:{lineno}: expected 3 tab-separated columns, got {len(row)}"
                )
            query_id, doc_id, score = (cell.strip() for cell in row)
            try:
                value = float(score)
            except ValueError:
                if lineno == 1:  # header line such as "query-id corpus-id score"
                    continue
                raise MtragError(f"{path}:{lineno}: score {score!r} is not a number") from None
            docs = gold.setdefault(query_id, [])
            if value > 0 and doc_id not in docs:
                docs.append(doc_id)
    return gold


@dataclass(frozen=True)
class Conversation:
    """One conversation file, reduced to what rows need."""

    name: str  # file name, e.g. "35.json"
    messages: tuple[dict[str, Any], ...]
    collection: str

    def user_indices(self) -> list[int]:
        """Positions of user messages in `messages`; user turn k is at index k-1 of this list."""
        return [i for i, m in enumerate(self.messages) if m["speaker"] == "user"]

    def user_texts(self) -> list[str]:
        return [self.messages[i]["text"] for i in self.user_indices()]


def load_conversation(path: Path) -> Conversation:
    """Read and validate one conversations/*.json file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MtragError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        raise MtragError(f"{path}: expected an object with a 'messages' list")
    for i, message in enumerate(messages):
        if (
            not isinstance(message, dict)
            or message.get("speaker") not in ("user", "agent")
            or not isinstance(message.get("text"), str)
        ):
            raise MtragError(
                f"{path}: messages[{i}] needs 'speaker' ('user' or 'agent') and a string 'text'"
            )
    return Conversation(path.name, tuple(messages), str(data.get("domain", "")))


def load_conversations(directory: Path) -> list[Conversation]:
    """All conversations, in numeric file order so runs are reproducible."""

    def order(path: Path) -> tuple[int, str]:
        return (int(path.stem), "") if path.stem.isdigit() else (sys.maxsize, path.stem)

    return [load_conversation(p) for p in sorted(directory.glob("*.json"), key=order)]


# ---------------------------------------------------------------------------------------------
# Task <-> conversation matching (pure)
# ---------------------------------------------------------------------------------------------


def _squash(text: str) -> str:
    return " ".join(text.split())


def questions_text(user_texts: Sequence[str]) -> str:
    """The `questions` query the benchmark builds from the first k user turns."""
    return "\n".join(f"{USER_PREFIX} {t}" for t in user_texts)


def match_conversations(
    questions: Mapping[str, str], conversations: Sequence[Conversation], source: str = "questions"
) -> dict[str, Conversation]:
    """Map each conversation id in `questions` to the one conversation consistent with all its
    tasks. Two conversations may share opening turns, hence the intersection over tasks."""
    index: dict[tuple[int, str], set[int]] = {}
    for ci, conv in enumerate(conversations):
        texts = conv.user_texts()
        for k in range(1, len(texts) + 1):
            index.setdefault((k, _squash(questions_text(texts[:k]))), set()).add(ci)

    candidates: dict[str, set[int]] = {}
    for task_id, text in questions.items():
        conv_id, turn = parse_task_id(task_id, source)
        found = index.get((turn, _squash(text)), set())
        candidates[conv_id] = candidates[conv_id] & found if conv_id in candidates else set(found)

    matched: dict[str, Conversation] = {}
    owner: dict[int, str] = {}
    for conv_id, found in candidates.items():
        if not found:
            raise MtragError(
                f"{source}: no conversation file matches the user turns of conversation {conv_id}"
            )
        if len(found) > 1:
            names = ", ".join(sorted(conversations[i].name for i in found))
            raise MtragError(f"{source}: conversation {conv_id} matches several files: {names}")
        (ci,) = found
        if ci in owner:
            raise MtragError(
                f"{source}: conversations {owner[ci]} and {conv_id} both match "
                f"{conversations[ci].name}"
            )
        owner[ci] = conv_id
        matched[conv_id] = conversations[ci]
    return matched


# ---------------------------------------------------------------------------------------------
# Standalone rule (pure)
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_NON_TOPICAL = frozenset(
    """
    a an the of to in on at by for from with about into onto over under as than then so if or
    and but nor not no yes is are was were be been being am do does did done doing have has had
    having can could should would will shall may might must what which who whom whose when
    where why how i me my mine we us our ours you your yours he him his she her hers it its they
    them their theirs this that these those there here any some all each every both either
    neither more most much many few lot lots other another such same own very too also just only
    even still really quite s t d ll re ve m don didn doesn isn aren wasn weren won wouldn
    couldn shouldn get got go going make made take use want need like know tell explain mean
    say said describe give provide please thing something anything way kind type bit
    information info detail details example exactly specifically actually currently mention
    mentioned better best possible potential available specific general regarding related
    relationship between during while happen help able well often usually generally overall
    consider exist someone one ok okay
    """.split()
)
_PRONOUNS = frozenset(
    "he him his she her hers they them their theirs it its this these those".split()
)
_QUESTION_OPENERS = frozenset(
    """what which who whom whose when where why how is are was were do does did can could should
    would will shall may might must has have had""".split()
)
_DEICTIC = re.compile(
    r"\b(?:what about|how about|and about|you (?:said|mentioned|mean|just said|told me)|mentioned"
    r"|(?:is|was|does|did|isn't|doesn't) that|that (?:means|is why)|in that case)\b"
)
_SENTENCE_END = re.compile(r"[.!?;]+\s+")
# "is it worth to", "was it ever legal to": a dummy subject, not a reference back.
_DUMMY_IT = re.compile(
    r"\b(?:is|was|isn't|wasn't|would|will|does) it (?:\S+ ){1,2}(?:to|that|if)\b"
)


def _stem(word: str) -> str:
    """Crude suffix stripping: enough to equate pig/pigs, tax/taxes, make/makes."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)] + repl
            break
    return word.rstrip("e") if len(word) > 3 else word


def _topical_stems(text: str) -> set[str]:
    return {
        _stem(w)
        for w in _TOKEN.findall(text.lower())
        if w not in _NON_TOPICAL and _stem(w) not in _NON_TOPICAL
    }


def _same_word(a: str, b: str) -> bool:
    """Equal stems, or an abbreviation/prefix of at least 4 letters (chemo/chemotherapy)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


def imported_context_words(question: str, rewrite: str, earlier_texts: Sequence[str]) -> list[str]:
    """Stems the rewrite adds that the question lacks but the earlier turns contain."""
    asked = _topical_stems(question)
    context = _topical_stems(" ".join(earlier_texts))
    added = [w for w in _topical_stems(rewrite) if not any(_same_word(w, q) for q in asked)]
    return sorted(w for w in added if any(_same_word(w, c) for c in context))


def reference_cue(question: str) -> str | None:
    """A phrase pointing back at the dialogue, or a sentence whose first non-filler word is a
    pronoun. Sentences of one or two words ("Got it.", "I see.") are acknowledgements, not
    references, and are skipped."""
    lowered = question.lower().replace("\u2019", "'")
    deictic = _DEICTIC.search(lowered)
    if deictic:
        return deictic.group(0)
    sentences = _SENTENCE_END.split(lowered)
    for sentence in sentences:
        words = _TOKEN.findall(sentence)
        if len(words) <= 2 and len(sentences) > 1:
            continue
        for word in words:
            if word in _PRONOUNS:
                if word == "it" and _DUMMY_IT.search(sentence):
                    break
                return word
            if word not in _NON_TOPICAL:
                break
    return None


def is_fragment(question: str) -> bool:
    """Keyword-style follow-ups ("any awards", "Investments?") lean on the topic so far; a
    question word or auxiliary anywhere means a full clause ("What is WACC?")."""
    words = _TOKEN.findall(question.lower())
    if not words or any(w in _QUESTION_OPENERS for w in words):
        return False
    return len(_topical_stems(question)) <= 2


def decide_standalone(
    turn: int,
    question: str,
    rewrite: str | None,
    earlier_texts: Sequence[str],
    label: str | None = None,
    has_standalone_alternative: bool = False,
) -> tuple[bool, str]:
    """(standalone?, basis) by the rule in the module docstring."""
    if turn == 1:
        return True, "turn1"
    if label:
        return label.strip().lower().replace("-", "_") == "standalone", "label"
    if has_standalone_alternative:
        return False, "alternative"
    if rewrite is not None and imported_context_words(question, rewrite, earlier_texts):
        return False, "rewrite_context"
    if reference_cue(question):
        return False, "reference"
    if is_fragment(question):
        return False, "fragment"
    return True, "no_cue"


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


def turn_bucket(turn: int) -> str:
    return "1" if turn == 1 else "2" if turn == 2 else "3+"


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
            if in_tasks and _squash(strip_speaker(lastturns.get(task_id, ""))) != _squash(question):
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
    buckets = ("1", "2", "3+")
    kinds = ("standalone", "non_standalone", "unanswerable")
    table = Counter((row["type"], turn_bucket(row["turn"])) for row in result.rows)
    lines = [
        f"mtRAG {result.domain}: {len(result.rows)} rows from {result.conversations} conversations"
        f" -> {result.rows_path}",
        f"{'type':<16}" + "".join(f"{'turn ' + b:>9}" for b in buckets) + f"{'total':>9}",
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
