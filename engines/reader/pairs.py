"""Training groups from a training set: one question with the passages that answer it and the ones
that only tempt, at two grains, chunks as the retriever returns them and clauses as the answer quotes.

Positives are the chunks and clauses holding a turn's evidence. Negatives are, hardest first: the
writer's tempting quotes (another scope, another item, an older version, the neighbouring clause,
on topic), then the chunks of the same set that share the most words with the question (the
lexical confusions a fused pool is made of), then other chunks of the answering document. A chunk
that holds an expected value without the evidence is ambiguous and left out. Pure functions; the
randomness comes from the caller's seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engines.answering.clauses import split_clauses
from engines.answering.extract import lexical_scores, scoring_text
from engines.reader.examples import TrainingSet, Turn
from engines.reader.inputs import conversation_text, passage_text

ANSWER, SCOPE = 0, 1  # the reader's two heads


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    title: str
    text: str

    @property
    def passage(self) -> str:
        return passage_text(self.text, self.title)


@dataclass(frozen=True)
class Group:
    """One query and its passages; ``labels`` 1 = answers, 0 = does not. A group with no positive
    (an unanswerable turn) trains only the pointwise loss."""

    task: int
    query: str
    passages: tuple[str, ...]
    labels: tuple[float, ...]
    source: str  # set/conv/turn, for the card and for leakage checks


def chunk_set(training_set: TrainingSet, chunk) -> list[Chunk]:
    """The set's documents cut the way ingestion cuts them (``chunk`` is ``chunk_document`` bound to
    the product's chunking)."""
    return [Chunk(d.doc_id, str(d.metadata.get("title", d.doc_id)), text)
            for d in training_set.documents for text in chunk(d)]


def histories(turns: Sequence[Turn]) -> list[tuple[tuple[str, str], ...]]:
    """The (role, text) history before each turn of one conversation."""
    out, messages = [], []
    for turn in turns:
        out.append(tuple(messages))
        messages += [("user", turn.question), ("assistant", turn.answer)]
    return out


def answer_groups(training_set: TrainingSet, chunks: Sequence[Chunk], rng: random.Random, *,
                  group_size: int = 8, lexical_pool: int = 12) -> list[Group]:
    """Two groups per answerable turn (chunk grain and clause grain), one per unanswerable turn."""
    groups = []
    titles = {d.doc_id: str(d.metadata.get("title", d.doc_id)) for d in training_set.documents}
    chunk_texts = [c.passage for c in chunks]
    for conversation in training_set.conversations():
        for turn, history in zip(conversation, histories(conversation)):
            # half the queries carry the writer's rewrite (condense worked), half do not (it failed)
            query = conversation_text(turn.question, turn.rewrite if rng.random() < 0.5 else None, history)
            source = f"{training_set.name}/{turn.conv_id}/{turn.turn}"
            lexical = lexical_scores(turn.rewrite, chunk_texts)
            ranked = sorted(range(len(chunks)), key=lambda i: -lexical[i])[:lexical_pool]
            groups.append(_chunk_group(turn, query, chunks, ranked, rng, group_size, source))
            if turn.answerable:
                groups.append(_clause_group(turn, query, titles, chunks, rng, group_size, source))
    return [g for g in groups if len(g.passages) >= 2]


def _holds(text: str, quotes) -> bool:
    return any(q.text in text for q in quotes)


def _chunk_group(turn: Turn, query: str, chunks: Sequence[Chunk], ranked: Sequence[int], rng: random.Random,
                 size: int, source: str) -> Group:
    positives = [c for c in chunks if _holds(c.text, turn.evidence)]
    ambiguous = {i for i, c in enumerate(chunks) if c not in positives
                 and any(v in c.text for v in turn.must_contain)}
    hard = [i for i, c in enumerate(chunks) if _holds(c.text, turn.negatives) and c not in positives]
    pool = [i for i in ranked if chunks[i] not in positives]
    same_doc = [i for i, c in enumerate(chunks) if c not in positives
                and any(c.doc_id == q.doc_id for q in turn.evidence + turn.negatives)]
    negatives: list[int] = []
    for candidates in (hard, pool, same_doc, list(range(len(chunks)))):
        candidates = [i for i in candidates if i not in ambiguous and i not in negatives]
        rng.shuffle(candidates)
        room = size - (1 if positives else 0) - len(negatives)
        negatives += candidates[:max(room, 0)]
    picked = ([rng.choice(positives)] if positives else []) + [chunks[i] for i in negatives]
    labels = ([1.0] if positives else []) + [0.0] * len(negatives)
    return Group(ANSWER, query, tuple(c.passage for c in picked), tuple(labels), source)


def _clause_group(turn: Turn, query: str, titles: dict[str, str], chunks: Sequence[Chunk], rng: random.Random,
                  size: int, source: str) -> Group:
    positive = rng.choice(turn.evidence)
    negatives = [passage_text(q.text, titles[q.doc_id]) for q in turn.negatives
                 if not any(v in q.text for v in turn.must_contain)]
    # the neighbouring clauses of the answering passage: what the quote must not pick instead
    home = [c for c in chunks if positive.text in c.text]
    if home:
        clauses = [scoring_text(cl, home[0].title) for cl in split_clauses([home[0].text])]
        others = [t for t in clauses if positive.text not in t and not _holds(t, turn.evidence)
                  and not any(v in t for v in turn.must_contain)]
        rng.shuffle(others)
        negatives += others
    negatives = list(dict.fromkeys(negatives))[: size - 1]
    passages = (passage_text(positive.text, titles[positive.doc_id]), *negatives)
    return Group(ANSWER, query, passages, (1.0,) + (0.0,) * len(negatives), source + "/clause")


def scope_groups(training_set: TrainingSet) -> list[Group]:
    """One two-passage item per claim pair for the scope head: label 1 = same subject and scope."""
    titles = {d.doc_id: str(d.metadata.get("title", d.doc_id)) for d in training_set.documents}
    return [Group(SCOPE, passage_text(p.a.text, titles[p.a.doc_id]), (passage_text(p.b.text, titles[p.b.doc_id]),),
                  (1.0 if p.same_scope else 0.0,), f"{training_set.name}/{p.pair_id}")
            for p in training_set.pairs]

