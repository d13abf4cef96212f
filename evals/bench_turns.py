"""`python -m evals.bench_turns`: per-turn latency on the sample corpus, with peak memory.

Two passes over the same conversations of the bundled eval set, on the embedded defaults:
retrieval alone (condense + retrieve + gate + conflict check, no answer call) and whole turns
with the local LLM (streaming, so time to first token is measured too). A benchmark, not a test:
numbers depend on the machine; compare runs made on the same machine in the same session.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from app.config import SAMPLE_CORPUS, load_settings
from app.factory import build_models, ingest_path, open_pipeline
from app.logging_setup import configure_logging
from engines.store import package_versions

DEFAULT_DATASET = Path(__file__).resolve().parent.parent / "data" / "eval" / "sample_conversations.jsonl"


def conversations(dataset: Path, limit: int) -> list[list[str]]:
    convs: dict[str, list[tuple[int, str]]] = {}
    for line in dataset.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            convs.setdefault(row["conv_id"], []).append((row["turn"], row["question"]))
    return [[q for _, q in sorted(turns)] for turns in list(convs.values())[:limit]]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stats(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{np.percentile(values, 50):.0f} / {np.percentile(values, 95):.0f}"


def run_pass(pipeline, convs: list[list[str]], answer: bool) -> dict[str, dict[int, list[float]]]:
    """timings[step][turn position] -> list of ms."""
    timings: dict[str, dict[int, list[float]]] = {}
    for questions in convs:
        engine = pipeline.new_engine(record_log=False)
        history: list[ChatMessage] = []
        for position, question in enumerate(questions, start=1):
            if answer:
                response = engine.stream_chat(question)
                for _ in response.response_gen:
                    pass
                record = engine.last_record
            else:
                record = engine.prepare_only(question, chat_history=list(history))
                history += [ChatMessage(role=MessageRole.USER, content=question),
                            ChatMessage(role=MessageRole.ASSISTANT, content="(retrieval-only pass: no answer)")]
            bucket = min(position, 4)
            for step, ms in record.timings_ms.items():
                timings.setdefault(step, {}).setdefault(bucket, []).append(ms)
    return timings


def table(title: str, timings: dict[str, dict[int, list[float]]]) -> str:
    steps = [s for s in ("condense", "retrieve", "postprocess", "extract", "check", "answer_first_token", "answer",
                         "total")
             if s in timings]
    lines = [f"### {title}", "", "| step (ms, p50 / p95) | turn 1 | turn 2 | turn 3 | turn 4+ |", "|---|---|---|---|---|"]
    for step in steps:
        lines.append(f"| {step} | " + " | ".join(stats(timings[step].get(b, [])) for b in (1, 2, 3, 4)) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench_turns", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=Path(".turnrag/bench-index"))
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--conversations", type=int, default=4, help="conversations for the whole-turn pass")
    parser.add_argument("--retrieval-conversations", type=int, default=20)
    parser.add_argument("--answer-modes", default="extract,generate",
                        help="whole-turn passes, one per answer mode (extract: quoted clauses; generate: the LLM writes)")
    parser.add_argument("--out", type=Path, help="write the Markdown here too")
    args = parser.parse_args(argv)
    configure_logging()
    settings = load_settings(index_dir=args.index, log_dir=None)
    ingest_path(settings, SAMPLE_CORPUS)
    pipeline = open_pipeline(settings, build_models(settings))
    pipeline.retriever().retrieve("khởi động")  # load the embedding model before timing
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    retrieval = run_pass(pipeline, conversations(args.dataset, args.retrieval_conversations), answer=False)
    rss_retrieval = peak_rss_mb()
    whole = {}
    for mode in [m.strip() for m in args.answer_modes.split(",") if m.strip()]:
        pipeline.settings.answer_mode = mode
        whole[mode] = run_pass(pipeline, conversations(args.dataset, args.conversations), answer=True)
    out = "\n\n".join([
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}; "
        f"packages {package_versions()}; embedding {settings.embedding}, llm {settings.llm}.",
        table("Retrieval alone (condense with the local LLM, no answer call)", retrieval),
        *(table(f"Whole turn, answer_mode={mode} (streamed)", timings) for mode, timings in whole.items()),
        f"Peak RSS: {rss_before:.0f} MB after loading the embedder, {rss_retrieval:.0f} MB after the retrieval pass, "
        f"{peak_rss_mb():.0f} MB with the local LLM. Wall time {time.perf_counter() - started:.0f} s.",
    ])
    print(out)
    if args.out:
        args.out.write_text(out + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
