"""Decide, before any answer is written, whether retrieval found anything relevant at all.

Judged on raw per-retriever scores (cosine for the vector side, BM25 for the lexical side),
never on fused RRF scores, which are rank-based and look the same for good and bad result
lists. The thresholds are calibrated on labelled data with ``python -m evals.calibrate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REFUSALS = {
    "vi": "Xin lỗi, tôi không tìm thấy thông tin này trong tài liệu.",
    "en": "Sorry, I could not find this in the documents.",
}
#: The answer prompt asks the model to reply with exactly this when the context lacks the answer.
NOT_FOUND_MARKER = "NOT_FOUND"


@dataclass(frozen=True)
class RelevanceGate:
    """Relevant when the best cosine reaches ``min_vector``, or the best BM25 reaches ``min_bm25``.

    ``min_bm25=None`` disables the lexical path (BM25 scores depend on query length and corpus).
    ``english_offset``: how much lower an English question's cosines run on this embedder; its bar is
    ``min_vector - english_offset`` (e5-small scores English questions about 0.04 below Vietnamese ones
    that its documents answer as well, so one bar refused English questions the passages answered).
    """

    min_vector: float
    min_bm25: float | None = None
    english_offset: float = 0.0

    def min_vector_for(self, language: str | None) -> float:
        return self.min_vector - (self.english_offset if language == "en" else 0.0)

    def max_scores(self, raw_scores: Iterable[Mapping[str, float]]) -> dict[str, float]:
        best: dict[str, float] = {}
        for scores in raw_scores:
            for name, value in scores.items():
                best[name] = max(best.get(name, float("-inf")), value)
        return best

    def is_relevant(self, best: Mapping[str, float], language: str | None = None) -> bool:
        if best.get("vector", float("-inf")) >= self.min_vector_for(language):
            return True
        return self.min_bm25 is not None and best.get("bm25", float("-inf")) >= self.min_bm25


def refusal_message(language: str) -> str:
    return REFUSALS.get(language, REFUSALS["en"])


def starts_with_not_found(text: str) -> bool:
    return text.lstrip().lstrip("*_`\"'[").upper().startswith(NOT_FOUND_MARKER)


NOT_SAID = {"vi": "Tài liệu không nói điều này. Các đoạn gần nhất:", "en": "The documents do not say. The closest passages:"}
#: When the question names what no document mentions: which words, then where the closest passages are.
NEVER_MENTIONED = {"vi": "Tài liệu không nhắc đến {terms}, nên không trả lời được câu này. Các đoạn gần nhất:",
                   "en": "The documents never mention {terms}, so they do not answer this. The closest passages:"}


def not_said(language: str, nodes: Sequence[Any], shown: int = 3, *, terms: Sequence[str] = ()) -> str:
    """A plain refusal and where the product looked: the titles of the closest passages (``NodeWithScore``s);
    with ``terms``, the words of the question no document mentions."""
    titles = list(dict.fromkeys(str(n.node.metadata.get("title") or n.node.metadata.get("doc_id") or "")
                                for n in nodes[:shown]))
    head = (NEVER_MENTIONED.get(language, NEVER_MENTIONED["en"]).format(terms=", ".join(f"“{t}”" for t in terms))
            if terms else NOT_SAID.get(language, NOT_SAID["en"]))
    return "\n".join([head] + [f"- {t}" for t in titles if t])
