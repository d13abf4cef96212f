"""The embedder behind cross-language claim alignment (``crosslingual``): claim sentences embedded in
one batch per pair of passages, their vectors kept in the pipeline's clause vector cache (the same
chunks come back turn after turn, and the answer step embeds many of the same sentences)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engines.answering.extract import ClauseVectorCache
from engines.conflicts.crosslingual import ClaimSimilarity, CrossLanguage


def claim_similarity(embed_model: Any, cache: ClauseVectorCache | None = None) -> ClaimSimilarity:
    """``similarity(texts_a, texts_b)`` -> cosine matrix, for ``detect_pairs(claim_similarity=...)``."""
    vectors = cache if cache is not None else ClauseVectorCache()

    def similarity(texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        if not texts_a or not texts_b:
            return np.zeros((len(texts_a), len(texts_b)))
        found = vectors.vectors([*texts_a, *texts_b], embed_model.get_text_embedding_batch)
        found = found / np.maximum(np.linalg.norm(found, axis=1, keepdims=True), 1e-12)
        return found[: len(texts_a)] @ found[len(texts_a):].T

    return similarity


def cross_language(embed_model: Any, min_similarity: float | None,
                   cache: ClauseVectorCache | None = None) -> CrossLanguage | None:
    """The detector's cross-language comparison with this embedder, or None when its scale was never
    calibrated for it (an English-only embedder has nothing to align)."""
    if embed_model is None or min_similarity is None:
        return None
    return CrossLanguage(claim_similarity(embed_model, cache), min_similarity)
