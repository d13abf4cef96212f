"""Idempotent, crash-safe ingestion of ``SourceDocument`` records into the index.

Every chunk is stored under a deterministic id (``doc_id#n``) with its document's content hash
and chunk count, so the store itself tells which documents are complete and current:
a document is skipped only when all its chunks carry the current hash and their number matches.
New chunks are upserted before a document's stale chunks are deleted, so a process killed at
any point leaves every document either in its old form, its new form, or marked incomplete
for the next run to repair — never duplicated, never silently lost. BM25 and the manifest are
rebuilt last from what the store holds.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter

from engines.answering.gate_calibration import METHOD as GATE_METHOD
from engines.answering.gate_calibration import measure_corpus
from engines.corpus.anchors import chunk_anchors
from engines.corpus.documents import Corpus, SourceDocument
from engines.corpus.replacements import READING as REPLACEMENTS_READING
from engines.corpus.replacements import documents_from_chunks, find_replacements
from engines.corpus.screening import Skipped
from engines.corpus.store import Manifest, iter_chunks, publish, read_bm25_pointer, rebuild_bm25
from engines.corpus.tokens import TOKENIZER_NAME, load_tokenizer
from engines.errors import IndexUnavailable
from engines.io import exclusive_lock
from engines.retrieval.companion import companion_weight_for, sync_companion
from engines.text import language_shares, searchable_text

logger = logging.getLogger(__name__)

LOCK_NAME = "ingest.lock"


def writer_lock(index_dir: Path) -> Any:
    """One ingest at a time per index: two writers would each rebuild BM25 and the manifest from a
    store the other is changing. The OS drops the lock when a process dies, so a killed ingest
    never leaves the index locked."""
    index_dir = Path(index_dir)
    return exclusive_lock(index_dir / LOCK_NAME, wait=False, error=IndexUnavailable, busy_message=(
        f"{index_dir} is being written by another ingest (pid {{pid}}, lock {{path}}). "
        "Wait for it to finish, then run this again."))


ProgressFn = Callable[[int, int], None]


@dataclass
class IngestReport:
    """What an ingest run did, for the CLI summary and for tests."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: files of the source left out, with why (nothing was written for them), and warnings about
    #: files that went in (a giant line, pages without text)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    chunks_written: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.repaired or self.removed)


@dataclass(frozen=True)
class ChunkingConfig:
    """How documents become chunks; the fingerprint enters every chunk's version hash, so a change
    re-chunks (and re-embeds) exactly the documents it affects."""

    chunk_size: int = 400
    chunk_overlap: int = 50
    tokenizer: str = TOKENIZER_NAME  # what chunk sizes are counted in (engines.corpus.tokens)

    @property
    def fingerprint(self) -> str:
        # The default tokenizer is implied, so indexes built before it was named keep their hashes.
        suffix = "" if self.tokenizer == TOKENIZER_NAME else f"t{self.tokenizer}"
        return f"s{self.chunk_size}o{self.chunk_overlap}{suffix}"

    def splitter(self) -> SentenceSplitter:
        if self.tokenizer != TOKENIZER_NAME:
            raise ValueError(f"unknown chunk tokenizer {self.tokenizer!r}; available: {TOKENIZER_NAME}")
        return SentenceSplitter(chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap,
                                tokenizer=load_tokenizer())


def chunk_document(doc: SourceDocument, chunking: ChunkingConfig | SentenceSplitter) -> list[str]:
    """Sentence-aware chunks of a document's text (sizes in the config's tokenizer's tokens)."""
    splitter = chunking.splitter() if isinstance(chunking, ChunkingConfig) else chunking
    return [c for c in splitter.split_text(doc.text) if c.strip()]


