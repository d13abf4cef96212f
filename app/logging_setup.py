"""Logging set-up for the command-line entry points (the only place handlers are attached)."""

from __future__ import annotations

import logging
import os
import warnings


def configure_logging(verbose: bool = False) -> None:
    level = logging.DEBUG if verbose else getattr(logging, os.environ.get("TURNRAG_LOG_LEVEL", "WARNING").upper(), logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "chromadb", "bm25s", "urllib3", "sentence_transformers", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
