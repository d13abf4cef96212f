"""Step 6, answer: quote the clauses that answer (``extract``), or prepare the grounded prompt the
answer LLM will write from (``generate``; the writing itself is streamed by the pipeline).

Quoting is the default with the packaged 1.5B model, which reads the right passages and still
paraphrases them wrongly; generating is the default with OpenAI-compatible servers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore

from engines.answering.asks import asked_for
from engines.answering.clauses import Clause
from engines.answering.extract import (
    ClauseVectorCache,
    ExtractConfig,
    compose_answer,
    rank_clauses,
    select_clauses,
)
from engines.answering.generate import build_messages
from engines.answering.refusal import refusal_message
from engines.reader.inputs import passage_text
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState
from engines.steps.condense import Condensed
from engines.steps.rerank import scorer_query

NO_QUOTABLE_CLAUSE = "no_quotable_clause"


def title_of(node: NodeWithScore) -> str:
    meta = node.node.metadata
    return str(meta.get("title") or meta.get("doc_id") or "")


def quotes_of(chosen: Sequence[tuple[Clause, float]], doc_ids: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """What the turn record shows of each quoted clause."""
    return tuple({"text": c.text, "doc_id": doc_ids[c.passage] if c.passage < len(doc_ids) else "",
                  "score": round(score, 4)} for c, score in chosen)


def composed_by_fallback(state: TurnState) -> bool:
    """Whether the turn's query was composed without the LLM (a condense fallback) from the question."""
    condensed = state.output("condense")
    return (isinstance(condensed, Condensed) and condensed.trace.fallback_reason is not None
            and bool(state.query) and state.query != state.question)


def clause_similarity(embed_model: Any, vectors: ClauseVectorCache) -> Callable[[str, list[str]], list[float]]:
    """Cosine of a query with clause texts, the clause vectors cached (one batch for the new ones)."""
    def similarity(query: str, texts: list[str]) -> list[float]:
        query_vector = np.asarray(embed_model.get_query_embedding(query), dtype=np.float64)
        return (vectors.vectors(texts, embed_model.get_text_embedding_batch) @ query_vector).tolist() if texts else []
    return similarity


class QuestionFocus:
    """The ``k`` clauses of the nodes closest to a query, ranked as :class:`QuoteAnswer` ranks them (same
    scoring, same vector cache): what the conflict check calls the question's focus."""

    def __init__(self, embed_model: Any, *, k: int, config: ExtractConfig = ExtractConfig(),
                 clause_vectors: ClauseVectorCache | None = None) -> None:
        if k < 1:
            raise ValueError(f"focus clauses must be >= 1, got {k}")
        self.k = k
        self.config = config
        vectors = clause_vectors if clause_vectors is not None else ClauseVectorCache()  # an empty cache is falsy
        self._similarity = clause_similarity(embed_model, vectors)

    def __call__(self, query: str, nodes: Sequence[NodeWithScore]) -> list[tuple[str, str]]:
        passages = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        clauses, scores = rank_clauses(query, passages, [title_of(n) for n in nodes], self._similarity, self.config)
        best = sorted(range(len(clauses)), key=lambda i: -scores[i])[: self.k]
        return [(nodes[clauses[i].passage].node.node_id, clauses[i].text) for i in best]


@dataclass(frozen=True)
class Quoted(StepOutput):
    """The quoted answer: the chosen clauses with their scores, and the titles they are cited with."""

    text: str = ""
    chosen: tuple[tuple[Clause, float], ...] = ()
    titles: tuple[str, ...] = ()
    quoted: tuple[dict[str, Any], ...] = ()  # what the record shows: clause, doc_id, score
    candidates: tuple[tuple[Clause, float], ...] = ()  # the best clauses, best first (a check may choose)
    doc_ids: tuple[str, ...] = ()  # per passage, for citing what a later step chooses

    def apply(self, state: TurnState) -> TurnState:
        if not self.text:
            return replace(state, draft=Draft(text=refusal_message(state.language), refusal_reason=NO_QUOTABLE_CLAUSE))
        return replace(state, draft=Draft(text=self.text, suffix=state.suffix))

    def record_fields(self) -> dict[str, Any]:
        return {"answer_mode": "extract", "quoted": [dict(q) for q in self.quoted]}


