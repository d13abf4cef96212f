"""The chat engine's behaviour a user (or an evaluator) notices, with scripted models."""

import asyncio

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.answering.refusal import REFUSALS
from engines.models.fakes import ScriptedLLM
from tests.conftest import DOCS, engine_over


def engine_with(make_pipeline, *replies, condense_llm=None, **settings):
    """A chat engine whose answer LLM replies ``replies`` in order, over a pipeline built with ``settings``."""
    llm = ScriptedLLM(replies)
    return engine_over(make_pipeline(llm=llm, condense_llm=condense_llm, **settings)), llm


def test_first_turn_makes_no_condense_call(make_pipeline):
    engine, llm = engine_with(make_pipeline, "Không có phép năm trong thời gian thử việc.")
    response = engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    record = engine.last_record
    assert llm.calls == 1  # the answer only
    assert record.condense.used_llm is False and record.query == record.question
    assert record.llm_calls == 1
    assert record.retrieved_doc_ids[0] == "leave-probation"
    assert response.response == "Không có phép năm trong thời gian thử việc."
    assert [s.doc_id for s in record.sources][0] == "leave-probation"


def test_follow_up_is_condensed_and_recorded(make_pipeline):
    engine, llm = engine_with(make_pipeline, "Không có phép năm.",
                              "Nhân viên hợp đồng thời vụ được nghỉ phép năm bao nhiêu ngày?", "1 ngày mỗi tháng.")
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Hợp đồng thời vụ thì sao?")  # not a "còn X" swap: the condense LLM rewrites it
    record = engine.last_record
    assert record.condense.used_llm and record.condense.fallback_reason is None
    assert record.query == "Nhân viên hợp đồng thời vụ được nghỉ phép năm bao nhiêu ngày?"
    assert "leave-seasonal" in record.retrieved_doc_ids  # the hashed fake embedder ranks loosely
    assert record.llm_calls == 2
    assert "Hợp đồng thời vụ thì sao?" in llm.prompts[1]
    assert set(record.timings_ms) >= {"condense", "retrieve", "gate", "assemble", "answer", "write", "total"}
    cand = record.candidates[0]
    assert "vector" in cand.raw_scores and cand.fused_score < 0.1  # raw cosine kept beside the RRF score


def test_condense_window_limits_what_the_condenser_sees(make_pipeline):
    engine, llm = engine_with(make_pipeline, "Lãi suất vay mua nhà là bao nhiêu?", "8,5%/năm.", condense_window=2)
    history = [ChatMessage(role=MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT, content=f"tin nhắn số {i}")
               for i in range(8)]
    engine.chat("Vay mua nhà thì sao?", chat_history=history)
    condense_prompt = llm.prompts[0]
    assert "tin nhắn số 7" in condense_prompt and "tin nhắn số 6" in condense_prompt
    assert "tin nhắn số 5" not in condense_prompt
    assert engine.last_record.condense.window == 2


def test_swap_follow_up_is_rewritten_without_the_condense_llm(make_pipeline):
    engine, llm = engine_with(make_pipeline, "Không có phép năm.", "1 ngày mỗi tháng.")
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Còn hợp đồng thời vụ thì sao?")
    record = engine.last_record
    assert record.condense.rule == "swap" and not record.condense.used_llm
    assert record.llm_calls == 1 and llm.calls == 2  # the two answers, no condense call
    # the previous question with one span swapped for X (which span: the corpus decides; the
    # hashed fake embedder cannot, the end-to-end test checks the real choice)
    assert "hợp đồng thời vụ" in record.query and record.query.startswith("Nhân viên")
    assert "Còn" not in record.query


def test_swap_rule_can_be_switched_off(make_pipeline):
    engine, llm = engine_with(make_pipeline, "Không có phép năm.", "Nhân viên hợp đồng thời vụ được nghỉ bao nhiêu ngày?",
                              "1 ngày mỗi tháng.", swap_followups=False)
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Còn hợp đồng thời vụ thì sao?")
    assert engine.last_record.condense.used_llm and engine.last_record.condense.rule is None
    assert engine.last_record.query == "Nhân viên hợp đồng thời vụ được nghỉ bao nhiêu ngày?"


def test_explicit_empty_history_is_respected(make_pipeline):
    engine, llm = engine_with(make_pipeline, "a1", "a2")
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Thẻ SKU-4471 có phí thường niên bao nhiêu?", chat_history=[])
    assert engine.last_record.condense.used_llm is False  # [] means no history, not "use memory"
    assert llm.calls == 2


