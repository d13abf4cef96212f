"""Logging set-up for the command-line entry points (the only place handlers are attached).

It configures logging and nothing else: no environment variable is written (Chroma's telemetry
is off through its own client settings, the packaged models need no hub)."""

from __future__ import annotations

import logging
import os
import warnings

#: Libraries that log at INFO/DEBUG on every call; kept at WARNING unless -v.
NOISY = ("httpx", "chromadb", "bm25s", "urllib3", "sentence_transformers", "huggingface_hub", "openai")


def configure_logging(verbose: bool = False) -> None:
    level = logging.DEBUG if verbose else getattr(logging, os.environ.get("TURNRAG_LOG_LEVEL", "WARNING").upper(),
                                                  logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    warnings.filterwarnings("ignore", category=DeprecationWarning)
