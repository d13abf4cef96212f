"""`python -m app.llm_server`: the packaged local model as an OpenAI-compatible HTTP server.

llama.cpp's own server (the same one the product starts in-process for ``TURNRAG_LLM=local``),
in a process of its own, so several chat processes or replicas can share one model and anything
that speaks the OpenAI API can use it::

    python -m app.llm_server --port 8080 --parallel 2 &
    TURNRAG_LLM=openai-like TURNRAG_LLM_API_BASE=http://127.0.0.1:8080/v1 TURNRAG_LLM_API_KEY=KEY make chat
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from rich.console import Console

from app.cli import run_cli
from app.logging_setup import configure_logging
from engines.models.llama_server import LocalLlamaServer


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.llm_server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s: this machine only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default %(default)s; 0 = any free one)")
    parser.add_argument("--parallel", type=int, default=1, help="requests served at once (llama.cpp slots)")
    parser.add_argument("--ctx", type=int, default=4096, help="context window per request, in tokens")
    parser.add_argument("--api-key", help="clients must send it as a Bearer token (default: a random one, printed)")
    parser.add_argument("--model", type=Path, help="a .gguf file (default: the packaged Qwen2.5-Coder-1.5B)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def main(argv: list[str] | None = None, *, stop: threading.Event | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    console = Console(stderr=True)

    def body() -> int:
        server = LocalLlamaServer(model_path=str(args.model) if args.model else None, n_ctx=args.ctx,
                                  parallel=args.parallel, host=args.host, port=args.port, api_key=args.api_key)
        base_url, key = server.start()
        print(f"serving on {base_url} (API key: {key}); Ctrl-C stops it", flush=True)
        (stop or threading.Event()).wait()
        return 0

    return run_cli(body, console, interrupted="stopped.")


if __name__ == "__main__":
    sys.exit(main())
