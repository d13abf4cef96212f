"""The LlamaIndex adapter: detect and resolve conflicts among retrieved passages.

Sits between retrieval and synthesis. Reuses the vectors Chroma returned with each chunk (one
batched embedding call only for nodes that arrive without one), runs the pure detector in
``engines.conflicts.graph``, keeps the newest passage per conflict cluster, and explains what it
did in a :class:`ConflictReport` that the turn record, the REPL and the evaluation all read.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import LLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from engines.chat import PostprocessOutcome
from engines.conflicts.graph import ConflictPair, Passage, analyze, detect_pairs, resolve
from engines.conflicts.report import ConflictReport, build_report
from engines.text import detect_language

logger = logging.getLogger(__name__)

LLM_CHECK_PROMPT = """\
Two passages from a company's documents are about the same topic.
Passage A: {a}
Passage B: {b}
Can both passages be true at the same time? Answer with one word: YES or NO."""


class ConflictPostprocessor(BaseNodePostprocessor):
    """Drops the older side of each dated conflict cluster; reports every conflict it saw."""

    embed_model: BaseEmbedding | None = Field(default=None, exclude=True)
    vector_lookup: Callable[[list[str]], dict[str, list[float]]] | None = Field(
        default=None, exclude=True, description="Stored vectors by node id (the vector store), tried before embedding.")
    similarity_threshold: float = 0.68
    resolve_conflicts: bool = True
    skip_years: bool = True
    llm: LLM | None = Field(default=None, exclude=True, description="Optional same-topic contradiction check.")

    @classmethod
    def class_name(cls) -> str:
        return "ConflictPostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        language = detect_language(query_bundle.query_str) if query_bundle else "vi"
        return self.postprocess_with_report(nodes, query_bundle, language).nodes

    def postprocess_with_report(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None,
                                language: str) -> PostprocessOutcome:
        started = time.perf_counter()
        if len(nodes) < 2:
            report = ConflictReport(checked=len(nodes))
            return PostprocessOutcome([n.model_copy() for n in nodes], report.to_dict(language))
        similarity = self._similarity(nodes)
        passages = [_passage(n, self.skip_years) for n in nodes]
        doc_of = {n.node.node_id: n.node.metadata.get("doc_id", n.node.node_id) for n in nodes}
        # Two chunks of one document are one source: a revision quoting the rule it replaces is not a conflict.
        pairs = [p for p in detect_pairs(passages, similarity, sim_threshold=self.similarity_threshold)
                 if doc_of[p.a] != doc_of[p.b]]
        llm_calls = 0
        if self.llm is not None:
            extra, llm_calls = self._llm_pairs(passages, similarity, pairs)
            pairs = pairs + extra
        resolution = resolve(passages, pairs, resolve_conflicts=self.resolve_conflicts)
        kept = set(resolution.kept_ids)
        kept_nodes = [n.model_copy() for n in nodes if n.node.node_id in kept]
        report = build_report(nodes, resolution, llm_calls=llm_calls,
                              elapsed_ms=(time.perf_counter() - started) * 1000)
        return PostprocessOutcome(
            nodes=kept_nodes,
            report=report.to_dict(language),
            prompt_notes=report.prompt_notes(),
            answer_suffix=report.answer_suffix(language),
        )

    def _similarity(self, nodes: list[NodeWithScore]) -> np.ndarray:
        """Cosine matrix from stored vectors; embeds only the nodes that came without one, in one batch."""
        vectors: list[list[float] | None] = [n.node.embedding for n in nodes]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing and self.vector_lookup is not None:
            stored = self.vector_lookup([nodes[i].node.node_id for i in missing])
            for i in missing:
                vectors[i] = stored.get(nodes[i].node.node_id)
            missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            if self.embed_model is None:
                raise ValueError("nodes arrived without embeddings and no embed_model was given")
            texts = [nodes[i].node.get_content(metadata_mode=MetadataMode.NONE) for i in missing]
            for i, vec in zip(missing, self.embed_model.get_text_embedding_batch(texts)):
                vectors[i] = vec
        matrix = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms == 0, 1.0, norms)
        return np.clip(matrix @ matrix.T, -1.0, 1.0)

    def _llm_pairs(self, passages: list[Passage], similarity: np.ndarray,
                   found: list[ConflictPair]) -> tuple[list[ConflictPair], int]:
        """Ask the LLM only about same-topic pairs the heuristics did not already flag."""
        flagged = {frozenset((p.a, p.b)) for p in found}
        extra, calls = [], 0
        for i in range(len(passages)):
            for j in range(i + 1, len(passages)):
                a, b = passages[i], passages[j]
                if similarity[i, j] < self.similarity_threshold or frozenset((a.id, b.id)) in flagged:
                    continue
                calls += 1
                verdict = self.llm.complete(LLM_CHECK_PROMPT.format(a=a.text[:1200], b=b.text[:1200])).text
                if verdict.strip().upper().startswith("NO"):
                    extra.append(ConflictPair(a.id, b.id, "llm", ("LLM: cannot both be true",), float(similarity[i, j])))
        return extra, calls


def _passage(nws: NodeWithScore, skip_years: bool) -> Passage:
    meta = nws.node.metadata
    text = nws.node.get_content(metadata_mode=MetadataMode.NONE)
    return _analyze(nws.node.node_id, text, str(meta.get("date") or ""), str(meta.get("title") or ""),
                    str(meta.get("doc_id") or ""), skip_years)


@functools.lru_cache(maxsize=4096)
def _analyze(node_id: str, text: str, date: str, title: str, doc_id: str, skip_years: bool) -> Passage:
    """Parsing numbers and cues is the costly part; chunks recur across queries, so cache it."""
    return analyze(node_id, text, _date(date), lang=detect_language(text), skip_years=skip_years, title=title,
                   source=doc_id)


def _date(value: Any) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
