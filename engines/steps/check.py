"""Step 7, check: the small model judges, it does not write: do the clauses the answer stands on answer?

* ``graded`` (both answer modes): one call of one token; the model's P(YES), read from the server's
  log-probabilities, is averaged with where the turn's best cosine falls among the corpus's own
  sentences (``engines.answering.answerability``), and a score under the threshold refuses. Chosen on the dev
  splits; measured in docs/answers.md ("A graded check").
* ``yesno`` (extract mode): only an explicit NO (or KHÔNG) refuses. On held-out dev it caught 4 of 11
  unanswerable turns and refused 16 of 73 answerable ones.
* ``select`` (extract mode): the model names the numbered clause that answers, or 0; 9 of 11 for 41 of 73.

All are opt-in (``TURNRAG_ANSWER_CHECK``); the default quotes without a check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.schema import NodeWithScore

from engines.answering.answerability import answerability, corpus_percentile, reply_yes_probability, yes_probability
from engines.answering.clauses import Clause
from engines.answering.extract import compose_answer
from engines.answering.refusal import refusal_message
from engines.steps.answer import Prompted, Quoted, quotes_of, title_of
from engines.steps.base import BaseStep, Draft, StepOutput, TurnState
from engines.steps.gate import Gated

CHECK_NOT_ANSWERED = "check_not_answered"
CHECK_SYSTEM = ("Bạn kiểm tra xem các trích đoạn tài liệu có trả lời câu hỏi hay không. Chỉ trả lời một từ: "
                "YES nếu trích đoạn nêu câu trả lời, NO nếu không.")
CHECK_USER = "Trích đoạn:\n{excerpts}\n\nCâu hỏi: {question}\nTrích đoạn có nêu câu trả lời không? YES hoặc NO:"
_EXPLICIT_NO = re.compile(r"(?iu)(no|không)(?!\w)")


def check_user(question: str, cited: Sequence[tuple[str, str]]) -> str:
    """The checks' user message over ``(clause text, document title)`` pairs."""
    excerpts = "\n".join(f"- {text} ({title})" if title else f"- {text}" for text, title in cited)
    return CHECK_USER.format(excerpts=excerpts, question=question)


def _quoted_citations(chosen: Sequence[tuple[Clause, float]], titles: Sequence[str]) -> list[tuple[str, str]]:
    return [(c.text, titles[c.passage] if c.passage < len(titles) else "") for c, _ in chosen]


def check_prompt(question: str, chosen: Sequence[tuple[Clause, float]], titles: Sequence[str]) -> tuple[str, str]:
    """(system, user) for the yes/no check over exactly the clauses that would be quoted."""
    return CHECK_SYSTEM, check_user(question, _quoted_citations(chosen, titles))


def _check_messages(system: str, user: str) -> list[ChatMessage]:
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=user)]


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
        reply = self.llm.chat(_check_messages(system, user), max_tokens=4)
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
        reply = self.llm.chat(_check_messages(system, user), max_tokens=6)
        text = reply.message.content or ""
        picks = parse_choice(text, len(candidates), self.most)
        if picks == []:
            return Selected(llm_calls=1, answered=False, reply=text)
        chosen = tuple(candidates[i] for i in picks or ())
        return Selected(llm_calls=1, chosen=chosen, reply=text, quoted=quotes_of(chosen, quoted.doc_ids))


# --------------------------------------------------------------------------- a graded check, both answer modes

GRADED_SYSTEM = ("Bạn kiểm tra xem các trích đoạn tài liệu có chứa thông tin trả lời đúng câu hỏi hay không. "
                 "Nếu câu hỏi hỏi về một đối tượng, trường hợp hay chi tiết mà trích đoạn không nhắc tới, trả lời NO. "
                 "Chỉ trả lời một từ: YES hoặc NO.")
#: Alternatives of the first token read from the server (OpenAI's maximum).
TOP_LOGPROBS = 20
#: (node id, clause text) of the clauses closest to a query: ``engines.steps.answer.QuestionFocus``.
ClauseRanker = Callable[[str, Sequence[NodeWithScore]], list[tuple[str, str]]]


@dataclass(frozen=True)
class Graded(Checked):
    """A check's verdict (refuses like the yes/no check) with the numbers behind it."""

    score: float | None = None  # the answerability; None: nothing to judge by, the answer stands
    p_yes: float | None = None
    percentile: float | None = None

    def record_fields(self) -> dict[str, Any]:
        return {"answerability": {"score": self.score, "p_yes": self.p_yes, "percentile": self.percentile,
                                  "reply": self.reply}}


class GradedCheck(BaseStep):
    """Refuse when the answerability (``engines.answering.answerability``) of the clauses the answer stands on is
    under ``min_score``. One call of one output token; in ``generate`` mode it runs before anything is
    written, on the clauses ``ranker`` finds closest to the query (what a quote would have shown)."""

    name: ClassVar[str] = "check"

    def __init__(self, llm: LLM, *, min_score: float, pseudo_scores: Sequence[float] = (),
                 ranker: ClauseRanker | None = None) -> None:
        self.llm = llm
        self.min_score = min_score
        self.pseudo_scores = tuple(sorted(pseudo_scores))
        self.ranker = ranker

    def applies(self, state: TurnState) -> bool:
        if state.draft is None or state.draft.refused:
            return False
        answer = state.output("answer")
        return isinstance(answer, Quoted) or (isinstance(answer, Prompted) and self.ranker is not None)

    def _prompt(self, state: TurnState, query: str) -> str:
        """The yes/no check's user message over the quoted clauses, or over the closest ones in generate mode."""
        answer = state.output("answer")
        if isinstance(answer, Quoted):
            return check_user(query, _quoted_citations(answer.chosen, answer.titles))
        titles = {n.node.node_id: title_of(n) for n in state.nodes}
        focus = self.ranker(query, state.nodes) if self.ranker else []
        return check_user(query, [(text, titles.get(node_id, "")) for node_id, text in focus])

    def run(self, state: TurnState) -> Graded:
        query = state.query or state.question
        reply = self.llm.chat(_check_messages(GRADED_SYSTEM, self._prompt(state, query)), max_tokens=1,
                              logprobs=True, top_logprobs=TOP_LOGPROBS)
        text = reply.message.content or ""
        first = (reply.logprobs or [[]])[0]
        p_yes = yes_probability((lp.token, lp.logprob) for lp in first)
        if p_yes is None:
            p_yes = reply_yes_probability(text)
        gated = state.output("gate")
        cosine = gated.max_raw_scores.get("vector") if isinstance(gated, Gated) else None
        percentile = corpus_percentile(cosine, self.pseudo_scores) if cosine is not None else None
        score = answerability(p_yes, percentile)
        return Graded(llm_calls=1, answered=score is None or score >= self.min_score, score=score, p_yes=p_yes,
                      percentile=percentile, reply=text)
