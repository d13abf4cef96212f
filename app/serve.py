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
import sys
from pathlib import Path

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
        if settings.chroma_host and pipeline.index is not None and pipeline.retrieval is not None:
            StoreFollower(pipeline.index, pipeline.retrieval, every_s=settings.store_follow_s).start()
        store = open_conversations(settings.conversations)
        store.ping()
        return TurnService(pipeline, store, Admission(settings.llm_parallel, settings.max_queued_turns), Metrics(),
                           Limits(settings.max_message_chars, settings.max_history_messages))
    return load


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
