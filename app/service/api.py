"""The FastAPI application: health, metrics, the web page, the OpenAI-compatible endpoint and the
session API. Routes are thin: turns run in :class:`~app.service.turns.TurnService`.

Errors are JSON ``{"error": {"message", "type"}}`` with a status a client can act on: 401 no or
wrong key, 404 a session that is not yours, 413/422 a message or history too large or malformed,
503 (with Retry-After) when every LLM slot is busy or the LLM server, Redis or Chroma is down
(the message names which).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from pydantic import BaseModel

from app.service.admission import Busy
from app.service.keys import Caller, Keys
from app.service.protocol import ChatCompletionRequest, ProtocolError, error_body, validation_error
from app.service.turns import Event, RequestError, TurnService
from engines.corpus.store import chroma_call
from engines.errors import TurnragError, is_unreachable

WEB_PAGE = Path(__file__).resolve().parent.parent / "web" / "index.html"
RETRY_AFTER_S = "2"


class SessionMessage(BaseModel):
    content: str
    filters: dict[str, Any] | None = None


class ServiceState:
    """Loaded in the background at start-up: /healthz answers at once, /readyz once this is done."""

    def __init__(self, load: Callable[[], TurnService]) -> None:
        self._load = load
        self.service: TurnService | None = None
        self.error: str | None = None

    def start(self) -> None:
        def run() -> None:
            try:
                self.service = self._load()
            except Exception as exc:  # shown by /readyz and every request; the process stays up to say so
                self.error = f"{type(exc).__name__}: {exc}"

        threading.Thread(target=run, name="turnrag-load", daemon=True).start()

    def ready(self) -> TurnService:
        if self.service is None:
            raise RequestError(503, f"the service failed to start: {self.error}" if self.error
                               else "the service is loading the index and models; retry shortly", "unavailable")
        return self.service


def _error(status: int, message: str, kind: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    """Every failure in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    headers = {"Retry-After": RETRY_AFTER_S} if status == 503 else None
    return JSONResponse(error_body(message, kind, param, code or kind), status_code=status, headers=headers)


def explain(exc: BaseException, service: TurnService | None) -> tuple[int, str, str]:
    """(status, message, type) for a failure while serving a turn."""
    if isinstance(exc, RequestError):
        return exc.status, exc.message, exc.kind
    if isinstance(exc, Busy):
        return 503, "every LLM slot is busy and the queue is full; retry shortly", "busy"
    if isinstance(exc, TurnragError):  # store, index or model unavailable: the message names it
        return 503, str(exc), "unavailable"
    name = type(exc).__name__
    if is_unreachable(exc):  # Chroma and the store are named above (TurnragError); what is left is the LLM
        llm = service.pipeline.config.get("llm_api_base") if service else None
        where = f" at {llm}" if llm else ""
        return 503, f"the LLM server{where} could not be reached ({name}); retry when it is back", "llm_unavailable"
    return 500, f"the turn failed: {name}: {exc}", "server_error"


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _primed(events: AsyncIterator[Event]) -> tuple[Event, AsyncIterator[Event]]:
    """The first event now (admission, condense and retrieval happen before it), so a busy queue or
    a dead LLM server is a status code, not an error half-way through a 200 stream."""
    return await anext(events), events


