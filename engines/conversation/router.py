"""Routing each turn: DOCS (retrieve), DIRECT (chit-chat, no retrieval), OUT_OF_SCOPE (declined).

The semantic router embeds example utterances per route once and compares the question's
embedding with them: one query embedding, no LLM call, so it can run on every turn. It only
leaves DOCS when another route wins clearly (confidence and margin), because sending a real
question away costs more than letting the refusal gate handle a stray greeting. The LLM
router is the optional alternative (one call per turn).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.prompts import PromptTemplate

from engines.errors import ConfigError

logger = logging.getLogger(__name__)

DOCS, DIRECT, OUT_OF_SCOPE = "docs", "direct", "out_of_scope"
ROUTES = (DOCS, DIRECT, OUT_OF_SCOPE)

#: Vietnamese and English examples per route. DOCS holds the shapes of internal-document
#: questions, follow-ups included, so "Còn cái đó thì sao?" stays on DOCS.
DEFAULT_EXAMPLES: dict[str, tuple[str, ...]] = {
    DOCS: (
        "Nhân viên được nghỉ phép năm bao nhiêu ngày?",
        "Điều kiện vay mua nhà là gì?",
        "Lãi suất gói vay tiêu dùng hiện nay là bao nhiêu?",
        "Quy trình xin làm việc từ xa như thế nào?",
        "Phí trả nợ trước hạn được tính ra sao?",
        "Hồ sơ cần những giấy tờ gì?",
        "Điều 4.2 quy định gì?",
        "Còn hợp đồng thời vụ thì sao?",
        "Cái đó có được cộng dồn không?",
        "Thế còn trường hợp nghỉ ốm?",
        "Mẫu đơn nào cần dùng?",
        "How many days of annual leave do employees get?",
        "What is the API rate limit?",
        "What are the requirements for a home loan?",
        "What about seasonal contracts?",
        "Does that apply to probation staff too?",
        "Which form do I need to submit?",
        "What was the revenue in the audited report?",
    ),
    DIRECT: (
        "Xin chào", "Chào bạn", "Cảm ơn bạn nhiều", "Cảm ơn", "Tạm biệt", "Ok, hiểu rồi",
        "Bạn là ai?", "Bạn giúp được gì cho tôi?", "Tuyệt vời, cảm ơn nhé",
        "Hello", "Hi there", "Thanks a lot", "Thank you", "Goodbye", "Great, got it",
        "Who are you?", "What can you help me with?", "Good morning",
    ),
    OUT_OF_SCOPE: (
        "Thời tiết Hà Nội hôm nay thế nào?", "Kết quả bóng đá tối qua?", "Viết cho tôi một bài thơ",
        "Công thức nấu phở bò", "Giá vàng hôm nay bao nhiêu?", "Kể một câu chuyện cười",
        "Ai sẽ thắng bầu cử Mỹ?", "Dịch câu này sang tiếng Nhật", "Viết code Python sắp xếp danh sách",
        "What's the weather like tomorrow?", "Who won the football match last night?",
        "Write me a poem about the sea", "Give me a recipe for pancakes", "Tell me a joke",
        "What is the price of bitcoin today?", "Write a Python script to sort a list",
        "Who will win the next election?", "Recommend a good movie",
    ),
}

DIRECT_REPLY_PROMPT = (
    "You are the company's internal document assistant. The user's message is small talk "
    "(a greeting, thanks, a question about you). Reply in one or two short sentences, in the same "
    "language as the user, and offer to look things up in the internal documents. Do not state facts."
)
OUT_OF_SCOPE_REPLIES = {
    "vi": "Xin lỗi, câu hỏi này nằm ngoài phạm vi tài liệu nội bộ mà tôi hỗ trợ. "
          "Bạn có thể hỏi về quy định, chính sách hoặc sản phẩm của công ty.",
    "en": "Sorry, that is outside the internal documents I can help with. "
          "Ask me about the company's policies, rules or products.",
}

LLM_ROUTER_PROMPT = PromptTemplate(
    "Classify the user's message for an assistant that answers from a company's internal documents.\n"
    "DOCS: a question the internal documents (policies, products, procedures) might answer, follow-ups included.\n"
    "DIRECT: greetings, thanks, small talk, questions about the assistant.\n"
    "OUT_OF_SCOPE: anything else (weather, sports, general knowledge, writing poems or code).\n"
    "Reply with one word: DOCS, DIRECT or OUT_OF_SCOPE.\n\n"
    "Conversation so far (may be empty):\n{history}\n\nMessage: {question}\nLabel:"
)


@dataclass(frozen=True)
class RouteDecision:
    route: str
    confidence: float
    scores: dict[str, float] = field(default_factory=dict)
    method: str = "semantic"
    llm_calls: int = 0


def decide(scores: Mapping[str, float], min_confidence: float, margin: float) -> tuple[str, float]:
    """Pure rule: leave DOCS only for a route that is both close enough and clearly ahead of DOCS."""
    best = max(scores, key=lambda r: scores[r])
    if best == DOCS:
        return DOCS, scores[DOCS]
    if scores[best] >= min_confidence and scores[best] - scores.get(DOCS, float("-inf")) >= margin:
        return best, scores[best]
    return DOCS, scores.get(DOCS, 0.0)


def load_examples(path: Path | str | None) -> dict[str, tuple[str, ...]]:
    """Route examples from a JSON file ``{"docs": [...], "direct": [...], "out_of_scope": [...]}``."""
    if path is None:
        return dict(DEFAULT_EXAMPLES)
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"router examples file {path}: {exc}") from exc
    unknown = set(data) - set(ROUTES)
    missing = [r for r in ROUTES if not data.get(r)]
    if unknown or missing or not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()):
        raise ConfigError(f"router examples file {path}: give non-empty lists of strings for exactly "
                          f"{', '.join(ROUTES)} (unknown: {sorted(unknown)}, missing: {missing})")
    return {route: tuple(data[route]) for route in ROUTES}


class SemanticRouter:
    """Nearest-examples router: a route's score is the mean cosine of its ``top_n`` closest examples."""

    def __init__(self, embed_model: BaseEmbedding, examples: Mapping[str, Sequence[str]] | None = None, *,
                 min_confidence: float = 0.85, margin: float = 0.02, top_n: int = 2,
                 followup_min_confidence: float | None = None) -> None:
        self._embed_model = embed_model
        self._examples = {r: tuple(v) for r, v in (examples or DEFAULT_EXAMPLES).items()}
        self.min_confidence = min_confidence
        #: Mid-conversation bar (None = the same bar). Terse follow-ups ("Value?", "Gifting") look like
        #: small talk to an embedding; routing one away loses the answer, while retrieving for a "thanks"
        #: only costs a refusal, so mid-conversation a non-docs route must be more certain.
        self.followup_min_confidence = followup_min_confidence
        self.margin = margin
        self._top_n = top_n
        self._matrices: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()  # one router serves every session of a pipeline

    def _example_vectors(self) -> dict[str, np.ndarray]:
        """Embedded on first use, not at construction or import; concurrent first turns wait for it."""
        with self._lock:
            if self._matrices is None:
                matrices = {}
                for route, texts in self._examples.items():
                    # Embedded as queries: the question is compared with questions, not with passages.
                    vectors = np.asarray([self._embed_model.get_query_embedding(t) for t in texts], dtype=np.float32)
                    matrices[route] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
                self._matrices = matrices
            return self._matrices

    def scores(self, question: str) -> dict[str, float]:
        query = np.asarray(self._embed_model.get_query_embedding(question), dtype=np.float32)
        query /= np.linalg.norm(query) or 1.0
        out = {}
        for route, matrix in self._example_vectors().items():
            sims = np.sort(matrix @ query)[::-1][: self._top_n]
            out[route] = round(float(sims.mean()), 4)
        return out

    def route(self, question: str, history: str = "") -> RouteDecision:
        scores = self.scores(question)
        bar = self.min_confidence
        if history.strip() and self.followup_min_confidence is not None:
            bar = max(bar, self.followup_min_confidence)
        route, confidence = decide(scores, bar, self.margin)
        return RouteDecision(route, confidence, scores)


class LLMRouter:
    """One LLM call per turn; anything unparseable goes to DOCS."""

    def __init__(self, llm: LLM) -> None:
        self._llm = llm

    def route(self, question: str, history: str = "") -> RouteDecision:
        raw = self._llm.predict(LLM_ROUTER_PROMPT, question=question, history=history or "(none)")
        label = raw.strip().split()[0].strip(".:*\"'").upper() if raw.strip() else ""
        route = {"DOCS": DOCS, "DIRECT": DIRECT, "OUT_OF_SCOPE": OUT_OF_SCOPE}.get(label, DOCS)
        return RouteDecision(route, 1.0 if label else 0.0, {}, method="llm", llm_calls=1)


def out_of_scope_reply(language: str) -> str:
    return OUT_OF_SCOPE_REPLIES.get(language, OUT_OF_SCOPE_REPLIES["en"])
