"""The ``ingest`` and ``scale`` parts: ingestion throughput, and retrieval latency as the index grows."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from llama_index.core.schema import QueryBundle

from engines.postprocess import ReportingPostprocessor
from evals.bench.common import DOMAINS, Composer, Progress, save
from evals.stats import percentile


def run_ingest(work: Path, corpus: Path, n: int, composer: Composer) -> dict:
    result = composer.ingest_rate(corpus, n)
    save(work / "ingest.json", result)
    return result


def run_scale(work: Path, sizes: Sequence[int], n_queries: int, composer: Composer, progress: Progress) -> dict:
    """Latency of everything but the query embedding as the index grows (hashed vectors stand in
    for e5 so building 25k chunks takes minutes; the e5 query embedding time is measured apart)."""
    lines: list[str] = []
    for domain in DOMAINS:
        lines += (work / "mtrag" / f"{domain}_corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    questions = [json.loads(line)["question"] for d in DOMAINS
                 for line in (work / "mtrag" / f"{d}.jsonl").read_text(encoding="utf-8").splitlines()][:n_queries]
    embedder = composer.query_embedder()
    embedder.get_query_embedding("warm up")  # the model loads on first use
    t0 = time.perf_counter()
    for q in questions:
        embedder.get_query_embedding(q)
    embed_ms = (time.perf_counter() - t0) * 1000 / len(questions)
    result: dict = {"query_embedding_ms_e5": round(embed_ms, 2), "sizes": {}}
    for size in sizes:
        size = min(size, len(lines))
        corpus = work / f"scale-{size}.jsonl"
        corpus.write_text("".join(lines[:size]), encoding="utf-8")
        pipeline = composer.scale_pipeline(corpus, size)
        retriever = pipeline.retriever()
        conflicts = [p for p in pipeline.step("assemble").postprocessors if isinstance(p, ReportingPostprocessor)]
        embed = pipeline.models.embed_model
        timings = []
        for i, q in enumerate(questions):
            bundle = QueryBundle(q, embedding=embed.get_query_embedding(q))
            t0 = time.perf_counter()
            nodes = retriever.retrieve(bundle)
            for post in conflicts:
                post.postprocess_with_report(nodes, bundle, "en")
            timings.append((time.perf_counter() - t0) * 1000)
            progress(f"scale {size}", i + 1, len(questions))
        result["sizes"][str(pipeline.index.collection.count())] = {
            "p50_ms": round(percentile(timings, 50) or 0.0, 2), "p95_ms": round(percentile(timings, 95) or 0.0, 2)}
    save(work / "scale.json", result)
    return result
