"""Step 2, condense: a follow-up becomes a standalone query; the first turn is left alone.

Three ways, cheapest first: no history in the window means no rewrite and no LLM call; a
Vietnamese "còn X thì sao?" is rewritten by swapping X into the previous standalone question, the
swap the corpus supports best (no LLM call); anything else goes to the condense LLM, whose output
a guard checks (``engines.conversation.rewrite.guard``) before it is trusted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import LLM
from llama_index.core.prompts import PromptTemplate

from engines.conversation import rewrite
from engines.conversation.names import dropped_names
from engines.record import CondenseTrace
from engines.retrieval.hybrid import Retrieval
from engines.steps.base import BaseStep, StepOutput, TurnState
from engines.text import detect_language, dot

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Condensed(StepOutput):
    query: str = ""
    trace: CondenseTrace = field(default_factory=CondenseTrace)

    def apply(self, state: TurnState) -> TurnState:
        return replace(state, query=self.query)

    def record_fields(self) -> dict[str, Any]:
        return {"query": self.query, "condense": self.trace}


class CondenseStep(BaseStep):
    """``window``: messages of history the condenser sees (a session may override it; 0 = never
    rewrite). ``prompt``: one template for every language (None: per language)."""

    name: ClassVar[str] = "condense"

    def __init__(self, llm: LLM, *, window: int = 6, prompt: PromptTemplate | None = None,
                 swap_followups: bool = True, embed_model: Any = None, retrieval: Retrieval | None = None,
                 carry_names: bool = False) -> None:
        if window < 0:
            raise ValueError(f"condense window must be >= 0, got {window}")
        self.llm = llm
        self.window = window
        self.prompt = prompt
        self.swap_followups = swap_followups
        self._embed_model = embed_model
        self._retrieval = retrieval
        self.carry_names = carry_names

    def run(self, state: TurnState) -> Condensed:
        size = self.window if state.options.condense_window is None else state.options.condense_window
        return self.rewrite(state.question, list(state.history), rewrites=state.rewrites, window=size,
                            options_filter=state.options.filter)

    def rewrite(self, question: str, history: list[ChatMessage], *, rewrites: tuple[tuple[str, str], ...] = (),
                window: int | None = None, options_filter: Any = None) -> Condensed:
        """The standalone form of ``question`` after ``history`` (public: evaluation calls it alone).
        ``rewrites``: (question, query) of this session's earlier turns, newest first."""
        recent = rewrite.window(history, self.window if window is None else window)
        if not recent:
            return Condensed(query=question, trace=CondenseTrace(window=0))
        previous = rewrite.previous_query(recent, rewrites)
        swapped = self._swap(question, previous, options_filter)
        if swapped is not None:
            return Condensed(query=swapped, trace=CondenseTrace(window=len(recent), rule="swap"))
        raw = self.llm.predict(rewrite.prompt_for(detect_language(question), self.prompt),
                               question=question, chat_history=rewrite.history_to_text(recent))
        decision = rewrite.guard(question, raw, recent, previous)
        if decision.fallback_reason:
            logger.warning("condense fallback (%s): %r -> %r; using %r",
                           decision.fallback_reason, question, raw, decision.query)
        query, rule = decision.query, None
        if self.carry_names and not decision.fallback_reason:
            if names := dropped_names(question, query, [*rewrite.user_messages(recent), previous]):
                query, rule = f"{query} ({', '.join(names)})", "names"
        trace = CondenseTrace(used_llm=True, window=len(recent), raw_output=raw,
                              fallback_reason=decision.fallback_reason, rule=rule)
        return Condensed(llm_calls=1, query=query, trace=trace)

    def _swap(self, question: str, previous: str, options_filter: Any) -> str | None:
        """"Còn X thì sao?": the previous question with its subject swapped for X, the swap chosen by
        how well the corpus supports each candidate (the 1.5B condenser writes "Cái đó có hợp đồng thời
        vụ không?" here). None = not a swap, or nothing to judge the candidates with."""
        target = rewrite.swap_target(question) if self.swap_followups else None
        if target is None or self._embed_model is None or self._retrieval is None:
            return None
        candidates = rewrite.swap_candidates(previous, target)
        if not candidates:
            return None
        embed = self._embed_model
        support = self._retrieval.corpus_support([embed.get_query_embedding(c.text) for c in candidates],
                                                 options_filter)
        if support is None:
            return None
        target_vector = embed.get_query_embedding(target)
        span_vectors = {span: embed.get_query_embedding(span) for span in {c.span for c in candidates}}
        likeness = [dot(target_vector, span_vectors[c.span]) for c in candidates]
        chosen = candidates[rewrite.pick_swap(support, likeness)]
        logger.info("swap follow-up %r: replaced %r -> %r", question, chosen.span, chosen.text)
        return chosen.text
