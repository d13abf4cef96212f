"""The ``mtrag`` part: retrieval only on mtRAG-pooled, every retriever x query form, by turn."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.schema import QueryBundle

from engines.answering.gate_calibration import DEFAULT_BUDGET, GateCalibration
from engines.answering.refusal import RelevanceGate
from engines.models.registry import calibration_for
from engines.retrieval.fusion import reciprocal_rank_fusion
from engines.session import Session
from engines.text import detect_language
from evals.bench.common import (
    WEIGHTED,
    Composer,
    Progress,
    bucket_means,
    doc_ids,
    load,
    query_forms,
    save,
    score,
)
from evals.configs import to_chat_messages
from evals.stats import percentile


def fuse(lists: list[list[str]], weights: list[float]) -> list[str]:
    return [d for d, _ in reciprocal_rank_fusion(lists, weights)] if lists else []


def run_mtrag(work: Path, domains: Sequence[str], composer: Composer, progress: Progress) -> dict:
    results: dict[str, Any] = load(work / "mtrag.json") or {}
    for domain in domains:
        pipeline, rows = composer.domain(domain)
        by_id = {r.key: r for r in rows}
        retriever = pipeline.retriever(top_k=10)
        session = Session(pipeline, log_turns=False)
        measured = GateCalibration.from_dict(pipeline.index.manifest.gate if pipeline.index.manifest else {})
        gates = {"product": pipeline.step("gate").gate,
                 "model": RelevanceGate(calibration_for(pipeline.config["embedding"]).refusal_min_vector,
                                        english_offset=calibration_for(pipeline.config["embedding"]).refusal_english_offset)}
        if measured is not None:
            gates["corpus"] = RelevanceGate(measured.min_vector(pipeline.config.get("refusal_budget", DEFAULT_BUDGET)),
                                            english_offset=calibration_for(pipeline.config["embedding"]).refusal_english_offset)
        rankings: dict[str, dict[str, dict[str, list[str]]]] = {}
        refused: dict[str, dict[str, bool]] = {name: {} for name in gates}
        condense_ms: list[float] = []
        for i, row in enumerate(rows):
            condensed = row.question
            if row.turn > 1:
                t0 = time.perf_counter()
                condensed = session.condense(row.question, to_chat_messages(row.history)).query
                condense_ms.append((time.perf_counter() - t0) * 1000)
            for form, texts in query_forms(row, condensed).items():
                runs = [retriever.run(QueryBundle(t)) for t in texts]
                lists: dict[str, list[list[str]]] = {"vector": [], "bm25": []}
                for run in runs:
                    for name, nodes in run:
                        lists[name].append(doc_ids(nodes))
                vec, bm25 = lists["vector"], lists["bm25"]
                ranked = {
                    "vector": fuse(vec, [1.0] * len(vec)),
                    "bm25": fuse(bm25, [1.0] * len(bm25)),
                    "hybrid": fuse(vec + bm25, [1.0] * (len(vec) + len(bm25))),
                    "hybrid-w": fuse(vec + bm25, [WEIGHTED["vector"]] * len(vec) + [WEIGHTED["bm25"]] * len(bm25)),
                }
                for name, ids in ranked.items():
                    rankings.setdefault(form, {}).setdefault(name, {})[row.key] = ids[:10]
                if form == "condense":
                    best = max((float(n.score or 0) for name, nodes in runs[0] if name == "vector" for n in nodes),
                               default=-1.0)
                    for name, gate in gates.items():
                        refused[name][row.key] = not gate.is_relevant({"vector": best}, detect_language(condensed))
            progress(f"mtrag {domain}", i + 1, len(rows))
        scores = {form: {name: bucket_means(score(r, by_id), by_id) for name, r in per.items()}
                  for form, per in rankings.items()}
        unans = [k for k, r in by_id.items() if r.type == "unanswerable"]
        answ = [k for k, r in by_id.items() if r.type != "unanswerable"]
        results[domain] = {
            "scores": scores, "n_rows": len(rows),
            "refusal": {"gates": {name: {
                "min_vector": gate.min_vector, "english_offset": gate.english_offset,
                "unanswerable": len(unans), "refused_unanswerable": sum(refused[name][k] for k in unans),
                "answerable": len(answ), "refused_answerable": sum(refused[name][k] for k in answ)}
                for name, gate in gates.items()}},
            "condense_ms_p50": percentile(condense_ms, 50), "condense_calls": len(condense_ms),
            "corpus_chunks": pipeline.index.collection.count(),
            # the product's fusion on this corpus: BM25's weight follows the corpus language (engines.retrieval.hybrid)
            "default_retriever": "hybrid-w" if pipeline.retrieval.config.bm25_weight == WEIGHTED["bm25"] else "hybrid",
        }
        save(work / "mtrag.json", results)
        save(work / f"mtrag-rankings-{domain}.json", rankings)
    return results