def ingest_documents(
    docs: list[SourceDocument],
    *,
    collection: Any,
    index_dir: Path,
    embed_model: BaseEmbedding,
    embedding_model_id: str,
    chunking: ChunkingConfig = ChunkingConfig(),
    prune: bool = False,
    batch_size: int = 32,
    on_progress: ProgressFn | None = None,
    calibrate_gate: bool = True,
    companion: Companion | None = None,
) -> IngestReport:
    """Bring the index in line with ``docs``; see the module docstring for the guarantees. A
    :class:`Corpus` (what ``load_corpus`` returns) brings its left-out files and warnings into the report.

    ``calibrate_gate``: when the stored chunks changed (or the manifest has no calibration of the
    current method), measure the refusal gate on them (``engines.answering.gate_calibration``, a few hundred
    query embeddings) and record it in the manifest. ``companion``: a second embedder's collection,
    brought in line with the store's English chunks last (``engines.retrieval.companion``), when retrieval
    will fuse it on this corpus."""
    started = time.perf_counter()
    index_dir = Path(index_dir)
    manifest = Manifest.load(index_dir)
    if manifest is not None:
        manifest.check_embedding(embedding_model_id, index_dir)
    elif collection.count() > 0:
        raise IndexUnavailable(
            f"The collection '{collection.name}' already holds chunks but {index_dir} has no manifest, "
            "so the embedding model that wrote them is unknown. Use a new --index folder or collection."
        )

    if manifest is None:
        # Record the model before the first chunk is written: a killed first run stays resumable.
        manifest = Manifest(
            embedding_model=embedding_model_id,
            embedding_dim=len(embed_model.get_query_embedding("dimension probe")),
            chunk_size=chunking.chunk_size, chunk_overlap=chunking.chunk_overlap, collection=collection.name,
        )
        manifest.save(index_dir)

    report = IngestReport()
    if isinstance(docs, Corpus):
        report.skipped, report.warnings = list(docs.skipped), list(docs.warnings)
    stored = _stored_state(collection)
    plan: list[tuple[SourceDocument, str, str]] = []  # doc, version hash, reason
    for doc in docs:
        version = _version_hash(doc, chunking)
        state = stored.get(doc.doc_id)
        if state is None:
            plan.append((doc, version, "added"))
        elif state.is_complete(version):
            report.unchanged.append(doc.doc_id)
        elif version in state.hashes:
            plan.append((doc, version, "repaired"))
        else:
            plan.append((doc, version, "updated"))

    splitter = chunking.splitter() if plan else None
    chunked = [(doc, version, reason, chunk_document(doc, splitter)) for doc, version, reason in plan]
    total = sum(len(chunks) for *_, chunks in chunked)
    done = 0
    if on_progress:
        on_progress(0, total)
    pending: list[tuple[SourceDocument, str, str, list[str]]] = []
    pending_chunks = 0
    for item in chunked:
        pending.append(item)
        pending_chunks += len(item[3])
        if pending_chunks >= batch_size:
            report.embed_seconds += _write_batch(pending, collection, embed_model, stored)
            done += pending_chunks
            if on_progress:
                on_progress(done, total)
            pending, pending_chunks = [], 0
    if pending:
        report.embed_seconds += _write_batch(pending, collection, embed_model, stored)
        done += pending_chunks
        if on_progress:
            on_progress(done, total)
    for doc, _, reason, chunks in chunked:
        getattr(report, reason).append(doc.doc_id)
        report.chunks_written += len(chunks)

    if prune:
        source_ids = {d.doc_id for d in docs}
        for doc_id in sorted(set(stored) - source_ids):
            collection.delete(where={"doc_id": doc_id})
            report.removed.append(doc_id)

    report.total_chunks = collection.count()
    store_hash = _store_hash(collection)
    bm25_dir = read_bm25_pointer(index_dir)
    if report.changed or manifest.corpus_hash != store_hash or not bm25_dir:
        bm25_dir = rebuild_bm25(collection, index_dir)
    gate, languages, replacements = manifest.gate, manifest.languages, manifest.replacements
    if manifest.replacements_reading != REPLACEMENTS_READING:
        replacements = None  # read by an older detector: read again
    changed = store_hash != manifest.corpus_hash
    measure_gate = calibrate_gate and (changed or gate.get("method") != GATE_METHOD)
    if changed or not languages or measure_gate or replacements is None:  # one read of the store serves all
        stored_chunks = list(iter_chunks(collection))
        chunks = [(c["id"], c["text"] or "") for c in stored_chunks]
        if changed or not languages:
            languages = language_shares(text for _, text in chunks)
        if changed or replacements is None:
            replacements = [r.to_dict() for r in find_replacements(documents_from_chunks(stored_chunks))]
            for r in replacements:
                logger.info("%s replaces %s (%s): %s", r["new"], r["old"], r["basis"], r["evidence"][:120])
    if measure_gate:
        calibration = measure_corpus(collection, embed_model, chunks, seed=store_hash)
        gate = calibration.to_dict() if calibration is not None else {}
    companion_info: dict[str, Any] = {}
    if companion is not None and companion.wanted(languages):
        synced = sync_companion(collection, companion.collection, companion.embed_model,
                                on_progress=companion.on_progress)
        companion_info = {"model": companion.model_id, "collection": companion.collection.name,
                          "n_chunks": synced.total}
    new_manifest = Manifest(
        embedding_model=embedding_model_id,
        embedding_dim=manifest.embedding_dim,
        chunk_size=chunking.chunk_size,
        chunk_overlap=chunking.chunk_overlap,
        tokenizer=chunking.tokenizer,
        collection=collection.name,
        corpus_hash=store_hash,
        n_documents=len({*stored, *(d.doc_id for d in docs)} - set(report.removed)),
        n_chunks=report.total_chunks,
        bm25_dir=bm25_dir,
        gate=gate,
        languages=languages,
        replacements=replacements or [],
        replacements_reading=REPLACEMENTS_READING,
        companion=companion_info,
    )
    new_manifest.save(index_dir)
    publish(collection, new_manifest)  # replicas sharing a Chroma server see the new version
    report.seconds = time.perf_counter() - started
    logger.info(
        "ingest: %d added, %d updated, %d repaired, %d unchanged, %d removed, %d chunks in %.1fs",
        len(report.added), len(report.updated), len(report.repaired), len(report.unchanged),
        len(report.removed), report.total_chunks, report.seconds,
    )
    return report


