"""A question naming what no document mentions is told so, by name; the documents' own words, question words,
English inflections and an English question over Vietnamese documents are not."""

from __future__ import annotations

from llama_index.core.schema import TextNode

from engines.answering.refusal import RelevanceGate
from engines.answering.unknown_terms import Vocabulary, content_words, unknown_terms
from engines.retrieval.bm25 import tokenize
from engines.retrieval.fusion import FusedNode
from engines.steps.base import TurnState
from engines.steps.gate import UNKNOWN_TERMS, GateStep

DOCUMENTS = """Thẻ tín dụng Sen Vàng (mã SV-09): phí thường niên 500.000 đồng; hoàn tiền 1% khi thanh toán
tại siêu thị. Chủ thẻ được rút tiền mặt tại ATM, phí 4% số tiền rút. Lost cards are replaced within 5 working
days; a replacement costs 100,000 VND."""
WORDS = Vocabulary.of(tokenize(DOCUMENTS))


QUESTION = "Chủ thẻ tín dụng Sen Vàng thanh toán tại siêu thị qua Apple Pay có được hoàn tiền không?"


def test_a_word_no_document_uses_is_named() -> None:
    assert unknown_terms(QUESTION, WORDS) == ("apple", "pay")


def test_the_documents_words_question_words_and_english_inflections_are_known() -> None:
    assert unknown_terms("Phí thường niên thẻ Sen Vàng là bao nhiêu?", WORDS) == ()
    assert unknown_terms("How long until a lost card is replaced, and what does replacing it cost?", WORDS) == ()
    assert content_words("Phí rút tiền mặt SV-09 là bao nhiêu?") == ["phí", "rút", "tiền", "mặt", "sv"]


def test_a_question_mostly_in_other_words_than_the_documents_is_not_judged() -> None:
    """An English question over Vietnamese documents: nearly all its words are unknown, which says nothing."""
    question = "Does the Golden Lotus credit card give cashback at supermarkets?"
    assert unknown_terms(question, WORDS) == ()
    assert unknown_terms(question, WORDS, min_known=0.0) != ()


def test_the_gate_refuses_naming_the_words_as_the_question_wrote_them() -> None:
    node = FusedNode(node=TextNode(id_="c1", text=DOCUMENTS, metadata={"doc_id": "sv", "title": "Thẻ Sen Vàng"}),
                     score=0.03, raw_scores={"vector": 0.9})
    state = TurnState(question="Qua Apple Pay được không?", language="vi", nodes=(node,), first_pass=(node,),
                      query=QUESTION)
    on = GateStep(RelevanceGate(0.5), vocabulary=WORDS).run(state)
    after = state.with_output("gate", on)
    assert on.relevant and on.unknown == ("apple", "pay")
    assert after.draft.refusal_reason == UNKNOWN_TERMS
    assert after.draft.text.splitlines() == [
        "Tài liệu không nhắc đến “Apple”, “Pay”, nên không trả lời được câu này. Các đoạn gần nhất:", "- Thẻ Sen Vàng"]
    off = state.with_output("gate", GateStep(RelevanceGate(0.5)).run(state))
    assert off.draft is None  # off: the turn goes on to the answer


class _Reader:
    """Scores every passage alike: a reader that is sure (0.9) or unsure (0.05) that something answers."""

    def __init__(self, score: float) -> None:
        self.value = score

    def score(self, query: str, passages: list[str]) -> list[float]:
        return [self.value] * len(passages)


def test_deferred_to_the_reader_unknown_words_refuse_only_where_no_passage_answers() -> None:
    from engines.steps.rerank import RerankStep

    node = FusedNode(node=TextNode(id_="c1", text=DOCUMENTS, metadata={"doc_id": "sv", "title": "Thẻ Sen Vàng"}),
                     score=0.03, raw_scores={"vector": 0.9})
    state = TurnState(question="Qua Apple Pay được không?", language="vi", nodes=(node,), first_pass=(node,),
                      query=QUESTION)
    gated = state.with_output("gate", GateStep(RelevanceGate(0.5), vocabulary=WORDS, defer_unknown=True).run(state))
    assert gated.draft is None  # the gate leaves it to the rerank step

    def reranked(score: float):
        step = RerankStep(_Reader(score), top_n=1, unknown_terms_bar=0.12)
        return gated.with_output("rerank", step.run(gated))

    unsure, sure = reranked(0.05), reranked(0.9)
    assert unsure.draft.refusal_reason == UNKNOWN_TERMS and "“Apple”, “Pay”" in unsure.draft.text
    assert sure.draft is None  # the reader finds a passage that answers: the words alone do not refuse