class QuoteAnswer(BaseStep):
    """Quote the clauses closest to the standalone query: one batched embedding call for the
    clauses not seen before (``clause_vectors`` is shared by the pipeline's sessions)."""

    name: ClassVar[str] = "answer"
    mode: ClassVar[str] = "extract"

    def __init__(self, embed_model: Any, *, config: ExtractConfig = ExtractConfig(),
                 clause_vectors: ClauseVectorCache | None = None, reader: Any = None, reader_weight: float = 0.0,
                 reader_candidates: int = 12) -> None:
        if embed_model is None:
            raise ValueError("answer_mode 'extract' needs the embedding model to score clauses")
        self.config = config
        self.clause_vectors = clause_vectors if clause_vectors is not None else ClauseVectorCache()
        self._similarity = clause_similarity(embed_model, self.clause_vectors)
        #: A reader (``engines.reader.model.Reader``) that reads the conversation beside each of the
        #: ``reader_candidates`` best clauses; its P(answers) × ``reader_weight`` is added to their scores.
        self.reader = reader if reader_weight > 0 else None
        self.reader_weight, self.reader_candidates = reader_weight, reader_candidates

    def run(self, state: TurnState) -> Quoted:
        nodes = state.nodes
        passages = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        titles = tuple(title_of(n) for n in nodes)
        query = state.query or state.question
        words = state.question if self.config.fallback_words_from_message and composed_by_fallback(state) else None
        clauses, scores = rank_clauses(query, passages, titles, self._similarity, self.config, words=words)
        if self.reader is not None and clauses:
            scores = self._read(state, clauses, scores, titles)
        chosen = select_clauses(clauses, scores, self.config, asked_for(words or query))
        if self.reader is not None:
            chosen = lead_with_best(chosen)
        ranked = sorted(zip(clauses, scores), key=lambda item: -item[1])[: self.config.candidates]
        doc_ids = tuple(str(n.node.metadata.get("doc_id", "")) for n in nodes)
        return Quoted(text=compose_answer(chosen, titles, state.language), chosen=tuple(chosen), titles=titles,
                      quoted=quotes_of(chosen, doc_ids), candidates=tuple(ranked), doc_ids=doc_ids)


    def _read(self, state: TurnState, clauses: Sequence[Clause], scores: Sequence[float],
              titles: Sequence[str]) -> list[float]:
        """The scores with the reader's judgement of the best candidates added (a new list)."""
        best = sorted(range(len(clauses)), key=lambda i: -scores[i])[: self.reader_candidates]
        texts = [passage_text(clauses[i].text, titles[clauses[i].passage] if clauses[i].passage < len(titles) else "")
                 for i in best]
        judged = self.reader.score(scorer_query(self.reader, state), texts)
        out = list(scores)
        for i, p in zip(best, judged):
            out[i] += self.reader_weight * p
        return out


def lead_with_best(chosen: Sequence[tuple[Clause, float]]) -> list[tuple[Clause, float]]:
    """The best-scored clause first (what was asked), the others after it in reading order."""
    if not chosen:
        return []
    best = max(range(len(chosen)), key=lambda i: chosen[i][1])
    return [chosen[best], *(c for i, c in enumerate(chosen) if i != best)]


@dataclass(frozen=True)
class Prompted(StepOutput):
    """The grounded prompt for the answer LLM."""

    messages: tuple[Any, ...] = ()

    def apply(self, state: TurnState) -> TurnState:
        return replace(state, draft=Draft(messages=self.messages, suffix=state.suffix))

    def record_fields(self) -> dict[str, Any]:
        return {"answer_mode": "generate", "prompt_chars": sum(len(m.content or "") for m in self.messages)}


class GenerateAnswer(BaseStep):
    name: ClassVar[str] = "answer"
    mode: ClassVar[str] = "generate"

    def __init__(self, *, max_context_chars: int = 3500) -> None:
        self.max_context_chars = max_context_chars

    def run(self, state: TurnState) -> Prompted:
        messages = build_messages(state.question, state.query or state.question, list(state.nodes), state.language,
                                  list(state.notes), self.max_context_chars)
        return Prompted(messages=tuple(messages))
