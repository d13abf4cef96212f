"""Usage is counted with the answering model's tokenizer: a server's /tokenize, else cl100k_base."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engines.models.token_count import ServerTokenCounter, token_counter


@pytest.fixture
def tokenize_server():
    calls: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
            if self.path != "/with/tokenize":
                self.send_response(404)
                self.end_headers()
                return
            data = json.dumps({"tokens": list(range(len(body["content"])))}).encode()  # one token per character
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", calls
    server.shutdown()


def test_a_server_s_own_tokenizer_is_asked_with_the_key(tokenize_server) -> None:
    root, calls = tokenize_server
    count = ServerTokenCounter(lambda: (f"{root}/with", "secret"))
    assert count("Phí thường niên") == len("Phí thường niên")
    assert calls[-1]["auth"] == "Bearer secret" and calls[-1]["content"] == "Phí thường niên"
    assert count("") == 0


def test_a_server_without_tokenize_is_counted_with_cl100k_and_not_asked_again(tokenize_server) -> None:
    root, calls = tokenize_server
    count = ServerTokenCounter(lambda: (f"{root}/without", None))
    first = count("The annual fee is 200,000 dong.")
    assert 5 <= first <= 12  # cl100k: about a token per word
    count("again")
    assert len(calls) == 1  # the missing endpoint is remembered


def test_the_counter_follows_the_llm(tokenize_server) -> None:
    root, _ = tokenize_server

    class Remote:
        api_base = f"{root}/with/v1"
        api_key = "k"

    assert token_counter(Remote())("abcd") == 4  # the server's root is the API base without /v1

    class OpenAIModel:
        api_base = "https://api.openai.com/v1"

    assert token_counter(OpenAIModel())("hello world") == 2  # cl100k_base