async def _while_listening(request: Request, first: Event, rest: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """The turn's events while the client is there. A client gone (tab closed, request cancelled)
    closes the turn's generator: the LLM stream is closed with it, so no more tokens are made, and
    the turn is not stored."""
    try:
        yield first
        async for event in rest:
            if await request.is_disconnected():
                return
            yield event
    finally:
        close = getattr(rest, "aclose", None)
        if close is not None:
            await close()


async def _finished(first: Event, rest: AsyncIterator[Event], service: TurnService) -> dict[str, Any] | Response:
    """A turn not streamed: its ``done`` payload, or the error response that explains its failure."""
    try:
        return [data async for name, data in _chain(first, rest) if name == "done"][-1]
    except Exception as exc:  # noqa: BLE001 - explained as a status code
        status, message, kind = explain(exc, service)
        return _error(status, message, kind)


def create_app(state: ServiceState, keys: Keys, model_name: str) -> FastAPI:
    # with keys, the API's own description (/docs, /openapi.json) is served behind a key like /metrics
    app = FastAPI(title="turnrag", version="1", on_startup=[state.start],
                  **({"docs_url": None, "redoc_url": None, "openapi_url": None} if keys.required else {}))

    def caller(request: Request) -> Caller:
        found = keys.caller(request.headers.get("authorization"))
        if found is None:
            raise RequestError(401, "missing or wrong API key: send Authorization: Bearer KEY", "authentication_error")
        return found

    @app.exception_handler(RequestError)
    async def _request_error(request: Request, exc: RequestError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.kind)

    @app.exception_handler(Busy)
    @app.exception_handler(TurnragError)
    async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
        return _error(*explain(exc, state.service))

    @app.exception_handler(ProtocolError)
    async def _protocol(request: Request, exc: ProtocolError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.kind, exc.param, exc.code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return await _protocol(request, validation_error(exc))

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(WEB_PAGE, media_type="text/html")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        try:
            service = state.ready()
            service.store.ping()
            if service.pipeline.index is not None:
                chroma_call(service.pipeline.index.collection.count)
            llm_problem = await _thread(service.llm_probe.problem)
        except Exception as exc:  # noqa: BLE001 - each cause becomes a 503 naming it
            status, message, kind = explain(exc, state.service)
            return _error(503 if status >= 500 else status, message, kind)
        if llm_problem is not None:
            return _error(503, f"{llm_problem}; retry when it is back", "llm_unavailable")
        return JSONResponse({"status": "ready", "auth": "keys" if keys.required else "none (loopback only)"})

    if keys.required:
        from fastapi.openapi.docs import get_swagger_ui_html

        @app.get("/openapi.json", include_in_schema=False)
        async def openapi(who: Caller = Depends(caller)) -> JSONResponse:
            return JSONResponse(app.openapi())

        @app.get("/docs", include_in_schema=False)
        async def docs(who: Caller = Depends(caller)) -> Response:
            return get_swagger_ui_html(openapi_url="/openapi.json", title="turnrag API")

    @app.get("/metrics")
    async def metrics(who: Caller = Depends(caller)) -> Response:
        if state.service is None:
            return Response(b"", media_type="text/plain")
        service = state.service
        service.metrics.queue_depth.set(service.admission.waiting)
        service.metrics.active.set(service.admission.active)
        return Response(service.metrics.render(), media_type="text/plain; version=0.0.4")

    @app.get("/v1/models")
    async def models(who: Caller = Depends(caller)) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "turnrag"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatCompletionRequest, request: Request,
                               who: Caller = Depends(caller)) -> Response:
        service = state.ready()
        texts = body.texts()
        *earlier, (last_role, last_text) = texts
        if last_role != "user":
            raise ProtocolError(400, "the last message must be the user's question", param="messages",
                                code="invalid_value")
        question = service.check_message(last_text)
        history = [ChatMessage(role=MessageRole.USER if role == "user" else MessageRole.ASSISTANT, content=text)
                   for role, text in earlier if role in ("user", "assistant")]
        service.check_history(history)
        session = service.session(who, body.filters)
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        events = service.events(session, question, history, api="openai")
        try:
            first, rest = await _primed(events)
        except Exception as exc:  # noqa: BLE001 - explained as a status code
            status, message, kind = explain(exc, service)
            return _error(status, message, kind)

        def chunk(delta: dict[str, Any] | None, finish: str | None = None, extra: dict[str, Any] | None = None,
                  usage: dict[str, int] | None = None) -> str:
            data: dict[str, Any] = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                                    "model": model_name,
                                    "choices": [] if delta is None else [{"index": 0, "delta": delta,
                                                                          "finish_reason": finish}]}
            if extra is not None:
                data["turnrag"] = extra
            if usage is not None:
                data["usage"] = usage
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        async def usage(answer: str) -> dict[str, int]:
            return await _thread(service.usage, [text for _, text in texts], answer)

        if body.stream:
            include_usage = bool(body.stream_options and body.stream_options.include_usage)

            async def stream() -> AsyncIterator[str]:
                yield chunk({"role": "assistant", "content": ""})
                try:
                    async for name, data in _while_listening(request, first, rest):
                        if name == "token":
                            yield chunk({"content": data["text"]})
                        elif name == "done":
                            yield chunk({}, "stop", _extra(data))
                            if include_usage:  # OpenAI's last chunk: no choices, the usage
                                yield chunk(None, usage=await usage(data["answer"]))
                except Exception as exc:  # noqa: BLE001 - the stream already started: say so in it
                    status, message, kind = explain(exc, service)
                    yield f"data: {json.dumps(error_body(message, kind, None, kind))}\n\n"
                yield "data: [DONE]\n\n"

            return StreamingResponse(stream(), media_type="text/event-stream")
        done = await _finished(first, rest, service)
        if isinstance(done, Response):
            return done
        return JSONResponse({
            "id": completion_id, "object": "chat.completion", "created": created, "model": model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": done["answer"]}, "finish_reason": "stop"}],
            "usage": await usage(done["answer"]),
            "turnrag": _extra(done),
        })

    @app.post("/v1/sessions")
    async def create_session(who: Caller = Depends(caller)) -> JSONResponse:
        service = state.ready()
        return JSONResponse({"id": await _thread(service.store.create, who.owner)}, status_code=201)

    @app.get("/v1/sessions/{session_id}")
    async def get_session(session_id: str, who: Caller = Depends(caller)) -> dict[str, Any]:
        service = state.ready()
        turns = await _thread(service.owned_turns, who, session_id)
        messages = [m for t in turns for m in ({"role": "user", "content": t.question},
                                               {"role": "assistant", "content": t.answer})]
        return {"id": session_id, "messages": messages}

    @app.delete("/v1/sessions/{session_id}")
    async def delete_session(session_id: str, who: Caller = Depends(caller)) -> Response:
        service = state.ready()
        await _thread(service.owned_turns, who, session_id)
        await _thread(service.store.delete, session_id)
        return Response(status_code=204)

    @app.post("/v1/sessions/{session_id}/messages", response_model=None)
    async def post_message(session_id: str, body: SessionMessage, request: Request,
                           who: Caller = Depends(caller)) -> Response:
        service = state.ready()
        question = service.check_message(body.content)
        turns = await _thread(service.owned_turns, who, session_id)
        session = service.session(who, body.filters, turns, session_id=session_id)
        events = service.events(session, question, None, api="sessions", store_as=session_id)
        try:
            first, rest = await _primed(events)
        except Exception as exc:  # noqa: BLE001
            status, message, kind = explain(exc, service)
            return _error(status, message, kind)
        if "text/event-stream" in request.headers.get("accept", ""):
            async def stream() -> AsyncIterator[str]:
                try:
                    async for name, data in _while_listening(request, first, rest):
                        yield sse(name, data)
                except Exception as exc:  # noqa: BLE001 - nothing was stored: say why in the stream
                    yield sse("error", {"message": explain(exc, service)[1]})

            return StreamingResponse(stream(), media_type="text/event-stream")
        done = await _finished(first, rest, service)
        return done if isinstance(done, Response) else JSONResponse(done)

    return app


def _extra(done: dict[str, Any]) -> dict[str, Any]:
    """The turnrag field beside OpenAI's: sources, the query used, refusal, conflict notes, the road
    taken, the database road's statement and rows (capped), and the stage timings."""
    record = done["record"]
    return {**{key: done[key] for key in ("sources", "query", "refused", "conflicts")},
            **{key: record[key] for key in ("route", "sql", "timings_ms")}}


async def _chain(first: Event, rest: AsyncIterator[Event]) -> AsyncIterator[Event]:
    yield first
    async for event in rest:
        yield event


async def _thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Blocking store calls off the event loop."""
    return await asyncio.to_thread(fn, *args)
