"""Each step alone: a hand-made TurnState in, a frozen output out, the state replaced, never edited."""

from __future__ import annotations

import dataclasses
import math

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from engines.answering.refusal import REFUSALS, RelevanceGate
from engines.conversation.router import DIRECT, OUT_OF_SCOPE, RouteDecision
from engines.models.fakes import ScriptedLLM
from engines.retrieval.fusion import FusedNode
from engines.steps.answer import GenerateAnswer, Quoted
from engines.steps.base import Draft, TurnOptions, TurnState
from engines.steps.check import YesNoCheck
from engines.steps.gate import GateStep
from engines.steps.route import RouteStep


def _node(node_id: str, text: str, vector: float) -> FusedNode:
    return FusedNode(node=TextNode(id_=node_id, text=text, metadata={"doc_id": node_id, "title": node_id}),
                     score=0.03, raw_scores={"vector": vector})


def test_gate_refuses_on_the_first_pass_raw_scores_and_keeps_the_input_state() -> None:
    weak, strong = _node("a", "x", 0.2), _node("b", "y", 0.9)
    state = TurnState(question="Giá vàng hôm nay?", language="vi", nodes=(weak, strong), first_pass=(weak,))
    out = GateStep(RelevanceGate(0.5)).run(state)
    assert dataclasses.is_dataclass(out) and out.__dataclass_params__.frozen
    assert not out.relevant and out.max_raw_scores == {"vector": 0.2} and out.relevant_ids == {"b"}
    after = state.with_output("gate", out)
    assert after.draft == Draft(text=REFUSALS["vi"], refusal_reason="no_relevant_documents")
    assert state.draft is None and state.outputs == ()  # the input state is untouched
    assert after.output("gate") is out


def test_the_gate_bar_is_lower_for_english_questions_by_the_embedders_offset() -> None:
    """e5-small scores English questions lower than Vietnamese ones that its passages answer as well."""
    node = _node("a", "x", 0.80)
    english = TurnState(question="Is the interpreter free?", language="en", nodes=(node,), first_pass=(node,))
    vietnamese = dataclasses.replace(english, question="Phiên dịch có miễn phí không?", language="vi")
    gate = GateStep(RelevanceGate(0.83, english_offset=0.04))
    assert gate.run(english).relevant and not gate.run(vietnamese).relevant
    assert not GateStep(RelevanceGate(0.83)).run(english).relevant  # no offset: one bar for both


class FixedRouter:
    def __init__(self, route: str) -> None:
        self._route = route

    def route(self, question: str, history: str = "") -> RouteDecision:
        return RouteDecision(self._route, 0.99, {self._route: 0.99})


def test_route_step_applies_only_with_a_router_and_decides_the_answer_early() -> None:
    step = RouteStep()
    assert not step.applies(TurnState(question="Xin chào", language="vi"))
    state = TurnState(question="Xin chào", language="vi", options=TurnOptions(router=FixedRouter(DIRECT)))
    direct = state.with_output("route", step.run(state))
    assert direct.draft.needs_llm and direct.draft.messages[-1].content == "Xin chào"
    declined = state.with_output("route", RouteStep().run(
        dataclasses.replace(state, options=TurnOptions(router=FixedRouter(OUT_OF_SCOPE)))))
    assert declined.draft.refused and declined.draft.refusal_reason == "out_of_scope"


def test_check_runs_only_after_a_quote_and_refuses_on_an_explicit_no() -> None:
    llm = ScriptedLLM(["NO"])
    check = YesNoCheck(llm)
    prompted = TurnState(question="q", language="vi", draft=Draft(messages=()))
    assert not check.applies(prompted)  # generate mode: nothing quoted to judge
    quoted = TurnState(question="Thời vụ nghỉ mấy ngày?", language="vi").with_output("answer", Quoted(text="Theo tài liệu: ..."))
    assert check.applies(quoted)
    out = check.run(quoted)
    assert out.llm_calls == 1 and not out.answered and llm.calls == 1
    assert quoted.with_output("check", out).draft.refusal_reason == "check_not_answered"


def test_generate_answer_builds_the_grounded_prompt_with_the_conflict_notes() -> None:
    state = TurnState(question="Hạn mức?", language="vi", query="Hạn mức chuyển tiền?",
                      nodes=(_node("limits", "Hạn mức 500 triệu đồng/ngày.", 0.9),), notes=("The sources disagree.",),
                      suffix="\n⚠ note")
    out = GenerateAnswer(max_context_chars=1000).run(state)
    after = state.with_output("answer", out)
    user = after.draft.messages[-1].content
    assert "Hạn mức 500 triệu" in user and "The sources disagree." in user and "Hạn mức chuyển tiền?" in user
    assert after.draft.suffix == "\n⚠ note" and out.record_fields()["answer_mode"] == "generate"


