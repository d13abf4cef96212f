"""The composition root: builds models, the index, retrievers, postprocessors and the engine
from one :class:`~app.config.Settings`. The only module that knows which concrete LLM, embedder
and store are in use, and the only one that touches LlamaIndex's global ``Settings``."""

from __future__ import annotations

import logging
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core import Settings as LlamaSettings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor

from app.config import Settings
from engines.bm25 import VietEnBM25Retriever
from engines.chat import ConversationalRAGEngine
from engines.documents import load_corpus
from engines.errors import IndexUnavailable
from engines.extractive import ClauseVectorCache
from engines.filters import MetadataFilter
from engines.fusion import HybridFusionRetriever
from engines.ingestion import ChunkingConfig, IngestReport, ProgressFn, ingest_documents, writer_lock
from engines.models import build_embedding, build_llm, embedding_model_id
from engines.refusal import RelevanceGate
from engines.router import LLMRouter, SemanticRouter, load_examples
from engines.store import ChromaVectorRetriever, Manifest, fetch_embeddings, get_collection, load_bm25, open_chroma
from engines.transforms import ActivationRules, QueryExpander

logger = logging.getLogger(__name__)


@dataclass
class Models:
    embed_model: BaseEmbedding
    llm: LLM
    condense_llm: LLM


def build_models(settings: Settings, *, llm: LLM | None = None, condense_llm: LLM | None = None,
                 embed_model: BaseEmbedding | None = None) -> Models:
    """Models from settings; explicit objects (tests, notebooks) take precedence."""
    embed_model = embed_model or build_embedding(settings.embedding)
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    common = dict(api_base=settings.llm_api_base, api_key=key, context_window=settings.llm_context_window,
                  max_tokens=settings.llm_max_tokens, timeout_s=settings.llm_timeout_s, cache_dir=settings.model_cache_dir)
    llm = llm or build_llm(settings.llm, model=settings.llm_model, **common)
    if condense_llm is None:
        if settings.condense_llm and (settings.condense_llm != settings.llm or settings.condense_llm_model):
            condense_llm = build_llm(settings.condense_llm, model=settings.condense_llm_model,
                                     setting="condense_llm", **common)
        else:
            condense_llm = llm
    # Applied for any LlamaIndex component a user adds later; ours receive models explicitly.
    LlamaSettings.llm = llm
    LlamaSettings.embed_model = embed_model
    return Models(embed_model=embed_model, llm=llm, condense_llm=condense_llm)


@dataclass
class Pipeline:
    """An opened index plus models: hands out retrievers and per-session engines."""

    settings: Settings
    models: Models
    collection: Any
    bm25: VietEnBM25Retriever | None
    manifest: Manifest | None
    postprocessors: list[BaseNodePostprocessor] = field(default_factory=list)

    _semantic_router: SemanticRouter | None = field(default=None, repr=False)
    #: shared by this pipeline's engines: clause vectors for quoted answers (same embedding model)
    clause_vectors: ClauseVectorCache = field(default_factory=ClauseVectorCache, repr=False)

    def session_filter(self, extra: MetadataFilter | dict | None = None) -> MetadataFilter:
        """The configured session filter (inactive documents out unless allowed), plus ``extra``."""
        s = self.settings
        base = MetadataFilter.parse(s.filters, where="setting 'filters' / TURNRAG_FILTERS")
        base = base.with_inactive(s.include_inactive or base.include_inactive)
        if extra is None:
            return base
        extra = extra if isinstance(extra, MetadataFilter) else MetadataFilter.parse(extra)
        # Fields narrow (the stricter wins); letting superseded documents in is a choice either side may make.
        return base.merged(extra).with_inactive(base.include_inactive or extra.include_inactive)

    def retriever(self, *, top_k: int | None = None, use_vector: bool = True, use_bm25: bool = True,
                  num_queries: int | None = None, filters: MetadataFilter | dict | None = None) -> HybridFusionRetriever:
        s = self.settings
        flt = self.session_filter(filters)
        retrievers: dict[str, Any] = {}
        if use_vector:
            retrievers["vector"] = ChromaVectorRetriever(self.collection, self.models.embed_model, s.candidate_k, flt)
        if use_bm25 and self.bm25 is not None:
            retrievers["bm25"] = self.bm25.with_top_k(s.candidate_k).with_filter(flt)
        if not retrievers:
            raise IndexUnavailable("no retriever available: the index holds no chunks. Ingest documents first.")
        weights = {"vector": s.vector_weight, "bm25": s.bm25_weight}
        return HybridFusionRetriever(
            retrievers, llm=self.models.condense_llm,
            weights={k: v for k, v in weights.items() if k in retrievers},
            similarity_top_k=top_k or s.top_k, rrf_k=s.rrf_k, num_queries=num_queries or s.num_queries,
        )

    def gate(self) -> RelevanceGate:
        return RelevanceGate(self.settings.calibrated("refusal_min_vector"), self.settings.refusal_min_bm25)

    def expander(self, transforms: list[str] | tuple[str, ...] | None = None,
                 activation: str | None = None) -> QueryExpander:
        s = self.settings
        rules = ActivationRules(activation or s.transform_activation, s.transform_short_words, s.transform_low_score)
        return QueryExpander(self.models.condense_llm, s.transforms if transforms is None else transforms, rules,
                             n_variants=s.multiquery_variants)

    def router(self, kind: str | None = None) -> SemanticRouter | LLMRouter | None:
        """The configured router; the semantic one is shared (its example vectors are embedded once)."""
        kind = kind or self.settings.router
        if kind == "off":
            return None
        if kind == "llm":
            return LLMRouter(self.models.condense_llm)
        if self._semantic_router is None:
            s = self.settings
            self._semantic_router = SemanticRouter(
                self.models.embed_model, load_examples(s.router_examples),
                min_confidence=s.calibrated("router_min_confidence"), margin=s.router_margin,
                followup_min_confidence=s.calibrated("router_followup_min_confidence"))
        return self._semantic_router

    def new_engine(self, *, condense_window: int | None = None, synthesize: bool = True,
                   record_log: Path | None | bool = True, transforms: list[str] | tuple[str, ...] | None = None,
                   activation: str | None = None, router: str | None = None,
                   **retriever_options: Any) -> ConversationalRAGEngine:
        """A fresh engine with its own memory: build one per conversation/session."""
        s = self.settings
        log = s.record_log if record_log is True else (record_log or None)
        return ConversationalRAGEngine(
            retriever=self.retriever(**retriever_options),
            llm=self.models.llm,
            condense_llm=self.models.condense_llm,
            gate=self.gate(),
            postprocessors=self.postprocessors,
            condense_window=s.condense_window if condense_window is None else condense_window,
            max_context_chars=s.max_context_chars,
            retrieve_answers=synthesize,
            record_log=log,
            router=self.router(router),
            expander=self.expander(transforms, activation),
            embed_model=self.models.embed_model,
            answer_mode=s.effective_answer_mode,
            swap_followups=s.swap_followups,
            answer_check=s.answer_check,
            clause_vectors=self.clause_vectors,
        )


