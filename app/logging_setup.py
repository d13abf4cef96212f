"""Logging set-up for the command-line entry points (the only place handlers are attached).

It configures logging and nothing else: no environment variable is written (Chroma's telemetry
is off through its own client settings, the packaged models need no hub)."""

from __future__ import annotations

import logging
import os
import warnings

#: Libraries that log at INFO/DEBUG on every call; kept at WARNING unless -v.
NOISY = ("httpx", "chromadb", "bm25s", "urllib3", "sentence_transformers", "huggingface_hub", "openai")
#: Libraries whose warnings are about a file's internals, nothing a user can act on (pdfminer says "Could
#: not get FontBBox from font descriptor" on many valid PDFs); kept at ERROR unless -v. What matters
#: about a document (no text layer, pages without text) the ingest report says itself.
FILE_INTERNALS = ("pdfminer",)


def configure_logging(verbose: bool = False) -> None:
    level = logging.DEBUG if verbose else getattr(logging, os.environ.get("TURNRAG_LOG_LEVEL", "WARNING").upper(),
                                                  logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    for name in FILE_INTERNALS:
        logging.getLogger(name).setLevel(max(level, logging.ERROR))
    warnings.filterwarnings("ignore", category=DeprecationWarning)