def test_outputs_are_frozen() -> None:
    out = Quoted(text="t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.text = "changed"  # type: ignore[misc]
    assert isinstance(_node("a", "x", 0.1), NodeWithScore)


def test_selector_quotes_the_clause_the_model_names_or_refuses_on_zero() -> None:
    from engines.answering.clauses import Clause
    from engines.steps.check import SelectCheck, parse_choice

    assert parse_choice("2", 4) == [1] and parse_choice("1, 3", 4) == [0, 2] and parse_choice("0", 4) == []
    assert parse_choice("I think", 4) is None and parse_choice("9", 4) is None  # names nothing: the quote stands
    clauses = (Clause("Thâm niên 5 năm được cộng thêm 1 ngày.", 0, 0), Clause("Mỗi năm được nghỉ 12 ngày.", 0, 1))
    quoted = Quoted(text="Theo tài liệu:\n- both", chosen=tuple((c, 0.5) for c in clauses), titles=("Nghỉ phép",),
                    candidates=((clauses[0], 0.6), (clauses[1], 0.5)), doc_ids=("leave",))
    state = TurnState(question="Được nghỉ bao nhiêu ngày?", language="vi").with_output("answer", quoted)
    llm = ScriptedLLM(["2"])
    out = SelectCheck(llm).run(state)
    after = state.with_output("check", out)
    assert after.draft.text == "Theo tài liệu:\n- Mỗi năm được nghỉ 12 ngày. (Nghỉ phép)"
    assert out.record_fields()["quoted"][0]["doc_id"] == "leave" and "1. Thâm niên" in llm.prompts[0]
    refused = state.with_output("check", SelectCheck(ScriptedLLM(["0"])).run(state))
    assert refused.draft.refusal_reason == "check_not_answered"


def test_the_conflict_focus_ranks_as_the_quote_does_and_leaves_it_nothing_to_embed() -> None:
    from engines.answering.extract import ClauseVectorCache
    from engines.models.fakes import HashEmbedding
    from engines.steps.answer import QuestionFocus, QuoteAnswer

    class Counting(HashEmbedding):
        embedded: int = 0

        def _get_text_embeddings(self, texts):
            self.embedded += len(texts)
            return super()._get_text_embeddings(texts)

    embed, shared = Counting(), ClauseVectorCache()
    nodes = (_node("fees", "Phí chuyển đổi gói là 30.000 đồng mỗi lần. Gói X cho 2 GB mỗi ngày.", 0.9),
             _node("hours", "Cửa hàng mở cửa từ 8 giờ đến 21 giờ. Tổng đài hỗ trợ 24/7 mọi ngày.", 0.8))
    query = "Phí chuyển đổi gói là bao nhiêu?"
    focus = QuestionFocus(embed, k=2, clause_vectors=shared)(query, list(nodes))
    assert focus[0] == ("fees", "Phí chuyển đổi gói là 30.000 đồng mỗi lần.") and len(focus) == 2
    embedded = embed.embedded
    quoted = QuoteAnswer(embed, clause_vectors=shared).run(TurnState(question=query, language="vi", nodes=nodes))
    assert embed.embedded == embedded  # every clause vector came from the cache the focus filled
    assert quoted.candidates[0][0].text == focus[0][1]  # same ranking


def test_after_a_condense_fallback_the_quote_matches_the_follow_ups_own_words() -> None:
    from engines.answering.extract import ExtractConfig
    from engines.models.fakes import HashEmbedding
    from engines.record import CondenseTrace
    from engines.steps.answer import QuoteAnswer
    from engines.steps.condense import Condensed

    class Flat(HashEmbedding):  # every text means the same: the clauses' words decide
        def _vector(self, text: str) -> list[float]:
            return [1.0] + [0.0] * (self.dim - 1)

    nodes = (_node("claims", "Hồ sơ bồi thường nộp trong vòng 60 ngày kể từ ngày khám xong. "
                             "Giấy yêu cầu bồi thường dùng mẫu BT-01 có chữ ký.", 0.9),)
    follow_up = "Dùng mẫu đơn nào?"
    composed = "Hồ sơ bồi thường nộp trong bao lâu kể từ ngày khám: dùng mẫu đơn nào?"
    state = TurnState(question=follow_up, language="vi", nodes=nodes).with_output(
        "condense", Condensed(query=composed, trace=CondenseTrace(used_llm=True, fallback_reason="unchanged")))
    quote = QuoteAnswer(Flat(), config=ExtractConfig(max_clauses=1))
    assert "BT-01" in quote.run(state).text  # the follow-up asks for a form
    glued = QuoteAnswer(Flat(), config=ExtractConfig(max_clauses=1, fallback_words_from_message=False))
    assert "60 ngày" in glued.run(state).text  # the composed query's words chose the earlier question's clause
    rewritten = TurnState(question=follow_up, language="vi", nodes=nodes).with_output(
        "condense", Condensed(query=composed, trace=CondenseTrace(used_llm=True)))
    assert "60 ngày" in quote.run(rewritten).text  # an LLM rewrite is matched as it is


class _LogprobLLM(ScriptedLLM):
    """Like an OpenAI-compatible server asked for ``logprobs``: the first token's alternatives come back."""

    p_yes: float = 0.5
    kwargs: list[dict] = []

    def __init__(self, p_yes: float, **kwargs) -> None:
        super().__init__(p_yes=p_yes, kwargs=[], **kwargs)

    def chat(self, messages, **kwargs):
        from llama_index.core.base.llms.types import ChatMessage, ChatResponse, LogProb

        self.kwargs.append(kwargs)
        self.prompts.append("\n".join(m.content or "" for m in messages))
        top = [LogProb(token="YES", logprob=math.log(self.p_yes)), LogProb(token="NO", logprob=math.log(1 - self.p_yes))]
        reply = "YES" if self.p_yes >= 0.5 else "NO"
        return ChatResponse(message=ChatMessage(role="assistant", content=reply), logprobs=[top])


def _graded_state(cosine: float, answer) -> TurnState:
    from engines.steps.gate import Gated

    state = TurnState(question="Phí khiếu nại?", language="vi", query="Gửi khiếu nại có mất phí không?",
                      nodes=(_node("fees", "Lệ phí cấp lại thẻ là 50.000 đồng. Khiếu nại gửi qua cổng trực tuyến.",
                                   cosine),))
    return state.with_output("gate", Gated(relevant=True, max_raw_scores={"vector": cosine})).with_output("answer", answer)


def test_graded_check_refuses_when_the_model_doubts_and_the_cosine_is_low_for_this_corpus() -> None:
    from engines.answering.clauses import Clause
    from engines.steps.check import GradedCheck

    clause = Clause("Lệ phí cấp lại thẻ là 50.000 đồng.", 0, 0)
    quoted = Quoted(text="Theo tài liệu:\n- Lệ phí cấp lại thẻ là 50.000 đồng. (fees)", chosen=((clause, 0.8),),
                    titles=("fees",), doc_ids=("fees",))
    pseudo = [0.80, 0.84, 0.88, 0.92]
    llm = _LogprobLLM(0.2)
    check = GradedCheck(llm, min_score=0.31, pseudo_scores=pseudo)
    low = _graded_state(0.83, quoted)
    out = check.run(low)
    assert out.p_yes == pytest.approx(0.2) and out.percentile == 0.25 and out.score == pytest.approx(0.225)
    assert low.with_output("check", out).draft.refusal_reason == "check_not_answered"
    assert llm.kwargs[0]["logprobs"] is True and "Lệ phí cấp lại thẻ" in llm.prompts[0]
    assert "Gửi khiếu nại có mất phí không?" in llm.prompts[0]  # the standalone query is what is judged
    high = _graded_state(0.95, quoted)  # the same doubt, a cosine above every sentence of the corpus: answered
    assert GradedCheck(_LogprobLLM(0.2), min_score=0.31, pseudo_scores=pseudo).run(high).answered
    assert out.record_fields()["answerability"]["score"] == pytest.approx(0.225)


def test_graded_check_reads_a_plain_reply_when_the_server_gives_no_log_probabilities() -> None:
    from engines.steps.check import GradedCheck

    quoted = Quoted(text="Theo tài liệu: ...")
    state = _graded_state(0.85, quoted)
    said_no = GradedCheck(ScriptedLLM(["NO"]), min_score=0.31, pseudo_scores=[0.8, 0.9]).run(state)
    assert said_no.p_yes == 0.0 and said_no.percentile == 0.5 and not said_no.answered  # mean 0.25
    said_yes = GradedCheck(ScriptedLLM(["YES"]), min_score=0.31, pseudo_scores=[0.8, 0.9]).run(state)
    assert said_yes.p_yes == 1.0 and said_yes.answered
    unclear = GradedCheck(ScriptedLLM(["Hmm"]), min_score=0.31).run(state)  # nothing to judge by: the answer stands
    assert unclear.score is None and unclear.answered


def test_graded_check_in_generate_mode_judges_the_closest_clauses_before_anything_is_written() -> None:
    from engines.steps.check import GradedCheck

    asked: list[str] = []

    def ranker(query, nodes):
        asked.append(query)
        return [(nodes[0].node.node_id, "Khiếu nại gửi qua cổng trực tuyến.")]

    prompted = _graded_state(0.83, GenerateAnswer(max_context_chars=1000).run(
        TurnState(question="Phí khiếu nại?", language="vi", nodes=(_node("fees", "x", 0.83),))))
    llm = _LogprobLLM(0.1)
    without_ranker = GradedCheck(llm, min_score=0.31)
    assert not without_ranker.applies(prompted)  # generate mode needs clauses to show
    check = GradedCheck(llm, min_score=0.31, pseudo_scores=[0.8, 0.84, 0.88, 0.92], ranker=ranker)
    assert check.applies(prompted)
    after = prompted.with_output("check", check.run(prompted))
    assert after.draft.refused and not after.draft.needs_llm  # the refusal replaces the prompt: no answer call
    assert asked == ["Gửi khiếu nại có mất phí không?"] and "- Khiếu nại gửi qua cổng trực tuyến. (fees)" in llm.prompts[0]
