"""Step 4b, rerank: a cross-encoder reads the standalone query beside each fused candidate and keeps
the best ``top_n``, in its order.

Fusion ranks by where each list put a chunk, never by reading it; on the unseen Vietnamese dev sets the
chunk holding the answer was among the fused top 20 for 182 of 191 turns but in the top 5 for only 166
(docs/answers.md). With a reranker configured, retrieval fuses a wider pool (``rerank_pool``) and this
step cuts it to ``top_k``. The gate has already judged the first pass on its raw scores, so a rerank
never turns a refusal into an answer. Off unless a cross-encoder is named (none is packaged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

from llama_index.core.schema import MetadataMode, NodeWithScore

from engines.answering.refusal import not_said
from engines.answering.unknown_terms import UNKNOWN_TERMS, as_written
from engines.reader.inputs import conversation_text
from engines.reader.inputs import passage_text as titled
from engines.record import candidate_of
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState


class PairScorer(Protocol):
    """Scores passages against one query, higher is better (``engines.models.cross_encoder``, the
    packaged reader ``engines.reader.model.Reader``). A scorer whose ``reads_conversation`` is true
    is given the conversation (``engines.reader.inputs.conversation_text``) instead of the rewrite
    alone, so a follow-up is judged in context even when the rewrite failed."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


def history_pairs(history: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    """Chat messages as (role, text) pairs, the shape the reader's inputs take."""
    return tuple((str(getattr(m.role, "value", m.role)), str(m.content or "")) for m in history)


def scorer_query(scorer: Any, state: TurnState) -> str:
    """What the scorer reads as the question: the conversation for a reader, else the rewrite."""
    if getattr(scorer, "reads_conversation", False):
        return conversation_text(state.question, state.query, history_pairs(state.history))
    return state.query or state.question


def passage_text(nws: NodeWithScore) -> str:
    """What the cross-encoder reads of a chunk: its document's title, then its text."""
    return titled(nws.node.get_content(metadata_mode=MetadataMode.NONE),
                        str(nws.node.metadata.get("title", "") or ""))


def rerank_order(items: Sequence[Any], scores: Sequence[float], top_n: int) -> tuple[int, ...]:
    """Indexes of the ``top_n`` best-scored items (nodes or passages), best first; a tie keeps the fused order."""
    if len(scores) != len(items):
        raise ValueError(f"{len(scores)} scores for {len(items)} items")
    return tuple(sorted(range(len(items)), key=lambda i: (-scores[i], i))[:top_n])


#: Rank offset of the reciprocal-rank blend of the fused and the reranker's orders (chosen on dev, docs/reader.md).
BLEND_K = 10


def blended_order(scores: Sequence[float], fused_weight: float, top_n: int, k: int = BLEND_K) -> tuple[int, ...]:
    """Indexes of the ``top_n`` best items by ``fused_weight/(k + fused rank) + 1/(k + reranker rank)``
    (items arrive in fused order); ``fused_weight`` 0 is the reranker's order alone. A reranker that
    is right where fusion is unsure, and unsure where fusion is right, helps only blended."""
    by_reader = rerank_order(scores, scores, len(scores))
    reader_rank = {i: r for r, i in enumerate(by_reader)}
    blended = [fused_weight / (k + i) + 1.0 / (k + reader_rank[i]) for i in range(len(scores))]
    return tuple(sorted(range(len(scores)), key=lambda i: (-blended[i], i))[:top_n])


#: Why a turn was refused when the reader found no passage that answers.
READER_NOT_ANSWERED = "reader_not_answered"


@dataclass(frozen=True)
class Reranked(StepOutput):
    nodes: tuple[NodeWithScore, ...] = ()
    scores: tuple[float, ...] = ()  # the cross-encoder's, one per kept node
    pool: int = 0  # how many fused candidates it read
    refused: bool = False  # the best score is under the scorer's bar: no passage answers
    unknown: tuple[str, ...] = ()  # refused for these words no document uses, the reader unsure too

    def apply(self, state: TurnState) -> TurnState:
        if self.unknown:
            terms = as_written(state.query or state.question, self.unknown)
            return replace(state, nodes=self.nodes, draft=Draft(text=not_said(state.language, self.nodes, terms=terms),
                                                                refusal_reason=UNKNOWN_TERMS))
        if self.refused:
            return replace(state, nodes=self.nodes, draft=Draft(text=not_said(state.language, self.nodes),
                                                                refusal_reason=READER_NOT_ANSWERED))
        return replace(state, nodes=self.nodes)

    def record_fields(self) -> dict[str, Any]:
        return {"candidates": [replace(candidate_of(n), rerank_score=round(s, 6))
                               for n, s in zip(self.nodes, self.scores)]}


class RerankStep(BaseStep):
    name: ClassVar[str] = "rerank"

    def __init__(self, scorer: PairScorer, *, top_n: int, min_score: float | None = None,
                 fused_weight: float = 0.0, unknown_terms_bar: float | None = None) -> None:
        if top_n < 1:
            raise ValueError(f"top_n must be at least 1, got {top_n}")
        self.scorer = scorer
        self.top_n = top_n
        self.min_score = min_score  # refuse when no passage scores this much (a calibrated reader's P(answers))
        self.fused_weight = fused_weight  # > 0: blend the fused order back in (blended_order)
        #: refuse a question the gate found naming words no document uses when no passage scores this much
        self.unknown_terms_bar = unknown_terms_bar

    def run(self, state: TurnState) -> Reranked:
        nodes = state.nodes
        scores = self.scorer.score(scorer_query(self.scorer, state), [passage_text(n) for n in nodes])
        keep = (blended_order(scores, self.fused_weight, self.top_n) if self.fused_weight > 0
                else rerank_order(nodes, scores, self.top_n))
        refused = self.min_score is not None and bool(scores) and max(scores) < self.min_score
        unknown = tuple(getattr(state.output("gate"), "unknown", ()) or ())
        unsure = self.unknown_terms_bar is not None and bool(scores) and max(scores) < self.unknown_terms_bar
        return Reranked(nodes=tuple(nodes[i] for i in keep), scores=tuple(scores[i] for i in keep),
                        pool=len(nodes), refused=refused, unknown=unknown if unsure else ())
