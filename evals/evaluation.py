"""The Python API: replay every configuration on the same index, score, compare, audit.

::

    from evals.dataset import load_rows
    from evals.evaluation import run_evaluation

    result = run_evaluation(pipeline, load_rows("data/eval/bank/dev/conversations.jsonl"),
                            configs=["lastturn", "condense"], k=5, retrieval_only=True)
    result.summary["condense"]["non_standalone/turn2+"]["hit@5"]   # -> 0.71
    result.summary["condense"]["refusal"]["false_refusal_rate"]     # -> 0.04
    result.comparison("condense", "non_standalone/turn2+")           # W/T/L and p vs the baseline

The keys are documented in docs/report-schema.md; ``result.to_json()`` is report.json.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

from engines.errors import ConfigError
from evals.audit import AuditEntry, audit_rows, audit_summary
from evals.compare import SEED, Comparison, compare_configs
from evals.configs import DEFAULT_CONFIGS, QueryConfig, resolve_configs
from evals.dataset import DatasetSanity, EvalRow, sanity
from evals.losses import chunk_texts, loss_summary, node_ids, with_losses
from evals.metrics import hit_metric, metric_names, score_rows, summarise
from evals.runner import ProgressFn, RowResult, replay

if TYPE_CHECKING:
    from engines.pipeline import Pipeline

logger = logging.getLogger(__name__)

#: Settings that change what the numbers mean; copied into the report's meta.
SETTINGS_IN_META = (
    "embedding", "llm", "llm_model", "condense_llm", "condense_llm_model", "chunk_size", "chunk_overlap",
    "top_k", "candidate_k", "rrf_k", "vector_weight", "bm25_weight", "num_queries", "condense_window",
    "refusal_min_vector", "refusal_calibration", "refusal_budget", "refusal_min_bm25", "conflicts", "resolve_conflicts",
    "reranker", "rerank_pool", "reranker_max_length",
)
HEADLINE_BUCKETS = ("all/all", "all/turn1", "all/turn2+", "non_standalone/turn2+")


@dataclass
class EvaluationResult:
    """Scored rows, summaries, comparisons and the rewrite audit of one evaluation run."""

    k: int
    mode: str
    retrieval_only: bool
    baseline: str
    configs: list[str]
    rows: dict[str, list[RowResult]]
    summary: dict[str, dict[str, Any]]
    comparisons: list[Comparison]
    audit: list[AuditEntry]
    dataset: DatasetSanity
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def metrics(self) -> tuple[str, ...]:
        return metric_names(self.k)

    def comparison(self, config: str, bucket: str = "all/all", metric: str | None = None) -> Comparison | None:
        """``config`` against the baseline on one bucket (hit@k unless ``metric`` is given)."""
        metric = metric or hit_metric(self.k)
        return next((c for c in self.comparisons
                     if c.config == config and c.bucket == bucket and c.metric == metric), None)

    def headline(self) -> dict[str, Any]:
        """A few numbers per configuration, for the top of the report (hit@k by bucket, refusal, cost)."""
        hit = hit_metric(self.k)
        configs = {}
        for name in self.configs:
            s = self.summary[name]
            configs[name] = {
                **{bucket: s[bucket][hit] for bucket in HEADLINE_BUCKETS},
                "refusal_rate": s["refusal"]["refusal_rate"],
                "false_refusal_rate": s["refusal"]["false_refusal_rate"],
                "llm_calls_per_turn": s["cost"]["llm_calls_per_turn"],
            }
        return {"metric": hit, "configs": configs}

    def to_json(self) -> dict[str, Any]:
        """report.json (schema: docs/report-schema.md)."""
        return {
            "summary": {"dataset": self.dataset.to_dict(), "headline": self.headline(),
                        "audit": audit_summary(self.audit)},
            "configs": {name: {"rows": [r.to_dict() for r in self.rows[name]], "summary": self.summary[name]}
                        for name in self.configs},
            "comparisons": [c.to_dict() for c in self.comparisons],
            "audit": [a.to_dict() for a in self.audit],
            "meta": self.meta,
        }


def run_evaluation(pipeline: "Pipeline", rows: Sequence[EvalRow],
                   configs: Iterable[str | QueryConfig] = DEFAULT_CONFIGS, *, k: int = 5,
                   retrieval_only: bool = True, mode: str = "rows", baseline: str | None = None,
                   compare_metrics: Sequence[str] | None = None, seed: int = SEED,
                   on_progress: ProgressFn | None = None, meta: dict[str, Any] | None = None) -> EvaluationResult:
    """Replay ``rows`` under each configuration on the same pipeline, then score and compare.

    ``baseline`` defaults to the first configuration; comparisons use hit@k and recall@k
    unless ``compare_metrics`` says otherwise. ``meta`` is merged into the report's meta
    (the CLI adds the dataset and corpus paths).
    """
    resolved = resolve_configs(configs)
    names = [c.name for c in resolved]
    baseline = baseline or names[0]
    if baseline not in names:
        raise ConfigError(f"baseline {baseline!r} is not among the configurations: {', '.join(names)}")
    metric_names(k)  # validates k before any replay
    top_k = pipeline.retrieval.config.top_k if pipeline.retrieval else k
    if k > top_k:
        logger.warning("k=%d but the engine keeps top_k=%d chunks: hit@%d can only see %d chunks", k, top_k, k, top_k)
    scored: dict[str, list[RowResult]] = {}
    for config in resolved:
        replayed = replay(pipeline, rows, config, retrieval_only=retrieval_only, mode=mode, on_progress=on_progress)
        scored[config.name] = score_rows(replayed, k, retrieval_only=retrieval_only)
    summary = {name: summarise(results, k, retrieval_only=retrieval_only) for name, results in scored.items()}
    if not retrieval_only:  # where each wrong answer lost its value, from the chunks' stored texts
        texts = chunk_texts(pipeline, node_ids(r for results in scored.values() for r in results))
        scored = {name: with_losses(results, texts) for name, results in scored.items()}
        for name, results in scored.items():
            summary[name]["answers"]["lost_at"] = loss_summary(results)
    metrics = list(compare_metrics or (hit_metric(k), f"recall@{k}"))
    comparisons = compare_configs(scored, baseline, metrics, seed=seed) if len(names) > 1 else []
    audit = [entry for c in resolved if c.audit for entry in audit_rows(scored[c.name], c.name)]
    info = run_meta(pipeline, resolved, k=k, mode=mode, retrieval_only=retrieval_only, baseline=baseline, seed=seed)
    info.update(meta or {})
    return EvaluationResult(k, mode, retrieval_only, baseline, names, scored, summary, comparisons, audit,
                            sanity(rows), info)


def run_meta(pipeline: "Pipeline", configs: Sequence[QueryConfig], **run: Any) -> dict[str, Any]:
    """What produced the numbers: run options, settings that matter, index identity, versions."""
    settings = pipeline.config
    manifest = pipeline.index.manifest if pipeline.index else None
    return {
        **run,
        "configs": {c.name: {"description": c.description, "engine_options": dict(c.engine_options)} for c in configs},
        "settings": {name: _plain(settings.get(name)) for name in SETTINGS_IN_META},
        "steps": list(pipeline.step_names),
        "gate_min_vector": _gate_min_vector(pipeline),
        "bm25_weight_in_force": pipeline.retrieval.config.bm25_weight if pipeline.retrieval else None,
        "index": {
            "dir": str(pipeline.index.index_dir) if pipeline.index else None,
            "embedding_model": manifest.embedding_model if manifest else None,
            "corpus_hash": manifest.corpus_hash if manifest else None,
            "n_documents": manifest.n_documents if manifest else None,
            "n_chunks": manifest.n_chunks if manifest else None,
        },
        "packages": {name: _version(name) for name in ("turnrag", "llama-index-core", "ranx")},
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _gate_min_vector(pipeline: "Pipeline") -> float | None:
    """The refusal gate's threshold in force (explicit, measured on the corpus, or the model's)."""
    gate = pipeline.step("gate") if pipeline.has_step("gate") else None
    return getattr(getattr(gate, "gate", None), "min_vector", None)


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
