"""The rerank step: a wider fused pool, cut to top_k in the cross-encoder's order, recorded with its
scores; off when no cross-encoder is configured; never run on a refused turn."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from engines.session import Session
from engines.steps.rerank import passage_text, rerank_order
from tests.conftest import engine_over


class OverlapScorer:
    """A scripted cross-encoder: the share of the query's words in the passage, plus a bonus for one
    word, so a test can make it disagree with fusion. Records what it was asked, like a real model's log."""

    def __init__(self, favour: str = "") -> None:
        self.favour = favour.lower()
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, tuple(passages)))
        words = set(re.findall(r"\w+", query.lower()))
        out = []
        for p in passages:
            found = set(re.findall(r"\w+", p.lower()))
            out.append(len(words & found) / max(len(words), 1) + (2.0 if self.favour and self.favour in found else 0.0))
        return out


def _node(node_id: str, text: str, score: float, title: str = "") -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=node_id, text=text, metadata={"title": title} if title else {}), score=score)


def test_the_pool_is_cut_to_top_k_in_the_scorers_order(make_pipeline) -> None:
    plain = make_pipeline(top_k=3)
    scorer = OverlapScorer(favour="vụ")  # the seasonal-contract documents, whatever fusion thought
    reranked = make_pipeline(top_k=3, rerank_pool=7, reranker=scorer)
    assert "rerank" in reranked.step_names and "rerank" not in plain.step_names
    question = "Phí thường niên thẻ tín dụng?"
    state = reranked.run(Session(reranked, log_turns=False)._start(question, []), until="assemble")
    out = state.output("rerank")
    assert out is not None and out.pool == 7 and len(state.nodes) == 3
    (query, passages), = scorer.calls
    assert query == question and len(passages) == 7
    best = sorted(range(7), key=lambda i: -scorer.score(query, passages)[i])[:3]
    assert [passage_text(state.output("retrieve").nodes[i]) for i in best] == [passage_text(n) for n in state.nodes]
    assert all(n.node.metadata["doc_id"].startswith("leave-seasonal") for n in state.nodes[:2])
    before = Session(plain, log_turns=False).run_until("assemble", question, [])
    assert before.retrieved_doc_ids[0].startswith("card-")  # fusion alone put a card first
    record = Session(reranked, log_turns=False).run_until("assemble", question, [])
    assert len(record.candidates) == 3 and all(c.rerank_score is not None for c in record.candidates)
    assert [c.rerank_score for c in record.candidates] == sorted((c.rerank_score for c in record.candidates),
                                                                 reverse=True)


def test_a_refused_turn_is_not_reranked(make_pipeline) -> None:
    scorer = OverlapScorer()
    pipeline = make_pipeline(reranker=scorer, refusal_min_vector=0.99)
    engine = engine_over(pipeline)
    engine.chat("Giá vé máy bay đi Đà Nẵng?")
    record = engine.last_record
    assert record.refused and scorer.calls == [] and "rerank" not in record.timings_ms


def test_without_a_cross_encoder_the_listed_step_is_off_and_retrieval_keeps_top_k(make_pipeline) -> None:
    pipeline = make_pipeline(top_k=2, rerank_pool=9)
    assert "rerank" not in pipeline.step_names
    record = Session(pipeline, log_turns=False).run_until("assemble", "Phí thường niên thẻ tín dụng?", [])
    assert len(record.candidates) == 2 and all(c.rerank_score is None for c in record.candidates)


def test_order_is_pure_and_ties_keep_the_fused_order() -> None:
    nodes = [_node("a", "x", 0.9), _node("b", "y", 0.8), _node("c", "z", 0.7)]
    assert rerank_order(nodes, [0.1, 0.5, 0.5], 2) == (1, 2)
    assert rerank_order(nodes, [0.3, 0.2, 0.1], 5) == (0, 1, 2)
    assert [n.score for n in nodes] == [0.9, 0.8, 0.7]
    with pytest.raises(ValueError, match="2 scores for 3 items"):
        rerank_order(nodes, [0.1, 0.2], 1)


def test_the_passage_carries_its_documents_title_once() -> None:
    assert passage_text(_node("a", "Phí 200.000 đồng.", 1.0, title="Thẻ Vàng")) == "Thẻ Vàng\nPhí 200.000 đồng."
    assert passage_text(_node("a", "Thẻ Vàng: phí 200.000 đồng.", 1.0, title="Thẻ Vàng")) == "Thẻ Vàng: phí 200.000 đồng."
    assert passage_text(_node("a", "Phí.", 1.0)) == "Phí."


