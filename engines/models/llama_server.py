"""The packaged local model behind llama.cpp's own OpenAI-compatible server.

:class:`LocalLlamaServer` starts ``xllamacpp.Server`` (llama.cpp's server code, in-process) on
127.0.0.1, a random port and a per-process API key, on first use. :class:`LocalOpenAILike` is
LlamaIndex's ``OpenAILike`` client pointed at it, so the local model is reached exactly the way
vLLM, Ollama or any OpenAI-compatible server is: one client path, tested once. The chat template
stored in the GGUF (Qwen ChatML) is applied by llama.cpp, so prompts look as the model was
trained on.

Operational notes (measured on 2 cores): about 1.9 GB RSS; llama.cpp's worker threads spin while
waiting, so any other busy process can slow generation several-fold; it logs to the process's
stderr, not to ``logging`` (``verbosity`` sets how much).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr

from engines.errors import ModelUnavailable
from engines.models.gguf import DEFAULT_CACHE_DIR, MODEL_NAME, assemble_gguf
from engines.models.openai_clients import OpenAILikeClient

logger = logging.getLogger(__name__)


def default_thread_count() -> int:
    """CPUs this process may run on (respects taskset/cgroup affinity, unlike cpu_count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class LocalLlamaServer:
    """llama.cpp's HTTP server for one GGUF; nothing loads until :meth:`start` (or the first request).

    ``parallel`` slots serve that many requests at once, each with the full ``n_ctx`` window
    (llama.cpp splits its total context between slots, so the total is ``n_ctx * parallel``);
    further requests queue inside the server.
    """

    def __init__(self, *, model_path: str | None = None, cache_dir: Path | None = None, n_ctx: int = 4096,
                 parallel: int = 1, n_threads: int | None = None, cache_ram_mib: int = 256,
                 verbosity: int = 1, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None) -> None:
        if n_ctx <= 0 or parallel <= 0:
            raise ValueError(f"n_ctx and parallel must be positive, got {n_ctx} and {parallel}")
        self.model_path = model_path
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else DEFAULT_CACHE_DIR.expanduser()
        self.n_ctx = n_ctx
        self.parallel = parallel
        self.n_threads = n_threads or default_thread_count()
        self.cache_ram_mib = cache_ram_mib
        self.verbosity = verbosity
        self.host, self.port = host, port  # port 0: a free one
        self._api_key = api_key or secrets.token_urlsafe(32)  # keeps other local users off the port
        self._server: Any = None
        self._base_url: str | None = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    @property
    def is_running(self) -> bool:
        return self._server is not None

    def start(self) -> tuple[str, str]:
        """(base URL ending in /v1, API key); loads the model once, concurrent callers wait for it."""
        with self._lock:
            if self._server is None:
                self._server, self._base_url = self._launch()
            return f"{self._base_url}/v1", self._api_key

    def close(self) -> None:
        """Free the model (about 1.9 GB); the next request starts the server again."""
        with self._lock:
            self._server = None
            self._base_url = None

    def _model_file(self) -> Path:
        if self.model_path is not None:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise ModelUnavailable(f"setting 'llm_model': {path} does not exist (give a .gguf file)")
            return path
        return assemble_gguf(self.cache_dir)

    def _launch(self) -> tuple[Any, str]:
        import xllamacpp

        model = self._model_file()
        params = xllamacpp.CommonParams()
        params.model.path = str(model)
        params.n_ctx = self.n_ctx * self.parallel
        params.n_parallel = self.parallel
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        params.cache_ram_mib = self.cache_ram_mib  # llama.cpp's own default is 8192 MiB
        params.reasoning_format = xllamacpp.common_reasoning_format.COMMON_REASONING_FORMAT_NONE
        params.verbosity = self.verbosity
        params.offline = True  # never let llama.cpp reach for a model hub
        params.api_keys = [self._api_key]
        params.hostnames = [self.host]
        params.port = self.port
        params.n_threads_http = self.parallel + 1
        params.endpoint_slots = False
        params.ui = False
        started = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ModelUnavailable(f"llama.cpp could not load {model} (n_ctx={self.n_ctx}, parallel={self.parallel}); "
                                   "rerun with verbosity=3 to see its log") from exc
        self.load_seconds = time.perf_counter() - started
        address = str(server.listening_address).rstrip("/")
        if not address.startswith("http"):
            address = f"http://{address}"
        logger.info("llama.cpp server for %s on %s in %.1f s (n_ctx=%d x %d slots, %d threads)", model.name,
                    address, self.load_seconds, self.n_ctx, self.parallel, self.n_threads)
        return server, address


class LocalOpenAILike(OpenAILikeClient):
    """``OpenAILike`` (a call's ``max_tokens`` honoured) whose server is the packaged model, started on the first request."""

    _server: LocalLlamaServer = PrivateAttr()

    def __init__(self, server: LocalLlamaServer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._server = server

    @property
    def server(self) -> LocalLlamaServer:
        return self._server

    @classmethod
    def class_name(cls) -> str:
        return "LocalOpenAILike"

    def _get_credential_kwargs(self, is_async: bool = False) -> dict[str, Any]:
        base_url, api_key = self._server.start()
        return {**super()._get_credential_kwargs(is_async), "base_url": base_url, "api_key": api_key}


def local_llm(server: LocalLlamaServer, *, max_tokens: int = 384, timeout_s: float = 120.0) -> LocalOpenAILike:
    """The packaged model as an OpenAI-compatible client (greedy decoding; no retries: a 1.5B
    generation repeated silently would double the turn)."""
    return LocalOpenAILike(
        server, model=Path(server.model_path).stem if server.model_path else MODEL_NAME,
        api_base="http://127.0.0.1/v1", api_key="set-on-start", context_window=server.n_ctx,
        max_tokens=max_tokens, is_chat_model=True, timeout=timeout_s, temperature=0.0, max_retries=0)
