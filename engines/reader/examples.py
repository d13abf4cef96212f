"""The reader's training data: sets written for training (``data/train/<set>/``), read and checked.

A set is a corpus (Markdown with front matter, read like any corpus), multi-turn conversations whose
turns name the sentences that answer them and the tempting ones that do not, and labelled claim
pairs (same subject and scope or not). Every quote must be an exact substring of its document, so a
label always points at real text; every problem is reported at once, by file and line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engines.corpus.documents import SourceDocument, load_corpus
from engines.errors import DocumentError
from engines.io import read_jsonl

NEGATIVE_KINDS = ("other_scope", "other_item", "older_version", "neighbour_clause", "on_topic")
CLAIM_KINDS = ("value_changed", "abolished", "agree", "other_scope", "other_item", "other_entity",
               "unrelated_same_topic")


@dataclass(frozen=True)
class Quote:
    """A span of one document, verbatim; ``kind`` says why a negative tempts."""

    doc_id: str
    text: str
    kind: str = ""


@dataclass(frozen=True)
class Turn:
    """One user turn of a written conversation, with what answers it and what only looks like it."""

    conv_id: str
    turn: int
    question: str
    language: str
    follow_up: bool
    rewrite: str
    answerable: bool
    answer: str
    must_contain: tuple[str, ...]
    evidence: tuple[Quote, ...]
    negatives: tuple[Quote, ...]


@dataclass(frozen=True)
class ClaimPair:
    pair_id: str
    a: Quote
    b: Quote
    same_scope: bool
    conflict: bool
    kind: str


@dataclass(frozen=True)
class TrainingSet:
    name: str
    documents: tuple[SourceDocument, ...]
    turns: tuple[Turn, ...]
    pairs: tuple[ClaimPair, ...]

    def document(self, doc_id: str) -> SourceDocument:
        for doc in self.documents:
            if doc.doc_id == doc_id:
                return doc
        raise KeyError(doc_id)

    def conversations(self) -> Iterator[list[Turn]]:
        """Turns grouped by conversation, in order."""
        current: list[Turn] = []
        for turn in self.turns:
            if current and turn.conv_id != current[-1].conv_id:
                yield current
                current = []
            current.append(turn)
        if current:
            yield current


def load_training_sets(root: Path | str) -> list[TrainingSet]:
    """Every set under ``root`` (one folder each), sorted by name; one error lists every problem."""
    folders = sorted(p for p in Path(root).iterdir() if (p / "corpus").is_dir())
    if not folders:
        raise DocumentError(f"{root}: no training set (a folder with corpus/ and conversations.jsonl)")
    sets, problems = [], []
    for folder in folders:
        try:
            sets.append(load_training_set(folder))
        except DocumentError as exc:
            problems.append(str(exc))
    if problems:
        raise DocumentError("\n".join(problems))
    return sets


def load_training_set(folder: Path | str) -> TrainingSet:
    folder = Path(folder)
    documents = tuple(load_corpus(folder / "corpus"))
    bodies = {d.doc_id: d.text for d in documents}
    problems: list[str] = []
    turns = tuple(_read(folder / "conversations.jsonl", _turn, bodies, problems))
    pair_file = folder / "claim_pairs.jsonl"
    pairs = tuple(_read(pair_file, _pair, bodies, problems)) if pair_file.exists() else ()
    problems.extend(_order_problems(folder / "conversations.jsonl", turns))
    if problems:
        shown = problems[:40] + ([f"... and {len(problems) - 40} more"] if len(problems) > 40 else [])
        raise DocumentError(f"training set {folder}: {len(problems)} problem(s):\n  " + "\n  ".join(shown))
    return TrainingSet(name=folder.name, documents=documents, turns=turns, pairs=pairs)


def _read(path: Path, parse, bodies: dict[str, str], problems: list[str]) -> Iterator:
    for line in read_jsonl(path):
        if line.error:
            problems.append(f"{line.where}: {line.error}")
            continue
        try:
            yield parse(line.value, bodies)
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{line.where}: {exc}")


def _quote(raw: dict, bodies: dict[str, str], *, kinds: Sequence[str] = ()) -> Quote:
    doc_id, text, kind = str(raw["doc_id"]), str(raw["quote"]), str(raw.get("kind", ""))
    if doc_id not in bodies:
        raise ValueError(f"quote names document {doc_id!r}, which is not in corpus/")
    if text not in bodies[doc_id]:
        raise ValueError(f"quote is not an exact substring of {doc_id}: {text[:80]!r}")
    if kinds and kind not in kinds:
        raise ValueError(f"negative kind {kind!r}; use one of {', '.join(kinds)}")
    return Quote(doc_id, text, kind)


def _turn(raw: dict, bodies: dict[str, str]) -> Turn:
    evidence = tuple(_quote(q, bodies) for q in raw.get("evidence") or ())
    negatives = tuple(_quote(q, bodies, kinds=NEGATIVE_KINDS) for q in raw.get("negatives") or ())
    answerable = bool(raw["answerable"])
    must = tuple(str(v) for v in raw.get("must_contain") or ())
    if answerable and not evidence:
        raise ValueError("an answerable turn needs evidence")
    if not answerable and evidence:
        raise ValueError("an unanswerable turn has no evidence")
    missing = [v for v in must if not any(v in q.text for q in evidence)]
    if missing:
        raise ValueError(f"must_contain {missing} not in the evidence quotes")
    if raw.get("kind") not in ("standalone", "follow_up"):
        raise ValueError(f"kind {raw.get('kind')!r}; use standalone or follow_up")
    return Turn(conv_id=str(raw["conv_id"]), turn=int(raw["turn"]), question=str(raw["question"]),
                language=str(raw.get("lang", "vi")), follow_up=raw["kind"] == "follow_up",
                rewrite=str(raw.get("rewrite") or raw["question"]), answerable=answerable,
                answer=str(raw.get("answer", "")), must_contain=must, evidence=evidence, negatives=negatives)


def _pair(raw: dict, bodies: dict[str, str]) -> ClaimPair:
    kind = str(raw.get("kind", ""))
    if kind not in CLAIM_KINDS:
        raise ValueError(f"claim pair kind {kind!r}; use one of {', '.join(CLAIM_KINDS)}")
    same, conflict = bool(raw["same_scope"]), bool(raw["conflict"])
    if conflict and not same:
        raise ValueError("a conflict needs same_scope: true")
    return ClaimPair(pair_id=str(raw["pair_id"]), a=_quote(raw["a"], bodies), b=_quote(raw["b"], bodies),
                     same_scope=same, conflict=conflict, kind=kind)


def _order_problems(path: Path, turns: Sequence[Turn]) -> list[str]:
    """Turns of a conversation come together and count up from 1 (histories are rebuilt from them)."""
    problems, seen, expected = [], set(), {}
    previous = None
    for t in turns:
        if t.conv_id != previous:
            if t.conv_id in seen:
                problems.append(f"{path}: conversation {t.conv_id} is split in two places")
            seen.add(t.conv_id)
            previous = t.conv_id
        want = expected.get(t.conv_id, 1)
        if t.turn != want:
            problems.append(f"{path}: {t.conv_id} turn {t.turn} where turn {want} was expected")
        expected[t.conv_id] = t.turn + 1
    return problems
