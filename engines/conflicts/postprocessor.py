"""The LlamaIndex adapter: detect and resolve conflicts among retrieved passages.

Sits between retrieval and synthesis. Reuses the vectors Chroma returned with each chunk (one
batched embedding call only for nodes that arrive without one), runs the pure detector in
``engines.conflicts.graph``, keeps the newest passage per conflict cluster, and explains what it
did in a :class:`ConflictReport` that the turn record, the REPL and the evaluation all read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
from cachetools import LRUCache
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms import LLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from engines.conflicts.crosslingual import CrossLanguage
from engines.conflicts.graph import (
    DEFAULT_SIM_THRESHOLD,
    ConflictPair,
    Passage,
    analyze,
    detect_pairs,
    resolve,
)
from engines.conflicts.partial import without_spans
from engines.conflicts.relevance import DEFAULT_MIN_TARGET_OVERLAP, FocusClause, split_by_question
from engines.conflicts.replaced import replaced_pairs
from engines.conflicts.report import ConflictReport, build_report
from engines.corpus.documents import split_ids
from engines.postprocess import PostprocessOutcome
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
    similarity_threshold: float = Field(default=DEFAULT_SIM_THRESHOLD, description=(
        "Same-topic gate on the passages' cosine; the composition root passes the embedder's calibrated value."))
    resolve_conflicts: bool = True
    partial_supersession: bool | Literal["off", "amendments", "values", "all"] = Field(default=False, description=(
        "Set aside only the sentences of a superseded passage that conflict with the newer one, "
        "not the whole passage (engines.conflicts.partial): 'all' (true), 'values' (only where the newer "
        "passage changed values, inferred by date), 'amendments' (as 'values', and only when the newer "
        "document amends parts of another), 'off' (false)."))
    skip_years: bool = True
    llm: LLM | None = Field(default=None, exclude=True, description="Optional same-topic contradiction check.")
    question_focus: Callable[[str, list[NodeWithScore]], list[FocusClause]] | None = Field(
        default=None, exclude=True, description=("The question's best clauses among the nodes, as (node id, text); "
        "when given, only conflicts about them are resolved (engines.conflicts.relevance). None: every conflict."))
    focus_target_overlap: float = DEFAULT_MIN_TARGET_OVERLAP
    cross_language: CrossLanguage | None = Field(default=None, exclude=True, description=(
        "Passages in two languages compared claim by claim with a multilingual embedder "
        "(engines.conflicts.claim_vectors.cross_language); None: only by their words."))
    replaced_by: Callable[[], Mapping[str, Mapping[str, str]]] | None = Field(
        default=None, exclude=True, description=("The index's whole-document replacements (old doc id -> {new doc id: "
        "evidence}; ``Retrieval.replaced_by``): a replaced document's passages are set aside when a passage of its "
        "replacement is retrieved too (engines.conflicts.replaced). None: only detected conflicts count."))
    cache_size: int = Field(default=4096, ge=0, description="Parsed passages kept (chunks recur across turns).")

    _analyzed: LRUCache = PrivateAttr()
    _stored_vectors: LRUCache = PrivateAttr()  # (node id, text) -> the vector the store returned
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, __context: Any) -> None:
        self._analyzed = LRUCache(maxsize=max(1, self.cache_size))
        self._stored_vectors = LRUCache(maxsize=max(1, self.cache_size))

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
        passages = [self._passage(n) for n in nodes]
        doc_of = {n.node.node_id: n.node.metadata.get("doc_id", n.node.node_id) for n in nodes}
        # Two chunks of one document are one source: a revision quoting the rule it replaces is not a conflict.
        pairs = [p for p in detect_pairs(passages, similarity, sim_threshold=self.similarity_threshold,
                                            cross_language=self.cross_language)
                 if doc_of[p.a] != doc_of[p.b]]
        llm_calls = 0
        if self.llm is not None:
            extra, llm_calls = self._llm_pairs(passages, similarity, pairs)
            pairs = pairs + extra
        unrelated: list[ConflictPair] = []
        if pairs and self.question_focus is not None and query_bundle is not None:
            focus = self.question_focus(query_bundle.query_str, nodes)
            pairs, unrelated = split_by_question(pairs, passages, focus, min_target_overlap=self.focus_target_overlap)
        if self.replaced_by is not None:
            passages, declared = _with_replacements(passages, similarity, self.replaced_by())
            pairs = pairs + declared
        resolution = resolve(passages, pairs, resolve_conflicts=self.resolve_conflicts,
                             partial=self.partial_supersession)
        kept = set(resolution.kept_ids)
        cuts = dict(resolution.trimmed)
        by_id = {p.id: p for p in passages}
        kept_nodes = [_trimmed(n, by_id[n.node.node_id].text, cuts[n.node.node_id]) if n.node.node_id in cuts
                      else n.model_copy() for n in nodes if n.node.node_id in kept]
        report = build_report(nodes, resolution, unrelated=unrelated, llm_calls=llm_calls,
                              elapsed_ms=(time.perf_counter() - started) * 1000)
        return PostprocessOutcome(
            nodes=kept_nodes,
            report=report.to_dict(language),
            prompt_notes=report.prompt_notes(),
            answer_suffix=report.answer_suffix(language),
            llm_calls=llm_calls,
        )

    def _passage(self, nws: NodeWithScore) -> Passage:
        """Parsing numbers and cues is the costly part; chunks recur across turns, so keep it (bounded)."""
        meta = nws.node.metadata
        key = (nws.node.node_id, nws.node.get_content(metadata_mode=MetadataMode.NONE), str(meta.get("date") or ""),
               str(meta.get("title") or ""), str(meta.get("doc_id") or ""), self.skip_years,
               str(meta.get("supersedes") or ""), str(meta.get("department") or ""))
        with self._lock:
            cached = self._analyzed.get(key)
        if cached is None:
            node_id, text, date, title, doc_id, skip_years, supersedes, department = key
            cached = analyze(node_id, text, _date(date), lang=detect_language(text), skip_years=skip_years,
                             title=title, source=doc_id, supersedes=split_ids(supersedes), authority=department)
            with self._lock:
                self._analyzed[key] = cached
        return cached

    def _similarity(self, nodes: list[NodeWithScore]) -> np.ndarray:
        """Cosine matrix from stored vectors; embeds only the nodes that came without one, in one batch."""
        vectors: list[list[float] | None] = [n.node.embedding for n in nodes]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing and self.vector_lookup is not None:
            vectors = self._stored(nodes, vectors, missing)
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

    def _stored(self, nodes: list[NodeWithScore], vectors: list[list[float] | None],
                missing: list[int]) -> list[list[float] | None]:
        """``vectors`` with the store's vectors filled in at ``missing``: a store round trip (~1 ms)
        only for chunks not looked up before; keyed by text too, so a re-ingested chunk is looked up again."""
        keys = {i: (nodes[i].node.node_id, nodes[i].node.get_content(metadata_mode=MetadataMode.NONE)) for i in missing}
        with self._lock:
            known = {i: self._stored_vectors[k] for i, k in keys.items() if k in self._stored_vectors}
        unknown = [i for i in missing if i not in known]
        stored = self.vector_lookup([nodes[i].node.node_id for i in unknown]) if unknown else {}
        with self._lock:
            for i in unknown:
                if nodes[i].node.node_id in stored:
                    self._stored_vectors[keys[i]] = known[i] = stored[nodes[i].node.node_id]
        return [known.get(i, v) for i, v in enumerate(vectors)]

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


def _with_replacements(passages: list[Passage], similarity: np.ndarray, replaced_by: Mapping[str, Mapping[str, str]]
                       ) -> tuple[list[Passage], list[ConflictPair]]:
    """``passages`` with each replacement's passages declaring the documents they replace, and one
    "replaced" pair per replaced passage (to a passage of its replacement), for :func:`resolve`."""
    found = replaced_pairs(passages, replaced_by)
    if not found:
        return passages, []
    index = {p.id: i for i, p in enumerate(passages)}
    declares: dict[str, list[str]] = {}
    pairs = []
    for old, new, evidence in found:
        declares.setdefault(new, []).append(passages[index[old]].source_key)
        a, b = sorted((old, new), key=index.__getitem__)
        pairs.append(ConflictPair(a, b, "replaced", (evidence[:200],), float(similarity[index[a], index[b]])))
    passages = [dataclasses.replace(p, supersedes=tuple(dict.fromkeys((*p.supersedes, *declares[p.id]))))
                if p.id in declares else p for p in passages]
    return passages, pairs


def _trimmed(nws: NodeWithScore, text: str, spans: tuple[tuple[int, int], ...]) -> NodeWithScore:
    """A copy of the node without its stale sentences (spans index the passage's NFC text)."""
    copy = nws.model_copy()
    copy.node = nws.node.model_copy(update={"text": without_spans(text, spans)})
    return copy


def _date(value: Any) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
