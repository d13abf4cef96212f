"""Routing: the pure decision rule, examples files, and what each route does to a turn."""

from __future__ import annotations

import json

import pytest

from engines.conversation.router import (
    DIRECT,
    DOCS,
    OUT_OF_SCOPE,
    LLMRouter,
    SemanticRouter,
    decide,
    load_examples,
)
from engines.errors import ConfigError
from engines.models.fakes import HashEmbedding, ScriptedLLM
from tests.conftest import engine_over


def test_docs_is_kept_unless_another_route_is_close_and_clearly_ahead() -> None:
    assert decide({DOCS: 0.80, DIRECT: 0.95, OUT_OF_SCOPE: 0.7}, 0.9, 0.02) == (DIRECT, 0.95)
    assert decide({DOCS: 0.94, DIRECT: 0.95, OUT_OF_SCOPE: 0.7}, 0.9, 0.02)[0] == DOCS  # margin too small
    assert decide({DOCS: 0.70, DIRECT: 0.85, OUT_OF_SCOPE: 0.7}, 0.9, 0.02)[0] == DOCS  # not confident
    assert decide({DOCS: 0.99, DIRECT: 0.5, OUT_OF_SCOPE: 0.5}, 0.9, 0.02)[0] == DOCS


def test_examples_file_errors_name_the_file(tmp_path) -> None:
    path = tmp_path / "routes.json"
    path.write_text(json.dumps({"docs": ["a"], "direct": []}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"routes\.json.*missing: \['direct', 'out_of_scope'\]"):
        load_examples(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="routes.json"):
        load_examples(path)
    assert set(load_examples(None)) == {DOCS, DIRECT, OUT_OF_SCOPE}


def test_llm_router_parses_labels_and_defaults_to_docs() -> None:
    assert LLMRouter(ScriptedLLM(["DIRECT."])).route("Cảm ơn").route == DIRECT
    assert LLMRouter(ScriptedLLM(["**OUT_OF_SCOPE**"])).route("thời tiết").route == OUT_OF_SCOPE
    decision = LLMRouter(ScriptedLLM(["I think this is about loans"])).route("vay")
    assert decision.route == DOCS and decision.llm_calls == 1


EXAMPLES = {DOCS: ["phí thường niên thẻ", "nghỉ phép hợp đồng"], DIRECT: ["xin chào bạn", "cảm ơn bạn nhiều"],
            OUT_OF_SCOPE: ["thời tiết hôm nay thế nào", "công thức nấu phở"]}


def routed_engine(make_pipeline, replies=()):
    llm = ScriptedLLM(replies)
    engine = engine_over(make_pipeline(llm=llm))
    engine.session.set_router(SemanticRouter(HashEmbedding(), EXAMPLES, min_confidence=0.8, margin=0.05, top_n=1))
    return engine, llm


def test_out_of_scope_is_declined_politely_without_retrieval(make_pipeline) -> None:
    engine, llm = routed_engine(make_pipeline)
    response = engine.chat("Thời tiết hôm nay thế nào?")
    record = engine.last_record
    assert record.route == OUT_OF_SCOPE and record.refused and record.refusal_reason == "out_of_scope"
    assert "retrieve" not in record.timings_ms and not record.sources and llm.calls == 0
    assert "ngoài phạm vi" in response.response


def test_small_talk_is_answered_without_retrieval_or_sources(make_pipeline) -> None:
    engine, llm = routed_engine(make_pipeline, ["Chào bạn! Tôi có thể tra cứu tài liệu nội bộ giúp bạn."])
    response = engine.chat("Xin chào bạn")
    record = engine.last_record
    assert record.route == DIRECT and not record.refused and not record.sources and not response.source_nodes
    assert "retrieve" not in record.timings_ms and llm.calls == 1
    assert response.response.startswith("Chào bạn!")


def test_document_questions_go_through_retrieval(make_pipeline) -> None:
    engine, _ = routed_engine(make_pipeline, ["200.000 đồng."])
    engine.chat("Phí thường niên thẻ SKU-4471 là bao nhiêu?")
    record = engine.last_record
    assert record.route == DOCS and record.route_scores[DOCS] > record.route_scores[OUT_OF_SCOPE]
    assert record.retrieved_doc_ids[0] == "card-sku-4471"


class FixedScores(SemanticRouter):
    """Scores as an embedding gave them for a terse FiQA follow-up ("Value?": direct 0.86, docs 0.835)."""

    def scores(self, question: str) -> dict[str, float]:
        return {DOCS: 0.835, DIRECT: 0.86, OUT_OF_SCOPE: 0.84}


def test_a_terse_follow_up_mid_conversation_stays_with_the_documents() -> None:
    router = FixedScores(HashEmbedding(), EXAMPLES, min_confidence=0.85, followup_min_confidence=0.89)
    assert router.route("Value?").route == DIRECT  # first turn: nothing to follow up on
    assert router.route("Value?", "user: What is NAV?\nassistant: Net asset value.").route == DOCS
    plain = FixedScores(HashEmbedding(), EXAMPLES, min_confidence=0.85)
    assert plain.route("Value?", "user: What is NAV?").route == DIRECT  # without the bar it is lost


def test_the_mid_conversation_bar_never_lowers_the_plain_one() -> None:
    router = FixedScores(HashEmbedding(), EXAMPLES, min_confidence=0.87, followup_min_confidence=0.5)
    assert router.route("Value?", "user: What is NAV?").route == DOCS
