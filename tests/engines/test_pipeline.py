"""The pipeline: steps timed in one place, stopping after a named step, a step added by
registration, and many sessions on one pipeline at once without seeing each other."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import ClassVar

import pytest

from app import compose
from engines.answering.extract import ClauseVectorCache
from engines.session import Session
from engines.steps.base import BaseStep, StepOutput, TurnState
from tests.conftest import engine_over


def test_every_step_is_timed_and_the_record_is_built_from_the_outputs(pipeline) -> None:
    session = Session(pipeline, log_turns=False)
    stream = session.prepare("Thẻ SKU-4471 có phí thường niên bao nhiêu?", [])
    stream.text()
    record = stream.record
    ran = [name for name, _ in stream.state.outputs]
    assert ran == ["condense", "retrieve", "gate", "assemble", "answer"]  # the router is off in unit tests
    assert set(ran) | {"write", "total"} <= set(record.timings_ms)
    assert record.retrieved_doc_ids[0] == "card-sku-4471" and session.last_record is record


def test_stopping_after_a_named_step(pipeline) -> None:
    record = Session(pipeline, log_turns=False).run_until("retrieve", "Thẻ SKU-4417 phí bao nhiêu?", [])
    assert record.candidates and "gate" not in record.timings_ms and record.answer == ""
    with pytest.raises(KeyError, match="no such step"):
        Session(pipeline).run_until("reverse", "q", [])


@dataclass(frozen=True)
class Reversed(StepOutput):
    order: tuple[str, ...] = ()

    def apply(self, state: TurnState) -> TurnState:
        by_id = {n.node.node_id: n for n in state.nodes}
        return replace(state, nodes=tuple(by_id[i] for i in self.order))


class ReverseRerank(BaseStep):
    """A stand-in step that reorders: one file (here, the test) plus one registration."""

    name: ClassVar[str] = "reverse"

    def run(self, state: TurnState) -> Reversed:
        return Reversed(order=tuple(n.node.node_id for n in reversed(state.nodes)))


def test_a_step_is_added_by_registering_it(make_pipeline, monkeypatch) -> None:
    monkeypatch.setitem(compose.STEP_BUILDERS, "reverse", lambda parts: ReverseRerank())
    plain = make_pipeline()
    reranked = make_pipeline(steps=["condense", "retrieve", "reverse", "gate", "assemble", "answer"])
    assert "reverse" in reranked.step_names and "reverse" not in plain.step_names
    question = "Phí thường niên thẻ tín dụng?"
    before = Session(plain).run_until("assemble", question, []).context_node_ids
    after = Session(reranked).run_until("assemble", question, []).context_node_ids
    assert after == list(reversed(before)) and len(before) > 1
    with pytest.raises(Exception, match="unknown step"):
        make_pipeline(steps=["condense", "bogus"])


def test_many_sessions_on_one_pipeline_never_see_each_other(pipeline) -> None:
    questions = ["Thẻ SKU-4471 có phí thường niên bao nhiêu?", "Thẻ SKU-4417 có phí thường niên bao nhiêu?",
                 "Điều 4.2 lãi suất vay mua nhà?", "Hợp đồng thời vụ được nghỉ bao nhiêu ngày phép?"]
    expected = {q: engine_over(pipeline).chat(q).response for q in questions}  # one at a time

    def converse(i: int) -> list[tuple[str, str, str]]:
        engine = engine_over(pipeline)
        out = []
        for turn in range(3):
            question = questions[(i + turn) % len(questions)]
            answer = engine.chat(question, chat_history=[]).response
            out.append((question, answer, engine.last_record.question))
        assert [m.content for m in engine.chat_history][::2] == [q for q, _, _ in out]  # its own memory only
        return out

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(converse, range(16)))
    for conversation in results:
        for question, answer, recorded in conversation:
            assert recorded == question and answer == expected[question]


def test_clause_vector_cache_survives_concurrent_eviction() -> None:
    cache = ClauseVectorCache(capacity=8)
    errors: list[BaseException] = []

    def embed(texts: list[str]) -> list[list[float]]:
        return [[float(len(t))] for t in texts]

    def worker(offset: int) -> None:
        try:
            for round_ in range(200):
                texts = [f"clause {offset}-{round_}-{k}" for k in range(6)] + ["shared clause"]
                assert cache.vectors(texts, embed).tolist() == [[float(len(t))] for t in texts]
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) <= 8
