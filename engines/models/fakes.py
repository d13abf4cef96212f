"""Test doubles that behave like real models, selectable with ``llm=fake`` / ``embedding=fake``.

``ScriptedLLM`` answers from a queue of scripted replies; with the queue empty it falls back to
a rule that imitates a weak real model (copies a follow-up back when asked to condense, answers
with the best-overlapping sentence of the excerpts, says NOT_FOUND when nothing overlaps). It
never echoes the prompt, unlike LlamaIndex's MockLLM. ``HashEmbedding`` embeds a bag of words
with SHA-256 buckets: deterministic across processes, lexical, no model.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from engines.answering.refusal import NOT_FOUND_MARKER
from engines.text import content_words

_LAST_MESSAGE = re.compile(r"(?:Last message: |<Follow Up Message>\n)(.*?)\n+(?:Standalone question:|<Standalone question>)", re.S)
_TRANSFORM_QUESTION = re.compile(r"Question: (.+)\n(?:Queries|Passage|Sub-questions|General):")
_EXCERPT = re.compile(r"\[\d+\] [^\n]*\n(.*?)(?=\n\n\[\d+\] |\n\nNotes:|\n\nQuestion|\Z)", re.S)
_QUESTION = re.compile(r"\nQuestion: (.*?)\nAnswer:", re.S)


class ScriptedLLM(CustomLLM):
    """A deterministic LLM: scripted replies first, then a weak-model imitation."""

    context_window: int = 4096
    num_output: int = 256
    _replies: deque = PrivateAttr(default_factory=deque)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    prompts: list[str] = []

    def __init__(self, replies: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._replies = deque(replies)
        self.prompts = []

    def enqueue(self, *replies: str) -> None:
        self._replies.extend(replies)

    @property
    def calls(self) -> int:
        return len(self.prompts)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=self.num_output,
                           model_name="scripted-fake", is_chat_model=False)

    def _reply(self, prompt: str) -> str:
        with self._lock:
            self.prompts.append(prompt)
            if self._replies:
                return self._replies.popleft()
        return imitate(prompt)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self._reply(prompt)

        def gen() -> CompletionResponseGen:
            so_far = ""
            for piece in re.findall(r"\S+\s*", text) or [text]:
                so_far += piece
                yield CompletionResponse(text=so_far, delta=piece)

        return gen()


def imitate(prompt: str) -> str:
    """What a small instruction model typically does with our prompts."""
    transform = _TRANSFORM_QUESTION.search(prompt)
    if transform:
        return transform.group(1).strip()  # weak models restate the question instead of transforming it
    if prompt.rstrip().endswith("Label:"):
        return "DOCS"
    condense = _LAST_MESSAGE.findall(prompt)
    if condense:
        return condense[-1].strip()  # weak condensers copy the question back
    question = _QUESTION.search(prompt)
    excerpts = _EXCERPT.findall(prompt)
    if not question or not excerpts:
        return NOT_FOUND_MARKER
    wanted = set(content_words(question.group(1)))
    best, best_overlap = "", 0
    for excerpt in excerpts:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", excerpt):
            overlap = len(wanted & set(content_words(sentence)))
            if overlap > best_overlap:
                best, best_overlap = sentence.strip(), overlap
    return best if best_overlap >= 2 else NOT_FOUND_MARKER


class HashEmbedding(BaseEmbedding):
    """Bag-of-words vectors hashed into ``dim`` signed buckets, L2-normalised."""

    dim: int = 256

    def __init__(self, dim: int = 256, **kwargs: Any) -> None:
        super().__init__(dim=dim, model_name=f"hash-{dim}", **kwargs)

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in content_words(text):
            digest = hashlib.sha256(word.encode("utf-8")).digest()
            index = int.from_bytes(digest[:4], "big") % self.dim
            vec[index] += 1.0 if digest[4] % 2 else -1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)
