"""mtRAG's files: the layout of a domain, readers that name file and line, and matching the
benchmark's conversations to its retrieval tasks."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.errors import DocumentError
from engines.io import read_jsonl

TASK_SEP = "<::>"
USER_PREFIX = "|user|:"
QUERY_KINDS = ("lastturn", "questions", "rewrite")
UNANSWERABLE = "UNANSWERABLE"
# Word and punctuation pieces: what a BERT-style tokenizer splits on before WordPiece, so a
# count of them is a lower bound on subword tokens (measured on mtRAG: tokens are 1.15-1.3x).

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
    """Yield (line number, object), skipping blank lines; the first bad line stops the conversion."""
    for line in read_jsonl(path):
        if line.error is not None:
            raise MtragError(f"{line.where}: {line.error}")
        if not isinstance(line.value, dict):
            raise MtragError(f"{line.where}: expected a JSON object per line")
        yield line.number, line.value


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


def squash(text: str) -> str:
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
            index.setdefault((k, squash(questions_text(texts[:k]))), set()).add(ci)

    candidates: dict[str, set[int]] = {}
    for task_id, text in questions.items():
        conv_id, turn = parse_task_id(task_id, source)
        found = index.get((turn, squash(text)), set())
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