def test_separate_condense_llm_is_used_for_condensing_only(make_pipeline):
    condenser = ScriptedLLM(["Ngày phép của hợp đồng thời vụ có được cộng dồn không?"])
    engine, answerer = engine_with(make_pipeline, "Không có phép.", "Không được cộng dồn.", condense_llm=condenser)
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Cái đó có được cộng dồn không?")
    assert condenser.calls == 1 and answerer.calls == 2
    assert engine.last_record.retrieved_doc_ids[0] == "leave-seasonal-carryover"


def test_condenser_that_answers_falls_back(make_pipeline):
    engine, _ = engine_with(make_pipeline, "Không có phép.", "Có, được cộng dồn 5 ngày.", "Không được cộng dồn.")
    engine.chat("Còn hợp đồng thời vụ thì sao?", chat_history=[])
    engine.chat("Cái đó có được cộng dồn không?")
    record = engine.last_record
    assert record.condense.fallback_reason == "answered"
    assert record.query == "Hợp đồng thời vụ có được cộng dồn không?"  # the subject, not the two questions glued
    assert record.retrieved_doc_ids[0] in ("leave-seasonal-carryover", "leave-seasonal")


def test_refusal_below_threshold_has_no_sources_and_no_answer_call(make_pipeline):
    engine, llm = engine_with(make_pipeline)
    response = engine.chat("Giá vàng SJC hôm nay?")
    record = engine.last_record
    assert record.refused and record.refusal_reason == "no_relevant_documents"
    assert response.response == REFUSALS["vi"] and response.source_nodes == [] and record.sources == []
    assert llm.calls == 0
    engine.chat("What is the price of bitcoin?", chat_history=[])
    assert engine.last_record.answer == REFUSALS["en"]


def test_threshold_is_configurable(make_pipeline):
    engine, llm = engine_with(make_pipeline, "NOT_FOUND", refusal_min_vector=-1.0)
    engine.chat("Giá vàng SJC hôm nay?")
    record = engine.last_record
    assert llm.calls == 1  # the gate let it through; the model said it is not in the documents
    assert record.refused and record.refusal_reason == "answer_not_found" and record.sources == []
    assert record.answer == REFUSALS["vi"]


def test_stream_matches_chat_and_updates_memory(make_pipeline):
    answer = "Thẻ SKU-4471 có phí thường niên 200.000 đồng."
    engine, _ = engine_with(make_pipeline, answer)
    response = engine.stream_chat("SKU-4471 phí thường niên bao nhiêu?")
    deltas = list(response.response_gen)  # joins the history-writing thread when done
    assert len(deltas) > 1 and "".join(deltas) == answer
    assert engine.last_record.answer == answer
    assert engine.last_record.retrieved_doc_ids[0] == "card-sku-4471"
    assert [m.content for m in engine.chat_history] == ["SKU-4471 phí thường niên bao nhiêu?", answer]


def test_streamed_not_found_is_replaced_by_a_refusal(make_pipeline):
    engine, _ = engine_with(make_pipeline, "NOT_FOUND")
    response = engine.stream_chat("Thẻ SKU-4471 có hoàn tiền không?")
    text = "".join(response.response_gen)
    assert text == REFUSALS["vi"] and "NOT_FOUND" not in text
    assert engine.last_record.refused


def test_async_paths_match_sync(make_pipeline):
    question = "Điều 4.2 quy định lãi suất vay mua nhà thế nào?"
    engine, _ = engine_with(make_pipeline, "8,5%/năm.", "8,5%/năm.", "8,5%/năm.")
    sync = engine.chat(question, chat_history=[])
    sync_record = engine.last_record

    async def run():
        a = await engine.achat(question, chat_history=[])
        s = await engine.astream_chat(question, chat_history=[])
        text = "".join([d async for d in s.async_response_gen()])
        return a, text

    a, streamed = asyncio.run(run())
    assert a.response == sync.response == streamed
    assert engine.records[-1].retrieved_doc_ids == engine.records[-2].retrieved_doc_ids == sync_record.retrieved_doc_ids


def test_retrieval_only_turn_makes_no_answer_call(make_pipeline):
    engine, llm = engine_with(make_pipeline)
    record = engine.session.run_until("assemble", "Thẻ SKU-4417 phí bao nhiêu?", chat_history=[])
    assert llm.calls == 0 and record.retrieved_doc_ids[0] == "card-sku-4417" and not record.refused
    assert engine.chat_history == []