@dataclass(frozen=True)
class Companion:
    """A second embedder and the collection its vectors of the English chunks go to."""

    collection: Any
    embed_model: BaseEmbedding
    model_id: str
    weight: float | None = None  # the setting; unset = by the corpus's main language
    on_progress: ProgressFn | None = None

    def wanted(self, languages: dict[str, float]) -> bool:
        """Whether retrieval will fuse this list on a corpus with these language shares: only then
        is it worth embedding (and loading the model)."""
        return (self.weight if self.weight is not None else companion_weight_for(languages)) > 0


@dataclass
class _DocState:
    ids: set[str] = field(default_factory=set)
    hashes: set[str] = field(default_factory=set)
    expected: set[int] = field(default_factory=set)

    def is_complete(self, version: str) -> bool:
        return self.hashes == {version} and self.expected == {len(self.ids)}


def _stored_state(collection: Any) -> dict[str, _DocState]:
    state: dict[str, _DocState] = defaultdict(_DocState)
    total = collection.count()
    for offset in range(0, total, 5000):
        batch = collection.get(include=["metadatas"], limit=5000, offset=offset)
        for chunk_id, meta in zip(batch["ids"], batch["metadatas"]):
            meta = meta or {}
            doc = state[str(meta.get("doc_id", chunk_id.split("#")[0]))]
            doc.ids.add(chunk_id)
            doc.hashes.add(str(meta.get("content_hash", "")))
            doc.expected.add(int(meta.get("n_chunks", -1)))
    return dict(state)


def _version_hash(doc: SourceDocument, chunking: ChunkingConfig) -> str:
    return hashlib.sha256(f"{doc.content_hash}:{chunking.fingerprint}".encode()).hexdigest()[:16]


def _write_batch(items: list[tuple[SourceDocument, str, str, list[str]]], collection: Any,
                 embed_model: BaseEmbedding, stored: dict[str, _DocState]) -> float:
    ids, texts, metadatas, to_embed = [], [], [], []
    for doc, version, _, chunks in items:
        # the page a chunk starts on and the heading above it, for converted documents
        places = chunk_anchors(doc.text, chunks, doc.anchors) if doc.anchors else [{}] * len(chunks)
        for n, (chunk, place) in enumerate(zip(chunks, places)):
            meta = dict(doc.metadata) | place | {"content_hash": version, "n_chunks": len(chunks), "chunk_index": n}
            ids.append(f"{doc.doc_id}#{n}")
            texts.append(chunk)
            metadatas.append(meta)
            to_embed.append(searchable_text(chunk, meta))
    started = time.perf_counter()
    embeddings = embed_model.get_text_embedding_batch(to_embed) if to_embed else []
    embed_seconds = time.perf_counter() - started
    if ids:
        collection.upsert(ids=ids, embeddings=embeddings, documents=texts, metadatas=metadatas)
    new_ids = set(ids)
    for doc, *_ in items:
        stale = sorted(stored.get(doc.doc_id, _DocState()).ids - new_ids)
        if stale:
            collection.delete(ids=stale)
    return embed_seconds


def _store_hash(collection: Any) -> str:
    pairs = sorted({(str(c["metadata"].get("doc_id")), str(c["metadata"].get("content_hash")))
                    for c in iter_chunks(collection)})
    return hashlib.sha256(repr(pairs).encode()).hexdigest()[:16]
