"""Step 1, route: small talk is answered without retrieval, out-of-scope requests declined.

The router is the session's choice (semantic: one embedding, no LLM call; llm: one call; none:
every turn goes to the documents).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.conversation.rewrite import history_to_text, window
from engines.conversation.router import (
    DIRECT,
    DIRECT_REPLY_PROMPT,
    DOCS,
    OUT_OF_SCOPE,
    out_of_scope_reply,
)
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState

#: Messages of history the router sees, and the direct reply's prompt.
ROUTER_WINDOW = 2
DIRECT_REPLY_WINDOW = 4


@dataclass(frozen=True)
class Routed(StepOutput):
    route: str = DOCS
    scores: dict[str, float] = field(default_factory=dict)

    def apply(self, state: TurnState) -> TurnState:
        if self.route == OUT_OF_SCOPE:
            return replace(state, draft=Draft(text=out_of_scope_reply(state.language), refusal_reason="out_of_scope"))
        if self.route == DIRECT:
            messages = (ChatMessage(role=MessageRole.SYSTEM, content=DIRECT_REPLY_PROMPT),
                        *window(list(state.history), DIRECT_REPLY_WINDOW),
                        ChatMessage(role=MessageRole.USER, content=state.question))
            return replace(state, draft=Draft(messages=messages))
        return state

    def record_fields(self) -> dict[str, Any]:
        return {"route": self.route, "route_scores": dict(self.scores)}


class RouteStep(BaseStep):
    name: ClassVar[str] = "route"

    def applies(self, state: TurnState) -> bool:
        return state.draft is None and state.options.router is not None

    def run(self, state: TurnState) -> Routed:
        history = history_to_text(window(list(state.history), ROUTER_WINDOW))
        decision = state.options.router.route(state.question, history)
        return Routed(llm_calls=decision.llm_calls, route=decision.route, scores=dict(decision.scores))