def open_pipeline(settings: Settings, models: Models | None = None, **model_overrides: Any) -> Pipeline:
    """Open an existing index; refuse if it is missing or built with another embedding model."""
    models = models or build_models(settings, **model_overrides)
    index_dir = Path(settings.index_dir)
    manifest = Manifest.load(index_dir)
    if manifest is None:
        raise IndexUnavailable(
            f"No index in {index_dir} (no manifest.json). Build one with `python -m app.ingest PATH --index {index_dir}`."
        )
    manifest.check_embedding(embedding_model_id(settings.embedding), index_dir)
    client = open_chroma(index_dir, settings.chroma_host, settings.chroma_port)
    collection = get_collection(client, settings.collection, create=False)
    bm25 = load_bm25(index_dir, settings.candidate_k)
    return Pipeline(settings, models, collection, bm25, manifest, build_postprocessors(settings, models, collection))


def build_postprocessors(settings: Settings, models: Models, collection: Any = None) -> list[BaseNodePostprocessor]:
    """The conflict check, when enabled: stored vectors first, the embedder only as a last resort."""
    if not settings.conflicts:
        return []
    from engines.conflicts.postprocessor import ConflictPostprocessor

    return [ConflictPostprocessor(
        embed_model=models.embed_model,
        vector_lookup=partial(fetch_embeddings, collection) if collection is not None else None,
        similarity_threshold=settings.calibrated("conflict_similarity"),
        resolve_conflicts=settings.resolve_conflicts,
        llm=models.llm if settings.conflict_llm_check else None,
    )]


def ingest_path(settings: Settings, path: Path | str, *, prune: bool = False, embed_model: BaseEmbedding | None = None,
                on_progress: ProgressFn | None = None) -> IngestReport:
    """Validate the whole corpus, then bring the index in line with it."""
    docs = load_corpus(path)
    index_dir = Path(settings.index_dir)
    manifest = Manifest.load(index_dir)
    if manifest is not None:
        manifest.check_embedding(embedding_model_id(settings.embedding), index_dir)
    embed_model = embed_model or build_embedding(settings.embedding)
    with writer_lock(index_dir):
        client = open_chroma(index_dir, settings.chroma_host, settings.chroma_port)
        collection = get_collection(client, settings.collection, create=True)
        return ingest_documents(
            docs, collection=collection, index_dir=index_dir, embed_model=embed_model,
            embedding_model_id=embedding_model_id(settings.embedding),
            chunking=ChunkingConfig(settings.chunk_size, settings.chunk_overlap),
            prune=prune, on_progress=on_progress,
        )
