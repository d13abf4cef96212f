"""Is the answering LLM there? What ``/readyz`` asks before it says ready.

The packaged model is there when its llama.cpp server is running; an OpenAI-compatible server when
it answers ``GET /models`` within a couple of seconds (the answer is kept a few seconds, so a
load balancer probing every second does not probe the LLM every second). OpenAI itself is not
probed: a paid call per probe, and its outages are not ours to route around.
"""

from __future__ import annotations

import threading
import time
from typing import Any


class LLMProbe:
    def __init__(self, llm: Any, *, timeout_s: float = 2.0, keep_s: float = 5.0) -> None:
        self.llm = llm
        self.timeout_s, self.keep_s = timeout_s, keep_s
        self._last: tuple[float, str | None] | None = None
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        """None when the LLM can answer, else what is wrong, in a sentence."""
        with self._lock:
            if self._last is not None and time.monotonic() - self._last[0] < self.keep_s:
                return self._last[1]
        found = self._check()
        with self._lock:
            self._last = (time.monotonic(), found)
        return found

    def _check(self) -> str | None:
        server = getattr(self.llm, "server", None)
        if server is not None and hasattr(server, "is_running"):
            return None if server.is_running else "the packaged LLM (llama.cpp server) is not running"
        api_base = str(getattr(self.llm, "api_base", "") or "")
        if not api_base or "api.openai.com" in api_base:
            return None
        import httpx

        key = getattr(self.llm, "api_key", None)
        try:
            reply = httpx.get(f"{api_base.rstrip('/')}/models", timeout=self.timeout_s,
                              headers={"Authorization": f"Bearer {key}"} if key else {})
        except httpx.HTTPError as exc:
            return f"the LLM server at {api_base} could not be reached ({type(exc).__name__})"
        if reply.status_code >= 500:
            return f"the LLM server at {api_base} answered {reply.status_code}"
        return None