def test_extract_mode_quotes_clauses_after_a_yes_no_check(make_pipeline):
    engine, llm = engine_with(make_pipeline, "YES", answer_mode="extract", answer_check="yesno")
    response = engine.stream_chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    streamed = "".join(response.response_gen)
    record = engine.last_record
    assert llm.calls == 1 and record.llm_calls == 1  # the check; the answer itself is quoted
    assert "Trích đoạn có nêu câu trả lời không?" in llm.prompts[0]
    assert record.answer_mode == "extract" and streamed == record.answer
    assert streamed.startswith("Theo tài liệu:\n- ")
    quoted_docs = {q["doc_id"] for q in record.quoted}
    assert quoted_docs and {s.doc_id for s in record.sources} == quoted_docs  # cite what was quoted
    for q in record.quoted:  # every quote is the document's own words, each one shown to the checker
        assert q["text"] in DOCS[q["doc_id"]][2] and q["text"] in llm.prompts[0]
    assert {"answer", "check"} <= set(record.timings_ms)


def test_extract_mode_refuses_when_the_check_says_the_quotes_do_not_answer(make_pipeline):
    engine, llm = engine_with(make_pipeline, "NO", answer_mode="extract", answer_check="yesno")
    response = engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    record = engine.last_record
    assert record.refused and record.refusal_reason == "check_not_answered"
    assert response.response == REFUSALS["vi"] and record.sources == [] and response.source_nodes == []


def test_extract_mode_quotes_without_an_llm_call_by_default(make_pipeline):
    engine, llm = engine_with(make_pipeline, answer_mode="extract")  # answer_check "off" by default
    response = engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    assert llm.calls == 0 and engine.last_record.llm_calls == 0
    assert response.response.startswith("Theo tài liệu:")


def test_extract_mode_still_refuses_when_nothing_is_relevant(make_pipeline):
    engine, llm = engine_with(make_pipeline, answer_mode="extract")
    response = engine.chat("Giá vàng SJC hôm nay bao nhiêu?")
    assert engine.last_record.refused and response.response.startswith("Xin lỗi")
    assert engine.last_record.quoted == [] and llm.calls == 0


def test_retrieval_only_preparation_neither_quotes_nor_checks(make_pipeline):
    engine, llm = engine_with(make_pipeline, answer_mode="extract")
    record = engine.session.run_until("assemble", "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", [])
    assert llm.calls == 0 and record.quoted == [] and "check" not in record.timings_ms
    assert not record.refused and record.answer == ""


def test_check_after_a_condense_fallback_asks_the_composed_standalone_question(make_pipeline):
    engine, llm = engine_with(make_pipeline, "YES", "Có, được cộng dồn 5 ngày.", "YES", answer_mode="extract",
                              answer_check="yesno")
    engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    engine.chat("Cái đó có được cộng dồn không?")  # the condenser answers instead of rewriting
    record = engine.last_record
    assert record.condense.fallback_reason == "answered"
    assert record.query == "Nhân viên thử việc được nghỉ phép năm có được cộng dồn không?"
    check = llm.prompts[-1]
    assert f"Câu hỏi: {record.query}" in check and "bao nhiêu ngày" not in check.split("Câu hỏi:")[1]


def test_generate_mode_graded_check_refuses_before_writing_and_lets_a_yes_write(make_pipeline):
    engine, llm = engine_with(make_pipeline, "NO", answer_mode="generate", answer_check="graded",
                              answer_check_min_score=0.51)  # a certain NO scores at most (0 + 1) / 2
    response = engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    record = engine.last_record
    assert record.refused and record.refusal_reason == "check_not_answered" and response.response == REFUSALS["vi"]
    assert llm.calls == 1 and record.llm_calls == 1  # the check only: nothing was written
    assert record.answerability["p_yes"] == 0.0 and 0 <= record.answerability["percentile"] <= 1
    assert "Trích đoạn có nêu câu trả lời không?" in llm.prompts[0]
    engine, llm = engine_with(make_pipeline, "YES", "Không có phép năm trong thời gian thử việc.",
                              answer_mode="generate", answer_check="graded", answer_check_min_score=0.5)
    response = engine.chat("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?")
    assert response.response == "Không có phép năm trong thời gian thử việc." and llm.calls == 2
    assert engine.last_record.answerability["score"] >= 0.5 and not engine.last_record.refused
