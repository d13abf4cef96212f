"""The ``stock`` part: stock LlamaIndex against ours on the same chunks, vectors and LLM.

Stock is ``CondenseQuestionChatEngine.from_defaults`` over a plain ``VectorStoreIndex``; two cross
rows say where a gap comes from: the stock condenser's query through our hybrid retriever, and our
query through the stock vector-only retriever.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.chat_engine import CondenseQuestionChatEngine

from engines.chat import ConversationalRAGEngine
from engines.corpus.store import iter_chunks, make_node
from engines.pipeline import Pipeline
from engines.session import Session
from evals.bench.common import (
    STOCK_SIDES,
    Composer,
    Progress,
    bucket_means,
    doc_ids,
    load,
    peak_rss_mb,
    save,
    score,
)
from evals.buckets import POSITION_BUCKETS, position_buckets, turn_buckets
from evals.configs import to_chat_messages
from evals.dataset import EvalRow
from evals.llm_cache import CachedLLM
from evals.llm_counting import CountingLLM
from evals.stats import p50_p95


def stock_index(pipeline: Pipeline) -> VectorStoreIndex:
    """A plain VectorStoreIndex over the same chunks and stored vectors (no re-embedding)."""
    nodes = [make_node(c["id"], c["text"], c["metadata"], c["embedding"])
             for c in iter_chunks(pipeline.index.collection, include_embeddings=True)]
    return VectorStoreIndex(nodes, embed_model=pipeline.models.embed_model)


def stock_condense(engine: CondenseQuestionChatEngine, history: list[Any], question: str) -> str:
    """The stock engine's own condense hook: the object measured is LlamaIndex's, as shipped."""
    return engine._condense_question(history, question)  # noqa: SLF001 - LlamaIndex's, not ours


#: follow-ups split by whether they stand alone (labelled eval sets; mtRAG rows carry no such label).
TYPE_BUCKETS = ("standalone/turn2+", "non_standalone/turn2+")
STOCK_METRICS = ("recall@5", "hit@5", "ndcg@5")


def stock_buckets(per_row: dict[str, dict[str, float]], by_id: dict[str, EvalRow]) -> dict[str, dict[str, float | None]]:
    """Turn positions, then follow-ups by type where the rows are labelled standalone / non-standalone."""
    out = bucket_means(per_row, by_id, position_buckets, POSITION_BUCKETS, STOCK_METRICS)
    for name in TYPE_BUCKETS:
        row_type = name.split("/")[0]
        ids = {q: v for q, v in per_row.items() if by_id[q].type == row_type and "turn2+" in turn_buckets(by_id[q].turn)}
        if ids:
            out[name] = bucket_means(ids, by_id, lambda _turn: ("all",), ("all",), STOCK_METRICS)["all"]
    return out


def run_stock(work: Path, domain: str, sample_convs: int, composer: Composer, progress: Progress,
              reuse_turns: bool = False) -> dict:
    """``domain`` is an mtRAG domain or a labelled eval set the composer knows (``--stock-set``)."""
    pipeline, all_rows = composer.domain(domain, top_k=5)
    rows = [r for r in all_rows if r.gold_doc_ids]  # unanswerable turns have no gold passage to rank
    by_id = {r.key: r for r in rows}
    index = stock_index(pipeline)
    cached_llm = CachedLLM(pipeline.models.llm, work / "cache" / f"stock-condense-{domain}.jsonl")
    stock_retriever = index.as_retriever(similarity_top_k=5)
    stock = CondenseQuestionChatEngine.from_defaults(
        query_engine=index.as_query_engine(llm=cached_llm, similarity_top_k=5), llm=cached_llm)
    ours = Session(pipeline, log_turns=False)
    ours_retriever = pipeline.retriever(top_k=5)
    ranks: dict[str, dict[str, list[str]]] = {side: {} for side in STOCK_SIDES}
    stock_ms, ours_ms = [], []
    for i, row in enumerate(rows):
        history = to_chat_messages(row.history)
        stock_query = stock_condense(stock, history, row.question)
        t0 = time.perf_counter()
        nodes = stock_retriever.retrieve(stock_query)
        stock_ms.append((time.perf_counter() - t0) * 1000)
        ranks["stock"][row.key] = doc_ids(nodes)
        record = ours.run_until("assemble", row.question, history)
        ranks["ours"][row.key] = record.retrieved_doc_ids
        t0 = time.perf_counter()
        ours_retriever.retrieve(record.query)
        ours_ms.append((time.perf_counter() - t0) * 1000)
        ranks["stock query, our hybrid"][row.key] = doc_ids(ours_retriever.retrieve(stock_query))
        # a turn the router answered directly has no query; LlamaIndex's retriever cannot embed ""
        ranks["our query, vector only"][row.key] = doc_ids(stock_retriever.retrieve(record.query)) if record.query else []
        progress(f"stock vs ours {domain}", i + 1, len(rows))
    result: dict[str, Any] = {
        "domain": domain,
        "retrieval": {side: stock_buckets(score(ranked, by_id), by_id) for side, ranked in ranks.items()},
        "retrieval_ms": {"stock": p50_p95(stock_ms), "ours": p50_p95(ours_ms)},
    }
    data = load(work / "stock.json") or {}
    cached_turns = (data.get(domain) or {}).get("turns")
    if reuse_turns and cached_turns:
        result["turns"] = cached_turns  # the LLM part is the slow one; retrieval rows are recomputed
    elif sample_convs > 0:
        result["turns"] = whole_turns(composer, domain, pipeline, index, all_rows, sample_convs, progress)
    data[domain] = result
    save(work / "stock.json", data)
    return result


def whole_turns(composer: Composer, domain: str, pipeline: Pipeline, index: VectorStoreIndex, rows: Sequence[EvalRow],
                n_convs: int, progress: Progress) -> dict[str, Any]:
    """Both engines replay the same conversations live with the local LLM, streaming; a counting
    proxy in front of the one LLM says what each side sends it."""
    convs: dict[str, list[EvalRow]] = {}
    for row in rows:
        convs.setdefault(row.conv_id, []).append(row)
    chosen = sorted((c for c in convs.values() if len(c) >= 5), key=lambda c: c[0].conv_id)[:n_convs]
    out: dict[str, Any] = {"stock": [], "ours": []}
    total = sum(min(len(c), 6) for c in chosen) * 2
    done = 0
    for side in ("stock", "ours"):
        for conv in chosen:
            llm = CountingLLM(pipeline.models.llm)
            if side == "stock":
                engine: Any = CondenseQuestionChatEngine.from_defaults(
                    query_engine=index.as_query_engine(llm=llm, streaming=True, similarity_top_k=5), llm=llm)
            else:
                counted, _ = composer.domain(domain, top_k=5, llm=llm)
                engine = ConversationalRAGEngine(Session(counted, log_turns=False))
            for row in sorted(conv, key=lambda r: r.turn)[:6]:
                llm.reset()
                t0 = time.perf_counter()
                response = engine.stream_chat(row.question)
                first = None
                for _ in response.response_gen:
                    if first is None:
                        first = (time.perf_counter() - t0) * 1000
                total_ms = (time.perf_counter() - t0) * 1000
                out[side].append({"conv": row.conv_id, "turn": row.turn, "total_ms": round(total_ms),
                                  "first_token_ms": round(first or total_ms), "llm_calls": llm.calls,
                                  "prompt_tokens": llm.prompt_tokens})
                done += 1
                progress("whole turns", done, total)
    out["peak_rss_mb"] = round(peak_rss_mb())
    return out
