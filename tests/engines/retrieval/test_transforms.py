"""Query transforms: parsing, when they fire, and what they change in retrieval and the record."""

from __future__ import annotations

import pytest

from engines.errors import ConfigError
from engines.models.fakes import ScriptedLLM
from engines.retrieval.transforms import (
    ActivationRules,
    QueryExpander,
    is_multi_part,
    other_language,
    parse_lines,
)
from tests.conftest import engine_over


def test_parse_lines_strips_numbering_drops_repeats_and_the_original() -> None:
    raw = "1. Phí thường niên thẻ Vàng\n- phí thường niên thẻ vàng\n\n2) Biểu phí thẻ SKU-4471\n* Câu gốc?\n3. Thêm"
    assert parse_lines(raw, limit=3, exclude=["Câu gốc?"]) == [
        "Phí thường niên thẻ Vàng", "Biểu phí thẻ SKU-4471", "Thêm"]
    assert parse_lines(raw, limit=1) == ["Phí thường niên thẻ Vàng"]


@pytest.mark.parametrize("question, multi", [
    ("So sánh lãi suất và điều kiện giữa vay mua nhà và vay tiêu dùng", True),
    ("Compare the rate limits of API v1 and v2", True),
    ("Vay mua nhà lãi suất bao nhiêu? Thời hạn tối đa bao lâu?", True),
    ("Phí tất toán trước hạn gói vay mua nhà 2024?", False),
    ("Nhân viên thử việc và hợp đồng thời vụ có được nghỉ phép không?", False),  # one question, two subjects
])
def test_only_real_multi_part_questions_are_decomposed(question: str, multi: bool) -> None:
    assert is_multi_part(question) is multi


def test_conditional_rules_fire_on_short_queries_or_a_weak_first_pass() -> None:
    rules = ActivationRules("conditional", short_query_words=8, low_score=0.85)
    assert rules.reasons("Vay mua nhà cần gì?", 0.95) == ["short query (5 < 8 words)"]
    assert rules.reasons("Phí tất toán trước hạn của gói vay mua nhà năm 2024 là bao nhiêu?", 0.95) == []
    assert "weak first pass" in rules.reasons("Phí tất toán trước hạn của gói vay mua nhà năm 2024 là bao nhiêu?", 0.80)[0]
    assert ActivationRules("always").reasons("anything at all in many many words here", 0.99) == ["always"]
    with pytest.raises(ConfigError):
        ActivationRules("sometimes")


def test_unknown_transform_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="available"):
        QueryExpander(ScriptedLLM(), ["hyde", "rerank"])


def test_failing_transform_does_not_fail_the_turn() -> None:
    class Broken(ScriptedLLM):
        def _reply(self, prompt: str) -> str:
            raise TimeoutError("model server gone")

    expansion = QueryExpander(Broken(), ["multiquery"], ActivationRules("always")).expand("q ở đây", "q ở đây", 0.9)
    assert expansion.queries == [] and expansion.trace == ["multiquery: failed (TimeoutError)"]


def test_translation_runs_only_when_the_corpus_holds_the_other_language() -> None:
    mixed = {"vi": 0.8, "en": 0.2}
    assert other_language("Is the interpreter free?", mixed) == "vi"
    assert other_language("Phiên dịch có mất phí không?", mixed) == "en"
    assert other_language("Phiên dịch có mất phí không?", {"vi": 0.98, "en": 0.02}) is None
    assert other_language("Is the interpreter free?", {"en": 1.0}) is None

    llm = ScriptedLLM(["Phiên dịch viên có tính thêm phí không?"])
    expansion = QueryExpander(llm, ["translate"], ActivationRules("conditional"), languages=mixed).expand(
        "Is the interpreter charged extra at the International Department?", "Is the interpreter extra?", 0.95)
    # a long query and a strong first pass: the general rule would skip it; the corpus's languages do not
    assert [q.text for q in expansion.queries] == ["Phiên dịch viên có tính thêm phí không?"]
    assert expansion.trace == ["translate: 1 query (80% of the corpus in Vietnamese)"] and expansion.llm_calls == 1
    assert "Vietnamese" in llm.prompts[0]

    alone = QueryExpander(ScriptedLLM([]), ["translate"], languages={"vi": 1.0}).expand("Phí bao nhiêu?", "Phí?", 0.9)
    assert alone.queries == [] and alone.llm_calls == 0


def test_a_translation_may_keep_a_name_of_the_other_language() -> None:
    llm = ScriptedLLM(["What are the opening hours of Chi cục Thuế Đống Đa?"])
    expansion = QueryExpander(llm, ["translate"], languages={"vi": 0.8, "en": 0.2}).expand(
        "Chi cục Thuế Đống Đa làm việc giờ nào?", "Chi cục Thuế Đống Đa làm việc giờ nào?", 0.9)
    assert [q.text for q in expansion.queries] == ["What are the opening hours of Chi cục Thuế Đống Đa?"]
    unknown = QueryExpander(ScriptedLLM([]), ["translate"]).expand("Phí bao nhiêu?", "Phí?", 0.9)
    assert unknown.trace == ["translate: skipped (no language shares in the index manifest)"]


