"""BM25 for Vietnamese and English, with tokenizer settings that survive a reload.

The stock ``BM25Retriever`` tokenises with ``\\b\\w\\w+\\b`` and an English stemmer: "4.2" and
one-letter Vietnamese words vanish, "SKU-4471" splits, and after ``from_persist_dir`` the token
settings silently revert to defaults. Here tokenisation is a pure function driven by a small,
persisted :class:`TokenizerSettings`, and the retriever drops score-0 filler so it never returns
nodes that matched nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeWithScore,
    QueryBundle,
    TextNode,
)
from llama_index.retrievers.bm25 import BM25Retriever

from engines.retrieval.filters import NO_FILTER, MetadataFilter
from engines.text import normalize, searchable_text

logger = logging.getLogger(__name__)

#: A word, optionally joined to more words by ".", ",", "-" or "/" (no spaces), with an optional
#: trailing "%": keeps "4.2", "8,5%", "SKU-4471", "05/TD", "1.500.000" whole.
DEFAULT_TOKEN_PATTERN = r"(?u)\w+(?:[.,/\-]\w+)*%?"
SETTINGS_FILE = "tokenizer.json"
TOKENIZER_VERSION = 1


@dataclass(frozen=True)
class TokenizerSettings:
    """Everything that decides how text becomes BM25 tokens; persisted beside the index."""

    token_pattern: str = DEFAULT_TOKEN_PATTERN
    lowercase: bool = True
    split_compounds: bool = True
    stopwords: tuple[str, ...] = ()
    version: int = TOKENIZER_VERSION

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TokenizerSettings":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "stopwords" in known:
            known["stopwords"] = tuple(known["stopwords"])
        return cls(**known)


_LETTER = re.compile(r"(?u)[^\W\d_]")
_PARTS = re.compile(r"(?u)\w+")


def tokenize(text: str, settings: TokenizerSettings = TokenizerSettings()) -> list[str]:
    """Turn text into BM25 tokens: NFC, lower-case, codes kept whole, no stemming.

    A compound holding a letter ("SKU-4471", "05/TD", "full-time") is also emitted as its parts,
    so "SKU 4471" or "4471" still match; purely numeric compounds ("4.2", "1.500.000") stay whole
    because their parts ("4", "2") would match every clause and amount in the corpus.
    """
    text = normalize(text)
    if settings.lowercase:
        text = text.lower()
    stop = set(settings.stopwords)
    tokens: list[str] = []
    for match in re.finditer(settings.token_pattern, text):
        token = match.group(0)
        if token not in stop:
            tokens.append(token)
        if settings.split_compounds and _LETTER.search(token) and re.search(r"[.,/\-]", token):
            tokens.extend(p for p in _PARTS.findall(token) if p not in stop)
    return tokens


class VietEnBM25Retriever(BM25Retriever):
    """``BM25Retriever`` with our tokenizer, persisted settings and no score-0 filler."""

    def __init__(
        self,
        nodes: list[BaseNode] | None = None,
        *,
        tokenizer_settings: TokenizerSettings = TokenizerSettings(),
        existing_bm25: bm25s.BM25 | None = None,
        corpus: list[dict[str, Any]] | None = None,
        similarity_top_k: int = 20,
        callback_manager: CallbackManager | None = None,
        metadata_filter: MetadataFilter | None = None,
        _mask_cache: dict[MetadataFilter, np.ndarray] | None = None,
    ) -> None:
        self.tokenizer_settings = tokenizer_settings
        self.metadata_filter = metadata_filter or NO_FILTER
        self._mask_cache = {} if _mask_cache is None else _mask_cache
        if existing_bm25 is None:
            if not nodes:
                raise ValueError("BM25 needs at least one node; the index holds no chunks yet.")
            corpus_tokens = [tokenize(searchable_text(n.get_content(metadata_mode=MetadataMode.NONE), n.metadata), tokenizer_settings) for n in nodes]
            existing_bm25 = bm25s.BM25()
            existing_bm25.index(corpus_tokens, show_progress=False)
            corpus = [_node_to_row(n) for n in nodes]
        elif corpus is None:
            corpus = list(existing_bm25.corpus or [])
        # bm25s returns corpus rows instead of indexes when it holds the corpus: keep it ourselves.
        existing_bm25.corpus = None
        super().__init__(
            existing_bm25=existing_bm25,
            similarity_top_k=max(1, min(similarity_top_k, len(corpus))),
            skip_stemming=True,
            token_pattern=tokenizer_settings.token_pattern,
            callback_manager=callback_manager,
        )
        self.corpus = corpus
        self.similarity_top_k = similarity_top_k

    @property
    def num_docs(self) -> int:
        return len(self.corpus)

    def with_top_k(self, similarity_top_k: int) -> "VietEnBM25Retriever":
        """A retriever sharing this index with another top-k (no copy of the index)."""
        return self._sharing(similarity_top_k, self.metadata_filter)

    def with_filter(self, metadata_filter: MetadataFilter) -> "VietEnBM25Retriever":
        """A retriever sharing this index that only ever returns documents the filter allows."""
        return self._sharing(self.similarity_top_k, metadata_filter)

    def _sharing(self, similarity_top_k: int, metadata_filter: MetadataFilter) -> "VietEnBM25Retriever":
        return VietEnBM25Retriever(
            tokenizer_settings=self.tokenizer_settings,
            existing_bm25=self.bm25,
            corpus=self.corpus,
            similarity_top_k=similarity_top_k,
            callback_manager=self.callback_manager,
            metadata_filter=metadata_filter,
            _mask_cache=self._mask_cache,
        )

    def allowed_mask(self, metadata_filter: MetadataFilter) -> np.ndarray:
        """Which corpus rows the filter allows (computed once per filter and index)."""
        mask = self._mask_cache.get(metadata_filter)
        if mask is None:
            mask = np.fromiter((metadata_filter.matches(row.get("metadata", {})) for row in self.corpus),
                               dtype=bool, count=len(self.corpus))
            self._mask_cache[metadata_filter] = mask
        return mask

    def persist(self, path: str, encoding: str = "utf-8", **kwargs: Any) -> None:
        """Save the index, its corpus and the tokenizer settings that produced it."""
        os.makedirs(path, exist_ok=True)
        self.bm25.save(path, corpus=self.corpus, show_progress=False)
        with open(os.path.join(path, SETTINGS_FILE), "w", encoding=encoding) as f:
            json.dump(asdict(self.tokenizer_settings), f, ensure_ascii=False, indent=2)

    @classmethod
    def from_persist_dir(
        cls, path: str, encoding: str = "utf-8", similarity_top_k: int = 20, **kwargs: Any
    ) -> "VietEnBM25Retriever":
        """Load an index and restore the tokenizer settings it was built with."""
        settings_path = Path(path) / SETTINGS_FILE
        if not settings_path.exists():
            raise FileNotFoundError(
                f"{settings_path} is missing: this BM25 index was not written by turnrag; "
                "re-run `python -m app.ingest` to rebuild it."
            )
        settings = TokenizerSettings.from_dict(json.loads(settings_path.read_text(encoding)))
        bm25 = bm25s.BM25.load(path, load_corpus=True, show_progress=False)
        return cls(
            tokenizer_settings=settings,
            existing_bm25=bm25,
            similarity_top_k=similarity_top_k,
        )

    def vocabulary(self) -> list[str]:
        """Every token the index holds (chunk text, titles and the metadata it searches): what the documents can be
        asked about in their own words (``engines.answering.unknown_terms``)."""
        return list(self.bm25.vocab_dict)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query_tokens = tokenize(query_bundle.query_str, self.tokenizer_settings)
        vocab = self.bm25.vocab_dict
        query_tokens = [t for t in query_tokens if t in vocab]
        if not query_tokens or not self.corpus:
            return []
        if self.metadata_filter.is_empty:
            k = min(self.similarity_top_k, len(self.corpus))
            indexes, scores = self.bm25.retrieve([query_tokens], k=k, show_progress=False, n_threads=1)
            ranked = zip(indexes[0], scores[0])
        else:
            ranked = _top_allowed(self.bm25.get_scores(query_tokens), self.allowed_mask(self.metadata_filter),
                                  self.similarity_top_k)
        results: list[NodeWithScore] = []
        for idx, score in ranked:
            if float(score) <= 0.0:
                continue  # score-0 filler: matched no query token
            row = self.corpus[int(idx)]
            if not self.metadata_filter.matches(row.get("metadata", {})):
                continue  # never reached with a correct mask; the check costs nothing and guards leaks
            results.append(NodeWithScore(node=_row_to_node(row), score=float(score)))
        return results


def _top_allowed(scores: np.ndarray, allowed: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Indexes and scores of the k best allowed rows with a positive score, best first."""
    masked = np.where(allowed, scores, 0.0)
    candidates = np.flatnonzero(masked > 0.0)
    if candidates.size > k:
        candidates = candidates[np.argpartition(-masked[candidates], k - 1)[:k]]
    order = candidates[np.argsort(-masked[candidates], kind="stable")]
    return [(int(i), float(masked[i])) for i in order]


def _node_to_row(node: BaseNode) -> dict[str, Any]:
    return {
        "node_id": node.node_id,
        "text": node.get_content(metadata_mode=MetadataMode.NONE),
        "metadata": dict(node.metadata),
    }


def _row_to_node(row: dict[str, Any]) -> TextNode:
    return TextNode(id_=row["node_id"], text=row["text"], metadata=dict(row.get("metadata", {})))


def score_array(retriever: VietEnBM25Retriever, query: str) -> np.ndarray:
    """Raw BM25 scores of every document for one query (calibration and diagnostics)."""
    tokens = [t for t in tokenize(query, retriever.tokenizer_settings) if t in retriever.bm25.vocab_dict]
    if not tokens:
        return np.zeros(retriever.num_docs)
    return retriever.bm25.get_scores(tokens)
