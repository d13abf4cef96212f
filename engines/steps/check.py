"""Step 7, check: the small model judges, it does not write: do the quoted clauses answer?

One short call (``max_tokens=4``); only an explicit NO (or KHÔNG) refuses, anything else keeps the
quote, never a silent refusal. Measured on the bundled eval set (77 rows past the refusal gate,
packaged 1.5B model): the Vietnamese wording says NO to 8 of 10 unanswerable questions and to 6 of 67
answerable ones; the same question asked in English caught 5 of 10 (2 of 67 false).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from engines.extractive import Clause
from engines.refusal import refusal_message
from engines.steps.answer import Quoted
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState
from engines.steps.condense import Condensed

CHECK_NOT_ANSWERED = "check_not_answered"
CHECK_SYSTEM = ("Bạn kiểm tra xem các trích đoạn tài liệu có trả lời câu hỏi hay không. Chỉ trả lời một từ: "
                "YES nếu trích đoạn nêu câu trả lời, NO nếu không.")
CHECK_USER = "Trích đoạn:\n{excerpts}\n\nCâu hỏi: {question}\nTrích đoạn có nêu câu trả lời không? YES hoặc NO:"
_EXPLICIT_NO = re.compile(r"(?iu)(no|không)(?!\w)")


def check_prompt(question: str, chosen: Sequence[tuple[Clause, float]], titles: Sequence[str]) -> tuple[str, str]:
    """(system, user) for the yes/no check over exactly the clauses that would be quoted."""
    def cited(clause: Clause) -> str:
        title = titles[clause.passage] if clause.passage < len(titles) else ""
        return f"- {clause.text} ({title})" if title else f"- {clause.text}"

    excerpts = "\n".join(cited(clause) for clause, _ in chosen)
    return CHECK_SYSTEM, CHECK_USER.format(excerpts=excerpts, question=question)


def check_says_no(reply: str) -> bool:
    """True only for an explicit NO (or KHÔNG)."""
    return bool(_EXPLICIT_NO.match((reply or "").strip().lstrip("*_`\"'")))


@dataclass(frozen=True)
class Checked(StepOutput):
    answered: bool = True
    reply: str = ""

    def apply(self, state: TurnState) -> TurnState:
        if self.answered:
            return state
        return replace(state, draft=Draft(text=refusal_message(state.language), refusal_reason=CHECK_NOT_ANSWERED))

    def record_fields(self) -> dict[str, Any]:
        return {}


class YesNoCheck(BaseStep):
    name: ClassVar[str] = "check"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def applies(self, state: TurnState) -> bool:
        return state.draft is not None and not state.draft.refused and isinstance(state.output("answer"), Quoted)

    def run(self, state: TurnState) -> Checked:
        quoted = state.output("answer")
        if not isinstance(quoted, Quoted):
            raise TypeError("the yes/no check needs a quoted answer (answer_mode 'extract') before it")
        condensed = state.output("condense")
        # A fallback query strings earlier questions together; the clauses were chosen with all of it,
        # but only the user's own question is asked.
        fell_back = isinstance(condensed, Condensed) and condensed.trace.fallback_reason
        asked = state.question if fell_back else (state.query or state.question)
        system, user = check_prompt(asked, quoted.chosen, quoted.titles)
        reply = self.llm.chat([ChatMessage(role=MessageRole.SYSTEM, content=system),
                               ChatMessage(role=MessageRole.USER, content=user)], max_tokens=4)
        text = reply.message.content or ""
        return Checked(llm_calls=1, answered=not check_says_no(text), reply=text)
