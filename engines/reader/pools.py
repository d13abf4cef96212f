"""The retriever's own confusions as training data: each training turn's fused pool, labelled.

Hard negatives written by hand are not the ones the product meets; the fused top 20 of the product's
own retrieval on the training corpora are. A pooled passage is labelled from the writer's evidence:
``answers`` (it holds an evidence quote, or every expected value inside an evidence document),
``tempting`` (it holds one of the writer's tempting quotes or comes from a document the turn is
about), ``unrelated`` (anything else), or ``ambiguous`` (an expected value without the evidence:
left out of training, since nobody said whether it answers). Pure functions; the pools are mined
by ``app.mine_reader_pools``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engines.reader.examples import TrainingSet, Turn
from engines.reader.inputs import conversation_text
from engines.reader.pairs import ANSWER, Group, histories

ANSWERS, TEMPTING, UNRELATED, AMBIGUOUS = "answers", "tempting", "unrelated", "ambiguous"


@dataclass(frozen=True)
class Pooled:
    doc_id: str
    passage: str  # as the rerank step reads it: title, then the chunk
    label: str


@dataclass(frozen=True)
class TurnPool:
    conv_id: str
    turn: int
    query: str  # what was retrieved with (the writer's rewrite)
    passages: tuple[Pooled, ...]  # fused order


def label_passage(turn: Turn, doc_id: str, text: str) -> str:
    """One pooled passage's label from the turn's evidence and tempting quotes."""
    if any(q.text in text for q in turn.evidence):
        return ANSWERS
    evidence_docs = {q.doc_id for q in turn.evidence}
    if turn.must_contain and doc_id in evidence_docs and all(v in text for v in turn.must_contain):
        return ANSWERS  # the quote was cut by a chunk boundary, the values are all here
    if any(v in text for v in turn.must_contain):
        return AMBIGUOUS
    if any(q.text in text for q in turn.negatives) or doc_id in evidence_docs | {q.doc_id for q in turn.negatives}:
        return TEMPTING
    return UNRELATED


def label_pool(turn: Turn, pool: Iterable[tuple[str, str]]) -> TurnPool:
    """``pool``: (doc_id, passage) in fused order."""
    return TurnPool(turn.conv_id, turn.turn, turn.rewrite,
                    tuple(Pooled(d, p, label_passage(turn, d, p)) for d, p in pool))


def write_pools(path: Path, pools: Sequence[TurnPool]) -> None:
    """Written whole to a temporary file and renamed: a killed run leaves the old file or the new one."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for p in pools:
            f.write(json.dumps({"conv_id": p.conv_id, "turn": p.turn, "query": p.query,
                                "passages": [{"doc_id": x.doc_id, "label": x.label, "passage": x.passage}
                                             for x in p.passages]}, ensure_ascii=False) + "\n")
    tmp.replace(path)


def read_pools(path: Path) -> dict[tuple[str, int], TurnPool]:
    """The pools of one set by (conversation, turn); empty when the set has none mined."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        out[(raw["conv_id"], int(raw["turn"]))] = TurnPool(
            raw["conv_id"], int(raw["turn"]), raw["query"],
            tuple(Pooled(x["doc_id"], x["passage"], x["label"]) for x in raw["passages"]))
    return out


def pool_groups(training_set: TrainingSet, pools: dict[tuple[str, int], TurnPool], rng: random.Random, *,
                group_size: int = 8, hardest: int = 5) -> list[Group]:
    """One group per mined turn: an answering passage of its pool against the pool's best-ranked
    non-answers (``hardest`` of them, the rest drawn from lower in the pool); an unanswerable turn's
    group is all negatives (pointwise loss only). Turns whose pool holds no answer are skipped: the
    chunk-grain groups of :mod:`engines.reader.pairs` cover them."""
    groups = []
    for conversation in training_set.conversations():
        for turn, history in zip(conversation, histories(conversation)):
            pool = pools.get((turn.conv_id, turn.turn))
            if pool is None:
                continue
            positives = [p.passage for p in pool.passages if p.label == ANSWERS]
            negatives = [p.passage for p in pool.passages if p.label in (TEMPTING, UNRELATED)]
            if turn.answerable and not positives:
                continue
            picked = negatives[:hardest]
            rest = negatives[hardest:]
            rng.shuffle(rest)
            room = group_size - (1 if positives else 0) - len(picked)
            picked += rest[:max(room, 0)]
            query = conversation_text(turn.question, turn.rewrite if rng.random() < 0.5 else None, history)
            head = [rng.choice(positives)] if positives else []
            passages = tuple(head + picked)
            if len(passages) >= 2:
                groups.append(Group(ANSWER, query, passages, (1.0,) * len(head) + (0.0,) * len(picked),
                                    f"{training_set.name}/{turn.conv_id}/{turn.turn}/pool"))
    return groups
