"""Counting tokens the way the answering model counts them, for the API's ``usage``.

Gateways (LiteLLM, cost dashboards) bill from ``usage``; a count of 0 or of words is wrong by a
factor. The packaged model and llama.cpp / vLLM servers say how they tokenise (``POST /tokenize``
at the server's root); OpenAI's models and servers without that endpoint are counted with
cl100k_base, bundled with LlamaIndex (close to, not exactly, what gpt-4o's o200k counts).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

TokenCounter = Callable[[str], int]


def _cl100k() -> TokenCounter:
    from engines.corpus.tokens import load_tokenizer

    encode = load_tokenizer()
    return lambda text: len(encode(text))


class ServerTokenCounter:
    """``POST {root}/tokenize`` on an OpenAI-compatible server, cl100k_base once the server says it
    has no such endpoint (remembered). ``where`` gives (root URL, API key), starting the server if
    it is the packaged one."""

    def __init__(self, where: Callable[[], tuple[str, str | None]], fallback: TokenCounter | None = None,
                 timeout_s: float = 10.0) -> None:
        self._where = where
        self._fallback = fallback
        self._supported: bool | None = None
        self._timeout_s = timeout_s
        self._lock = threading.Lock()

    def _cl100k(self, text: str) -> int:
        with self._lock:
            if self._fallback is None:
                self._fallback = _cl100k()
        return self._fallback(text)

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if self._supported is False:
            return self._cl100k(text)
        import httpx

        root, key = self._where()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            reply = httpx.post(f"{root}/tokenize", json={"content": text}, headers=headers, timeout=self._timeout_s)
        except httpx.HTTPError as exc:  # the server is down: the turn already said so; count anyway
            logger.warning("could not reach %s/tokenize (%s): usage counted with cl100k_base", root, exc)
            return self._cl100k(text)
        if reply.status_code in (404, 405, 501):
            logger.info("%s has no /tokenize: usage counted with cl100k_base", root)
            self._supported = False
            return self._cl100k(text)
        reply.raise_for_status()
        self._supported = True
        return len(reply.json()["tokens"])


def _root(api_base: str) -> str:
    base = api_base.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def token_counter(llm: Any) -> TokenCounter:
    """The counter for this LLM: its server's own tokenizer where it has one, else cl100k_base."""
    server = getattr(llm, "server", None)
    if server is not None and callable(getattr(server, "start", None)):  # the packaged model

        def local() -> tuple[str, str | None]:
            base, key = server.start()
            return _root(base), key

        return ServerTokenCounter(local)
    api_base = getattr(llm, "api_base", None)
    if api_base and "api.openai.com" not in str(api_base):
        key = getattr(llm, "api_key", None)
        return ServerTokenCounter(lambda: (_root(str(api_base)), key))
    return _cl100k()
