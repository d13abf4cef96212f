"""What the benchmark parts share: the cache files, query forms, scoring by turn bucket, and the
:class:`Composer` contract through which parts get their pipelines."""

from __future__ import annotations

import json
import os
import platform
import resource
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from engines.io import atomic_write
from engines.pipeline import Pipeline
from evals.buckets import mtrag_buckets
from evals.dataset import EvalRow
from evals.stats import mean

DOMAINS = ("clapnq", "fiqa")
FORMS = ("lastturn", "questions", "prev+last", "lastturn&prev+last", "lastturn&questions", "rewrite", "condense",
         "condense+lastturn")
RETRIEVERS = ("bm25", "vector", "hybrid", "hybrid-w")
#: vector-weighted fusion: the issue's pre-measurement showed BM25 weak on these domains.
WEIGHTED = {"vector": 1.0, "bm25": 0.5}
PAPER = [  # full corpora, macro over 4 domains, Table 3 of arXiv 2501.03468
    ("BM25", "last turn", .20, .27, .18, .21), ("BM25", "rewrite", .25, .33, .22, .25),
    ("BGE-base 1.5", "last turn", .30, .38, .27, .30), ("BGE-base 1.5", "rewrite", .37, .47, .34, .38),
    ("ELSER", "last turn", .49, .58, .45, .49), ("ELSER", "rewrite", .52, .64, .48, .54),
]
#: retrieval rows of the stock comparison: the two pipelines, then the two cross rows.
STOCK_SIDES = ("stock", "ours", "stock query, our hybrid", "our query, vector only")
METRICS = ("recall@5", "recall@10", "ndcg@5", "ndcg@10")
Progress = Callable[[str, int, int], None]


class Composer(Protocol):
    """Builds the pipelines the parts measure (the CLI implements it with ``app.compose``)."""

    def domain(self, domain: str, *, top_k: int = 10, llm: Any = None) -> tuple[Pipeline, list[EvalRow]]:
        """The mtRAG domain's pipeline (converted and ingested when missing) and its rows, or those of a
        labelled eval set registered under that name; ``llm`` replaces both LLMs (to count what a
        pipeline sends)."""

    def ingest_rate(self, corpus: Path, n: int) -> dict[str, Any]:
        """Chunks/s of embedding alone and of a whole ingest, on the first ``n`` passages of ``corpus``."""

    def scale_pipeline(self, corpus: Path, size: int) -> Pipeline:
        """A pipeline over the first ``size`` passages with hashed vectors (fast to build)."""

    def query_embedder(self) -> Any:
        """The product's embedding model, for timing query embeddings apart."""

    def sample(self, answer_mode: str | None = None) -> Pipeline:
        """The bundled sample's pipeline with the embedded defaults (an answer mode may be forced)."""


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def save(path: Path, data: Any) -> None:
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1))


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def machine() -> dict[str, Any]:
    from engines.corpus.store import package_versions

    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "packages": package_versions()}


def query_forms(row: EvalRow, condensed: str | None) -> dict[str, list[str]]:
    """Each form's query texts (two texts = retrieved separately and fused)."""
    users = [*row.previous_user_turns(), row.question]
    forms = {"lastturn": [row.question], "questions": ["\n".join(users)], "prev+last": [" ".join(users[-2:])],
             "rewrite": [row.rewrite or row.question]}
    # history-aware without an LLM: the last turn retrieved beside a longer form, the two lists fused
    forms["lastturn&prev+last"] = _distinct([row.question, forms["prev+last"][0]])
    forms["lastturn&questions"] = _distinct([row.question, forms["questions"][0]])
    if condensed is not None:
        forms["condense"] = [condensed]
        forms["condense+lastturn"] = [condensed] if condensed == row.question else [condensed, row.question]
    return forms


def _distinct(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def bucket_means(per_row: dict[str, dict[str, float]], rows: dict[str, EvalRow],
                 buckets: Callable[[int], tuple[str, ...]] = mtrag_buckets,
                 names: Sequence[str] = ("turn1", "later", "all"),
                 metrics: Sequence[str] = METRICS) -> dict[str, dict[str, float | None]]:
    """Mean of each metric over the rows of each turn bucket, with the bucket's size."""
    out: dict[str, dict[str, float | None]] = {}
    for name in names:
        ids = [q for q in per_row if name in buckets(rows[q].turn)]
        out[name] = {"n": len(ids), **{m: _round(mean(per_row[q][m] for q in ids)) for m in metrics}}
    return out


def score(rankings: dict[str, list[str]], rows: dict[str, EvalRow]) -> dict[str, dict[str, float]]:
    from evals.metrics import retrieval_scores

    queries = {q: (ranked, rows[q].gold_doc_ids) for q, ranked in rankings.items() if rows[q].gold_doc_ids}
    s5, s10 = retrieval_scores(queries, 5), retrieval_scores(queries, 10)
    return {q: {"recall@5": s5[q]["recall@5"], "hit@5": s5[q]["hit@5"], "ndcg@5": s5[q]["ndcg@5"],
                "recall@10": s10[q]["recall@10"], "ndcg@10": s10[q]["ndcg@10"]} for q in queries}


def doc_ids(nodes: Sequence[Any]) -> list[str]:
    return [n.node.metadata.get("doc_id", n.node.node_id) for n in nodes]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