def test_the_gate_judges_the_same_top_k_with_or_without_a_reranker(make_pipeline) -> None:
    question = "Nhân viên thử việc có phép năm không?"
    plain, widened = make_pipeline(top_k=1), make_pipeline(top_k=1, rerank_pool=7, reranker=OverlapScorer())

    def gated(pipeline):
        return pipeline.run(Session(pipeline, log_turns=False)._start(question, []), until="gate")

    before, after = gated(plain), gated(widened)
    assert len(after.output("retrieve").nodes) == 7  # the pool is wider ...
    assert [n.node.node_id for n in after.first_pass] == [n.node.node_id for n in before.first_pass]  # ... the gate's not
    assert after.output("gate").max_raw_scores == before.output("gate").max_raw_scores
    assert (after.draft is None) == (before.draft is None)
    record = Session(widened, log_turns=False).run_until("gate", question, [])
    assert [c.node_id for c in record.candidates] == [n.node.node_id for n in before.nodes]  # the record: top_k


def test_a_refused_turn_records_top_k_candidates_not_the_pool(make_pipeline) -> None:
    pipeline = make_pipeline(top_k=2, rerank_pool=7, reranker=OverlapScorer(), refusal_min_vector=0.99)
    record = Session(pipeline, log_turns=False).run_until("answer", "Giá vé máy bay đi Đà Nẵng?", [])
    assert record.refused and len(record.candidates) == 2


class ConversationScorer(OverlapScorer):
    """A scorer that reads the conversation, as the packaged reader does."""

    reads_conversation = True


def test_a_conversation_reader_is_given_the_follow_up_with_its_history(make_pipeline) -> None:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    scorer = ConversationScorer()
    pipeline = make_pipeline(top_k=3, rerank_pool=5, reranker=scorer)
    history = [ChatMessage(role=MessageRole.USER, content="Thẻ SKU-4471 phí thường niên bao nhiêu?"),
               ChatMessage(role=MessageRole.ASSISTANT, content="200.000 đồng, miễn năm đầu.")]
    pipeline.run(Session(pipeline, log_turns=False)._start("Còn thẻ Bạch Kim?", history), until="assemble")
    (query, _), = scorer.calls
    parts = query.split(" | ")
    assert "Còn thẻ Bạch Kim?" in parts  # the user's own words, whatever the rewrite made of them
    assert parts[-2:] == ["Thẻ SKU-4471 phí thường niên bao nhiêu?", "200.000 đồng, miễn năm đầu."]
    plain = OverlapScorer()
    other = make_pipeline(top_k=3, rerank_pool=5, reranker=plain)
    other.run(Session(other, log_turns=False)._start("Còn thẻ Bạch Kim?", history), until="assemble")
    assert " | " not in plain.calls[0][0]  # a plain cross-encoder still reads the rewrite alone


class FixedScorer:
    """A calibrated scorer: P(answers) for every passage is the same low or high value."""

    def __init__(self, value: float) -> None:
        self.value = value

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [self.value - 0.001 * i for i in range(len(passages))]


def test_no_passage_the_reader_believes_is_a_plain_refusal_naming_the_closest(make_pipeline) -> None:
    question = "Phí thường niên thẻ tín dụng?"
    low = make_pipeline(top_k=3, rerank_pool=5, reranker=FixedScorer(0.2), reader_min_score=0.5)
    record = Session(low, log_turns=False).run_until("answer", question, [])
    assert record.refused and record.refusal_reason == "reader_not_answered"
    assert record.answer.startswith("Tài liệu không nói điều này.") and "\n- " in record.answer
    high = make_pipeline(top_k=3, rerank_pool=5, reranker=FixedScorer(0.9), reader_min_score=0.5)
    assert not Session(high, log_turns=False).run_until("answer", question, []).refused


def test_a_blend_keeps_what_both_orders_rank_high_and_weight_zero_is_the_reranker_alone() -> None:
    from engines.steps.rerank import blended_order

    scores = [0.1, 0.9, 0.5, 0.2]  # items in fused order: 0 is fusion's first, 1 the reranker's
    assert blended_order(scores, 0.0, 4) == (1, 2, 3, 0)
    assert blended_order(scores, 1.0, 2) == (1, 0)  # fusion's first comes back beside the reranker's first
    assert blended_order(scores, 10.0, 4)[0] == 0  # fusion dominates at a large weight
    assert blended_order([0.3, 0.3], 1.0, 2) == (0, 1)  # ties keep the fused order
