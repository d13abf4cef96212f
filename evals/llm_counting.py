"""An LLM proxy that counts calls and prompt tokens, so two pipelines sharing one model can be
compared on what they send it (the benchmark's "LLM calls and prompt tokens per turn")."""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms import LLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from engines.corpus.tokens import load_tokenizer


class CountingLLM(CustomLLM):
    """Forwards every call to ``inner``; ``calls`` and ``prompt_tokens`` (tiktoken cl100k, the
    LlamaIndex default tokenizer: the same ruler for both sides) accumulate until :meth:`reset`."""

    calls: int = 0
    prompt_tokens: int = 0
    _inner: LLM = PrivateAttr()
    _tokens: Any = PrivateAttr()

    def __init__(self, inner: LLM, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._inner = inner
        self._tokens = load_tokenizer()

    @property
    def metadata(self) -> LLMMetadata:
        return self._inner.metadata

    def reset(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0

    def _count(self, text: str) -> None:
        self.calls += 1
        self.prompt_tokens += len(self._tokens(text))

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self._count("\n".join(m.content or "" for m in messages))
        return self._inner.chat(messages, **kwargs)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        self._count("\n".join(m.content or "" for m in messages))
        return self._inner.stream_chat(messages, **kwargs)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._count(prompt)
        return self._inner.complete(prompt, formatted=formatted, **kwargs)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        self._count(prompt)
        return self._inner.stream_complete(prompt, formatted=formatted, **kwargs)
