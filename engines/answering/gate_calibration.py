"""The refusal gate's threshold, measured on each corpus at ingest, with no labels.

Why: a cosine threshold belongs to an embedding model *and* a corpus (language, domain, passage
length). A value calibrated on one labelled set does not carry to another, and models nobody
calibrated (``hf:...``) had only a guess. So ingest measures two label-free samples on the corpus
itself and records them in the manifest:

* **pseudo-queries**: sentences drawn deterministically from the corpus's own chunks, each searched
  against the index. Their best cosines stand in for answerable questions: on the two Vietnamese
  dev corpora their 5th percentile fell just below that of real answerable questions (0.836 vs
  0.853 and 0.847 vs 0.863 with e5-small), so the budget bounds false refusal from above.
* **off-topic probes**: a fixed bilingual list of everyday questions that no organisation's
  documents answer. Their best cosines show how high an unrelated question scores here.

The threshold is the pseudo-queries' ``budget`` quantile: the share of questions like the corpus's
own sentences the gate may refuse. What the gate then does to the probes is recorded beside it,
so a corpus where unrelated questions score like its own sentences is visible, not silent.
A near-miss question (on topic, answer absent) scores like an answerable one; no cosine threshold
separates those, and this gate does not claim to. Where an embedder has a threshold measured with
labels, the product keeps that one by default (``refusal_calibration=auto``, ``app.compose.gate_threshold``).
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

METHOD = "pseudo-queries/v1"
#: Share of the corpus's own sentences the gate may refuse (chosen on the two dev sets, see docs/evaluation.md).
DEFAULT_BUDGET = 0.05
PSEUDO_QUERIES = 200
MIN_WORDS, MAX_WORDS = 6, 30
#: Under this share of off-topic probes refused, ingest warns that the gate cannot tell them apart.
WEAK_GATE_WARNING = 0.8

#: Everyday questions no organisation's documents answer (written for this purpose; not from any eval set).
OFF_TOPIC_PROBES: tuple[str, ...] = (
    "Chó con mấy tháng tuổi thì nên tiêm phòng dại?", "Cây lưỡi hổ cần tưới nước bao lâu một lần?",
    "Làm sao sửa vòi nước bị rỉ ở bồn rửa?", "Sao Hỏa cách Trái Đất bao xa?", "Vì sao lá cây có màu xanh lục?",
    "Mỗi ngày nên chạy bộ bao nhiêu phút?", "Người mới tập đàn piano nên luyện ngón thế nào?",
    "Quân mã trong cờ vua đi như thế nào?", "Sông nào dài nhất châu Phi?", "Nhà Lý dời đô ra Thăng Long năm nào?",
    "Nước sôi ở bao nhiêu độ trên đỉnh núi cao?", "Ngủ trưa bao lâu là tốt cho sức khỏe?",
    "Bao lâu thì nên thay dầu nhớt xe máy?", "Câu cá rô đồng nên dùng mồi gì?", "Cách đan khăn len cho người mới?",
    "Chụp ảnh ngược sáng thế nào cho đẹp?", "Khủng long tuyệt chủng từ khi nào?", "Cá voi xanh nặng bao nhiêu tấn?",
    "Núi lửa phun trào vì sao?", "Làm sao để hết nấc cụt?",
    "How often should I walk a beagle?", "Why are my tomato plant leaves curling?", "How do I unclog a bathroom sink?",
    "How far away is Mars from Earth?", "Why do cats purr?", "How many push-ups should a beginner do a day?",
    "What is the easiest chord to learn on a ukulele?", "How does castling work in chess?",
    "Which river is the longest in South America?", "When did the Western Roman Empire fall?",
    "Why does ice float on water?", "How long should a power nap last?", "How often should I rotate my car tyres?",
    "What bait is best for catching trout?", "How do I cast on stitches when knitting?",
    "What shutter speed freezes a bird in flight?", "What did the T. rex eat?", "How deep is the Mariana Trench?",
    "Why do volcanoes erupt?", "How do I get rid of hiccups?",
)

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


@dataclass(frozen=True)
class GateCalibration:
    """Sorted best cosines of the pseudo-queries and of the off-topic probes on one corpus."""

    pseudo_scores: tuple[float, ...]
    off_topic_scores: tuple[float, ...]
    method: str = METHOD

    def min_vector(self, budget: float = DEFAULT_BUDGET) -> float:
        """The cosine under which a share ``budget`` of the pseudo-queries falls."""
        if not 0 <= budget < 1:
            raise ValueError(f"refusal budget must be in [0, 1), got {budget}")
        if not self.pseudo_scores:
            raise ValueError("no pseudo-query scores: the corpus had no sentence to sample")
        return float(np.quantile(np.asarray(self.pseudo_scores), budget, method="lower"))

    def off_topic_refused(self, threshold: float) -> float:
        """Share of the off-topic probes a gate at ``threshold`` refuses."""
        if not self.off_topic_scores:
            return 0.0
        return float(np.mean(np.asarray(self.off_topic_scores) < threshold))

    def summary(self, budget: float = DEFAULT_BUDGET) -> str:
        t = self.min_vector(budget)
        return (f"refusal gate: best cosine >= {t:.3f} (refuses {budget:.0%} of {len(self.pseudo_scores)} sentences "
                f"of the corpus used as questions, {self.off_topic_refused(t):.0%} of "
                f"{len(self.off_topic_scores)} off-topic questions)")

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GateCalibration | None":
        """None for an empty record (an index ingested before calibration existed)."""
        if not data or not data.get("pseudo_scores"):
            return None
        return cls(tuple(float(x) for x in data["pseudo_scores"]),
                   tuple(float(x) for x in data.get("off_topic_scores", ())), str(data.get("method", METHOD)))


def sample_sentences(chunks: Sequence[tuple[str, str]], n: int = PSEUDO_QUERIES, seed: str = "") -> list[str]:
    """Up to ``n`` sentences of ``MIN_WORDS``..``MAX_WORDS`` words from ``(chunk_id, text)`` pairs,
    one per chunk as far as the chunks go; the same corpus and seed always give the same sample."""
    rng = random.Random(seed)
    per_chunk: list[list[str]] = []
    for _, text in sorted(chunks):
        sentences = [s.strip() for s in _SENTENCE_END.split(text) if MIN_WORDS <= len(s.split()) <= MAX_WORDS]
        if sentences:
            per_chunk.append(sentences)
    rng.shuffle(per_chunk)
    picked: list[str] = []
    while per_chunk and len(picked) < n:
        for sentences in per_chunk[: n - len(picked)]:
            picked.append(sentences.pop(rng.randrange(len(sentences))))
        per_chunk = [s for s in per_chunk if s]
    return picked


def calibrate(sentences: Sequence[str], best_cosine: Callable[[Sequence[str]], list[float]],
              probes: Sequence[str] = OFF_TOPIC_PROBES) -> GateCalibration:
    """Score the pseudo-queries and the probes with ``best_cosine`` (texts -> best cosine of each)."""
    pseudo = sorted(round(float(x), 4) for x in best_cosine(list(sentences))) if sentences else []
    off = sorted(round(float(x), 4) for x in best_cosine(list(probes))) if probes else []
    return GateCalibration(tuple(pseudo), tuple(off))


def chroma_best_cosine(collection: Any, embed_model: Any) -> Callable[[Sequence[str]], list[float]]:
    """Adapter: embed texts as queries, best cosine of each in a Chroma collection (cosine space)."""
    from engines.corpus.store import chroma_call

    def best(texts: Sequence[str]) -> list[float]:
        vectors = [embed_model.get_query_embedding(t) for t in texts]
        got = chroma_call(collection.query, query_embeddings=vectors, n_results=1, include=["distances"])
        return [1.0 - d[0] if d else -1.0 for d in got["distances"]]

    return best


def measure_corpus(collection: Any, embed_model: Any, chunks: Sequence[tuple[str, str]], seed: str,
                   n: int = PSEUDO_QUERIES) -> GateCalibration | None:
    """Calibrate on the collection's ``(chunk_id, text)`` pairs; None when they hold no sentence to sample."""
    sentences = sample_sentences(chunks, n=n, seed=seed)
    if not sentences:
        return None
    calibration = calibrate(sentences, chroma_best_cosine(collection, embed_model))
    refused = calibration.off_topic_refused(calibration.min_vector())
    logger.info("%s", calibration.summary())
    if refused < WEAK_GATE_WARNING:
        logger.warning("on this corpus off-topic questions score like its own sentences: the refusal gate "
                       "refuses only %.0f%% of off-topic probes at its budget", refused * 100)
    return calibration
