"""A persistent cache of a greedy LLM's chat replies, so long evaluation runs can resume and so
several configurations sharing a step (the condense call) pay for it once.

Only for deterministic decoding (temperature 0, the local default): the same messages then get
the same reply, and a cached reply is exactly what the model would have said. Latencies of cached
calls are not real, which is why :attr:`CachedLLM.hits` is reported beside the results. The file is
JSONL, appended one reply at a time; a line cut short by a kill is ignored on the next load.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import LLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

logger = logging.getLogger(__name__)


class CachedLLM(CustomLLM):
    """Wraps ``inner``; ``chat`` and ``complete`` replies are looked up by model name + input."""

    path: str
    _inner: LLM = PrivateAttr()
    _cache: dict[str, str] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    hits: int = 0
    misses: int = 0

    def __init__(self, inner: LLM, path: Path | str, **kwargs: Any) -> None:
        super().__init__(path=str(path), **kwargs)
        self._inner = inner
        self._cache = _load(Path(path))

    @property
    def metadata(self) -> LLMMetadata:
        return self._inner.metadata

    def _key(self, kind: str, payload: Any) -> str:
        text = json.dumps([self._inner.metadata.model_name, kind, payload], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _lookup_or_call(self, key: str, call: Any) -> str:
        with self._lock:
            if key in self._cache:
                self.hits += 1
                return self._cache[key]
        text = call()
        with self._lock:
            self.misses += 1
            self._cache[key] = text
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"key": key, "text": text}, ensure_ascii=False) + "\n")
        return text

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        payload = [[_role(m.role), m.content or ""] for m in messages] + [sorted(kwargs.items())]
        text = self._lookup_or_call(self._key("chat", payload),
                                    lambda: self._inner.chat(messages, **kwargs).message.content or "")
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        text = self._lookup_or_call(self._key("complete", [prompt, sorted(kwargs.items())]),
                                    lambda: self._inner.complete(prompt, formatted=formatted, **kwargs).text)
        return CompletionResponse(text=text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        return self._inner.stream_complete(prompt, formatted=formatted, **kwargs)

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        return self._inner.stream_chat(messages, **kwargs)


def _role(role: Any) -> str:
    return str(getattr(role, "value", role))


def _load(path: Path) -> dict[str, str]:
    cache: dict[str, str] = {}
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        return cache
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            entry = json.loads(line)
            cache[entry["key"]] = entry["text"]
        except (json.JSONDecodeError, KeyError, TypeError):
            logger.warning("%s:%d: unreadable cache line skipped (a run killed mid-write?)", path, number)
    return cache