def test_a_reply_in_the_query_s_own_language_is_no_translation() -> None:
    llm = ScriptedLLM(["Is the interpreter extra? Yes, it costs more."])
    expansion = QueryExpander(llm, ["translate"], languages={"vi": 0.7, "en": 0.3}).expand(
        "Is the interpreter extra?", "Is the interpreter extra?", 0.9)
    assert expansion.queries == [] and expansion.llm_calls == 1


# ------------------------------------------------------------------ through the engine


def engine_with(make_pipeline, replies, transforms, activation="always"):
    llm = ScriptedLLM(replies)
    pipeline = make_pipeline(llm=llm)
    engine = engine_over(pipeline)
    engine.session.set_expander(pipeline.choices.expander(transforms, activation))
    return engine, llm


def retrieved(engine, question, history=None):
    """The turn up to assembling the context (retrieval-only), as evaluation runs it."""
    return engine.session.run_until("assemble", question, history)


def test_multi_query_variant_finds_what_the_question_alone_misses(make_pipeline) -> None:
    question = "Chuyển tiếp off qua kỳ tới?"  # none of the target's words
    plain, _ = engine_with(make_pipeline, [], [])
    assert "leave-seasonal-carryover" not in retrieved(plain, question).retrieved_doc_ids
    engine, llm = engine_with(make_pipeline, ["1. Ngày phép hợp đồng thời vụ có được cộng dồn sang hợp đồng sau\n2. "
                                         "phép chưa nghỉ thanh toán bằng tiền"], ["multiquery"])
    record = retrieved(engine, question)
    assert "leave-seasonal-carryover" in record.retrieved_doc_ids
    assert record.llm_calls == 1 and "Queries:" in llm.prompts[0]
    assert record.transforms == ["multiquery: 2 queries (always)"]
    assert "transform" in record.timings_ms


def test_hyde_passage_cannot_talk_the_gate_into_answering(make_pipeline) -> None:
    # The invented passage copies a real document word for word; the question itself matches nothing.
    question = "Công thức nấu phở bò ngon?"
    invented = "Thẻ tín dụng mã SKU-4471 có phí thường niên 200.000 đồng, miễn phí năm đầu."
    engine, _ = engine_with(make_pipeline, [invented], ["hyde"])
    record = retrieved(engine, question)
    assert "card-sku-4471" in record.retrieved_doc_ids  # HyDE did pull the passage in ...
    assert record.refused and record.refusal_reason == "no_relevant_documents"  # ... the gate judged the question


def test_hyde_runs_on_the_vector_side_only(make_pipeline) -> None:
    engine, _ = engine_with(make_pipeline, ["Người lao động theo hợp đồng thời vụ được nghỉ 1 ngày phép mỗi tháng."], ["hyde"])
    calls = []
    retriever = engine.session.pipeline.retrieval.retriever(engine.session.filter)  # the one this session's turns use
    original_run = retriever.run

    def spy(bundle, only=None):
        calls.append((bundle.query_str[:20], tuple(only or ()), bundle.embedding is not None))
        return original_run(bundle, only=only)

    retriever.run = spy
    retrieved(engine, "Thời vụ nghỉ mấy ngày?")
    assert calls[0] == ("Thời vụ nghỉ mấy ngà", (), False)
    assert calls[1][1:] == (("vector",), True)  # the passage is embedded as a passage, BM25 is not asked


def test_conditional_activation_skips_llm_for_long_clear_questions(make_pipeline) -> None:
    engine, llm = engine_with(make_pipeline, [], ["multiquery", "hyde"], activation="conditional")
    record = retrieved(engine, "Người lao động theo hợp đồng thời vụ được nghỉ bao nhiêu ngày phép cho mỗi tháng?")
    assert llm.calls == 0 and record.llm_calls == 0
    assert all("skipped" in t for t in record.transforms)


def test_decomposition_only_runs_for_multi_part_questions(make_pipeline) -> None:
    engine, llm = engine_with(make_pipeline, ["Phí thường niên thẻ SKU-4471?\nPhí thường niên thẻ SKU-4417?"], ["decompose"])
    retrieved(engine, "Phí thường niên thẻ Vàng là bao nhiêu?")
    assert llm.calls == 0
    record = retrieved(engine, "So sánh phí thường niên của thẻ Vàng và thẻ Bạch Kim")
    assert llm.calls == 1 and {"card-sku-4471", "card-sku-4417"} <= set(record.retrieved_doc_ids)


def test_original_question_is_kept_beside_the_rewrite_without_an_llm_call(make_pipeline) -> None:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    engine, llm = engine_with(make_pipeline, ["Thẻ tín dụng Bạch Kim có phí thường niên bao nhiêu?"], ["original"])
    history = [ChatMessage(role=MessageRole.USER, content="Thẻ Bạch Kim có phí gì?"),
               ChatMessage(role=MessageRole.ASSISTANT, content="Phí thường niên.")]
    record = retrieved(engine, "Với SKU-4471 thì sao?", history)  # not a "còn X" swap: condensed by the LLM
    assert llm.calls == 1  # the condense call only
    assert record.transforms == ["original: the user's own words beside the rewrite"]
    assert "card-sku-4471" in record.retrieved_doc_ids  # the code from the user's own words survived
