"""The ``turns`` part: per-step latency on the bundled sample, with peak memory.

Two passes over the same conversations of the bundled eval set, on the embedded defaults:
retrieval alone (the turn stopped after ``assemble``: condense, retrieve, gate, conflicts; no
answer) and whole turns with the local LLM, one pass per answer mode (streamed, so time to first
token is measured too). A benchmark, not a test: numbers depend on the machine; compare runs made
on the same machine in the same session.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.chat import ConversationalRAGEngine
from engines.corpus.store import package_versions
from engines.io import read_jsonl
from engines.pipeline import Pipeline
from engines.session import Session
from evals.bench.common import Composer, peak_rss_mb
from evals.buckets import POSITION_BUCKETS, position_buckets
from evals.stats import percentile

#: Timing keys in the order of a turn (engines/steps, then writing the answer).
STEPS = ("route", "condense", "retrieve", "gate", "rerank", "assemble", "answer", "check", "first_token", "write", "total")
Timings = dict[str, dict[str, list[float]]]


def conversations(dataset: Path, limit: int) -> list[list[str]]:
    convs: dict[str, list[tuple[int, str]]] = {}
    for line in read_jsonl(dataset):
        if line.error is None:
            convs.setdefault(line.value["conv_id"], []).append((line.value["turn"], line.value["question"]))
    return [[q for _, q in sorted(turns)] for turns in list(convs.values())[:limit]]


def run_pass(pipeline: Pipeline, convs: Sequence[Sequence[str]], answer: bool) -> Timings:
    """timings[step][turn bucket] -> ms per turn."""
    timings: Timings = {}
    for questions in convs:
        session = Session(pipeline, log_turns=False)
        engine = ConversationalRAGEngine(session)
        history: list[ChatMessage] = []
        for position, question in enumerate(questions, start=1):
            if answer:
                response = engine.stream_chat(question)
                for _ in response.response_gen:
                    pass
                record = session.last_record
            else:
                record = session.run_until("assemble", question, list(history))
                history += [ChatMessage(role=MessageRole.USER, content=question),
                            ChatMessage(role=MessageRole.ASSISTANT, content="(retrieval-only pass: no answer)")]
            for step, ms in (record.timings_ms if record else {}).items():
                for bucket in position_buckets(position):
                    timings.setdefault(step, {}).setdefault(bucket, []).append(ms)
    return timings


def table(title: str, timings: Timings) -> str:
    def cell(values: list[float]) -> str:
        return f"{percentile(values, 50):.0f} / {percentile(values, 95):.0f}" if values else "-"

    buckets = [b for b in POSITION_BUCKETS if b != "all"]
    lines = [f"### {title}", "", "| step (ms, p50 / p95) | " + " | ".join(buckets) + " |",
             "|---|" + "---|" * len(buckets)]
    for step in (s for s in STEPS if s in timings):
        lines.append(f"| {step} | " + " | ".join(cell(timings[step].get(b, [])) for b in buckets) + " |")
    return "\n".join(lines)


def run_turns(composer: Composer, dataset: Path, *, retrieval_convs: int, answer_convs: int,
              answer_modes: Sequence[str]) -> str:
    pipeline = composer.sample()
    pipeline.retriever().retrieve("khởi động")  # load the embedding model before timing
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    retrieval = run_pass(pipeline, conversations(dataset, retrieval_convs), answer=False)
    rss_retrieval = peak_rss_mb()
    whole = {mode: run_pass(composer.sample(mode), conversations(dataset, answer_convs), answer=True)
             for mode in answer_modes}
    return "\n\n".join([
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}; "
        f"packages {package_versions()}; embedding {pipeline.config.get('embedding')}, llm {pipeline.config.get('llm')}.",
        table("Retrieval alone (condense with the local LLM, no answer)", retrieval),
        *(table(f"Whole turn, answer_mode={mode} (streamed)", timings) for mode, timings in whole.items()),
        f"Peak RSS: {rss_before:.0f} MB after loading the embedder, {rss_retrieval:.0f} MB after the retrieval pass, "
        f"{peak_rss_mb():.0f} MB with the local LLM. Wall time {time.perf_counter() - started:.0f} s.",
    ])
