"""Step 7, check: the small model judges, it does not write: do the quoted clauses answer?

One short call (``max_tokens=4``); only an explicit NO (or KHÔNG) refuses, anything else keeps the
quote, never a silent refusal. Measured on the bundled eval set (77 rows past the refusal gate,
packaged 1.5B model): the Vietnamese wording says NO to 8 of 10 unanswerable questions and to 6 of 67
answerable ones; the same question asked in English caught 5 of 10 (2 of 67 false). On the
held-out dev split (other organisations, other domains) it caught 4 of 11 unanswerable turns and
refused 16 of 73 answerable ones, and the selector 9 of 11 for 41 of 73: both are opt-in
(``TURNRAG_ANSWER_CHECK``), the default quotes without a check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from engines.extractive import Clause, compose_answer
from engines.refusal import refusal_message
from engines.steps.answer import Quoted, quotes_of
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState

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
        # the standalone question (a condense fallback composes one too): "cái đó" alone means nothing here
        system, user = check_prompt(state.query or state.question, quoted.chosen, quoted.titles)
        reply = self.llm.chat([ChatMessage(role=MessageRole.SYSTEM, content=system),
                               ChatMessage(role=MessageRole.USER, content=user)], max_tokens=4)
        text = reply.message.content or ""
        return Checked(llm_calls=1, answered=not check_says_no(text), reply=text)


# --------------------------------------------------------------------------- choosing among numbered clauses

SELECT_SYSTEM = ("Bạn chọn trích đoạn tài liệu trả lời câu hỏi. Chỉ trả lời bằng số thứ tự của trích đoạn nêu câu "
                 "trả lời (hai số cách nhau bằng dấu phẩy nếu câu hỏi cần hai ý), hoặc 0 nếu không trích đoạn nào nêu "
                 "câu trả lời.")
SELECT_USER = "Câu hỏi: {question}\n\nTrích đoạn:\n{numbered}\n\nSố thứ tự:"


def select_prompt(question: str, candidates: Sequence[tuple[Clause, float]], titles: Sequence[str]) -> tuple[str, str]:
    """(system, user): the candidate clauses numbered from 1, each with its document's title."""
    def cited(clause: Clause) -> str:
        title = titles[clause.passage] if clause.passage < len(titles) else ""
        return f"{clause.text} ({title})" if title else clause.text

    numbered = "\n".join(f"{i}. {cited(clause)}" for i, (clause, _) in enumerate(candidates, start=1))
    return SELECT_SYSTEM, SELECT_USER.format(question=question, numbered=numbered)


def parse_choice(reply: str, n: int, most: int = 2) -> list[int] | None:
    """0-based picks from a reply like "2" or "1, 3"; [] for an explicit 0 (none answers); None when the
    reply names no candidate (then the quote stands: never a silent refusal)."""
    numbers = [int(x) for x in re.findall(r"\d+", reply or "")]
    if not numbers:
        return None
    if numbers[0] == 0:
        return []
    picks = list(dict.fromkeys(k - 1 for k in numbers if 1 <= k <= n))
    return picks[:most] or None


@dataclass(frozen=True)
class Selected(StepOutput):
    answered: bool = True
    chosen: tuple[tuple[Clause, float], ...] = ()  # empty: the quote stands as it was
    reply: str = ""
    quoted: tuple[dict[str, Any], ...] = ()  # what the record shows of the chosen clauses

    def apply(self, state: TurnState) -> TurnState:
        if not self.answered:
            return replace(state, draft=Draft(text=refusal_message(state.language), refusal_reason=CHECK_NOT_ANSWERED))
        quoted = state.output("answer")
        if not self.chosen or not isinstance(quoted, Quoted):
            return state
        text = compose_answer(self._in_reading_order(), quoted.titles, state.language)
        return replace(state, draft=Draft(text=text, suffix=state.suffix))

    def _in_reading_order(self) -> list[tuple[Clause, float]]:
        return sorted(self.chosen, key=lambda item: (item[0].passage, item[0].position))

    def record_fields(self) -> dict[str, Any]:
        return {"quoted": [dict(q) for q in self.quoted]} if self.quoted else {}


class SelectCheck(BaseStep):
    """The small model as a selector: it reads the best candidate clauses, numbered, and names the
    one (or two) that answer, or 0 for none. One short call, like the yes/no check, that both
    refuses and narrows the quote to what answers."""

    name: ClassVar[str] = "check"

    def __init__(self, llm: LLM, *, candidates: int = 6, most: int = 2) -> None:
        self.llm = llm
        self.candidates = candidates
        self.most = most

    def applies(self, state: TurnState) -> bool:
        return state.draft is not None and not state.draft.refused and isinstance(state.output("answer"), Quoted)

    def run(self, state: TurnState) -> Selected:
        quoted = state.output("answer")
        if not isinstance(quoted, Quoted):
            raise TypeError("the clause selector needs a quoted answer (answer_mode 'extract') before it")
        candidates = quoted.candidates[: self.candidates]
        system, user = select_prompt(state.query or state.question, candidates, quoted.titles)
        reply = self.llm.chat([ChatMessage(role=MessageRole.SYSTEM, content=system),
                               ChatMessage(role=MessageRole.USER, content=user)], max_tokens=6)
        text = reply.message.content or ""
        picks = parse_choice(text, len(candidates), self.most)
        if picks == []:
            return Selected(llm_calls=1, answered=False, reply=text)
        chosen = tuple(candidates[i] for i in picks or ())
        return Selected(llm_calls=1, chosen=chosen, reply=text, quoted=quotes_of(chosen, quoted.doc_ids))
