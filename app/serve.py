"""`python -m app.serve [--host 127.0.0.1] [--port 8000] [--index DIR]`: the chat service.

OpenAI-compatible (`POST /v1/chat/completions`, `GET /v1/models`) and session APIs
(`/v1/sessions`, SSE with `Accept: text/event-stream`), a web page at `/`, `/healthz`,
`/readyz`, `/metrics`. With no index it ingests the bundled sample first, like the REPL. API keys
come from the TOML file named by TURNRAG_API_KEYS; without one the service binds loopback only.
Sessions are kept in TURNRAG_SESSION_STORE (a SQLite file beside the index by default, or
redis://... for replicas).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys
import time
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from rich.console import Console

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_models, open_pipeline
from app.config import SAMPLE_CORPUS, Settings
from app.ingest import ensure_index
from app.logging_setup import configure_logging
from app.service.admission import Admission
from app.service.api import ServiceState, create_app
from app.service.keys import Keys
from app.service.metrics import Metrics
from app.service.turns import Limits, TurnService
from engines.conversation.store import open_conversations
from engines.errors import ConfigError
from engines.retrieval.following import StoreFollower
from engines.session import Session

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port (default %(default)s)")
    parser.add_argument("--corpus", type=Path, help=f"corpus to ingest when the index is missing (default {SAMPLE_CORPUS})")
    add_common_flags(parser, index_help="index folder (default .turnrag/index; built from data/sample if missing)")
    return parser


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loader(settings: Settings, corpus: Path, console: Console):
    """Everything slow, run in the background after the port is open (/readyz says when it is done)."""
    def load() -> TurnService:
        ensure_index(settings, corpus, console)
        pipeline = open_pipeline(settings, build_models(settings))
        pipeline.retriever().retrieve("warm up")  # the embedder loads on first use
        server = getattr(pipeline.models.llm, "server", None)
        if server is not None:  # the packaged model: start llama.cpp's server now, not on the first question
            server.start()
        warm(pipeline)
        if settings.chroma_host and pipeline.index is not None and pipeline.retrieval is not None:
            StoreFollower(pipeline.index, pipeline.retrieval, every_s=settings.store_follow_s).start()
        store = open_conversations(settings.conversations)
        store.ping()
        return TurnService(pipeline, store, Admission(settings.llm_parallel, settings.max_queued_turns,
                                                                 settings.max_active_turns), Metrics(),
                           Limits(settings.max_message_chars, settings.max_history_messages))
    return load


#: A first question and a follow-up to it, run before /readyz says ready: they load what a first turn
#: would otherwise wait for (the router's examples, the reranker, the LLM's first prompt).
WARM_TURNS = ("Quy định về thời gian làm việc là gì?", "Quy định đó áp dụng cho những ai?")


def warm(pipeline: Any) -> float:
    """Run the warm-up turns through every step up to the context ("assemble"; nothing logged or
    stored) and, with a database, the SQL writer's prompt once; returns the seconds it took."""
    started = time.perf_counter()
    if pipeline.has_step("assemble"):
        session = Session(pipeline, log_turns=False)
        question, follow_up = WARM_TURNS
        session.run_until("assemble", question)
        session.run_until("assemble", follow_up, [ChatMessage(role=MessageRole.USER, content=question),
                                                  ChatMessage(role=MessageRole.ASSISTANT, content="Từ 8 giờ đến 17 giờ.")])
    if pipeline.has_step("sql"):  # the database road's long schema prompt, into the LLM's prompt cache
        pipeline.step("sql").road.warm()
    seconds = time.perf_counter() - started
    logger.info("warmed the pipeline in %.1f s", seconds)
    return seconds


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    console = Console(stderr=True)

    def body() -> int:
        settings = settings_from(args)
        keys = Keys.load(settings.api_keys)
        if not keys.required:
            if not is_loopback(args.host):
                raise ConfigError(f"refusing to serve on {args.host} without API keys: set TURNRAG_API_KEYS to a "
                                  "keys file (see README), or bind 127.0.0.1")
            console.print("no API keys (TURNRAG_API_KEYS unset): serving on loopback only", highlight=False)
        import uvicorn

        model = settings.llm_model or f"turnrag-{settings.llm}"
        app = create_app(ServiceState(loader(settings, args.corpus or SAMPLE_CORPUS, console)), keys, model)
        console.print(f"turnrag on http://{args.host}:{args.port} (web page at /, OpenAI API at /v1)", highlight=False)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return 0

    return run_cli(body, console)


if __name__ == "__main__":
    sys.exit(main())
