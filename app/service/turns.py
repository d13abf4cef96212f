"""One turn for the HTTP APIs: a session rebuilt from the store, an LLM slot, typed events, and the
turn stored whole (question, answer, record) before the client hears it is done."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from app.service.admission import Admission
from app.service.keys import Caller
from app.service.metrics import Metrics
from engines.conversation.store import ConversationStore, StoredTurn
from engines.models.health import LLMProbe
from engines.models.token_count import TokenCounter, token_counter
from engines.pipeline import Pipeline
from engines.record import Source, TurnRecord
from engines.retrieval.filters import MetadataFilter
from engines.session import Session

Event = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Limits:
    max_message_chars: int = 4000
    max_history_messages: int = 50


class RequestError(Exception):
    """A request the service refuses, with the HTTP status to say so."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def source_payload(source: Source) -> dict[str, Any]:
    """A source as the APIs show it: its id and title, and the PDF pages or the sections it was cited
    from when its document has them (converted documents; docs/documents.md)."""
    payload: dict[str, Any] = {"doc_id": source.doc_id, "title": source.title}
    if source.pages:
        payload["pages"] = list(source.pages)
    if source.sections:
        payload["sections"] = list(source.sections)
    return payload


def answer_payload(record: TurnRecord) -> dict[str, Any]:
    """What both APIs say about a finished turn beside the answer text."""
    return {
        "answer": record.answer,
        "sources": [source_payload(s) for s in record.sources],
        "query": record.query,
        "refused": record.refused,
        "conflicts": list((record.conflicts or {}).get("notes") or []),
        "record": record.to_dict(),
    }


class TurnService:
    """Shared by every request: the pipeline, the conversation store, admission and metrics."""

    def __init__(self, pipeline: Pipeline, store: ConversationStore, admission: Admission, metrics: Metrics,
                 limits: Limits = Limits(), count_tokens: TokenCounter | None = None) -> None:
        self.pipeline, self.store, self.admission, self.metrics, self.limits = pipeline, store, admission, metrics, limits
        self._count_tokens = count_tokens
        self.llm_probe = LLMProbe(pipeline.models.llm)

    def usage(self, prompt: Sequence[str], answer: str) -> dict[str, int]:
        """OpenAI's ``usage`` with the answering model's tokenizer: the messages the client sent, the
        answer it got (engines.models.token_count)."""
        if self._count_tokens is None:
            self._count_tokens = token_counter(self.pipeline.models.llm)
        prompt_tokens = self._count_tokens("\n".join(text for text in prompt if text))  # one call per request
        completion_tokens = self._count_tokens(answer)
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens}

    # ------------------------------------------------------------------ sessions

    def access_filter(self, caller: Caller, requested: Mapping[str, Any] | None) -> MetadataFilter:
        """The configured filter, narrowed by the key's, narrowed by the request's: never widened."""
        flt = self.pipeline.choices.filter().merged(caller.filter)
        if requested:
            try:
                flt = flt.merged(MetadataFilter.parse(requested, where="request filters"))
            except Exception as exc:  # ConfigError names the field
                raise RequestError(400, str(exc)) from exc
        return flt

    def session(self, caller: Caller, requested_filter: Mapping[str, Any] | None = None,
                turns: Sequence[StoredTurn] = (), session_id: str | None = None) -> Session:
        session = Session(self.pipeline, session_id=session_id)
        session.set_filter(self.access_filter(caller, requested_filter))
        session.set_sql_tables(caller.sql_tables)
        session.restore([(t.question, t.answer, t.query) for t in turns])
        return session

    def owned_turns(self, caller: Caller, session_id: str) -> list[StoredTurn]:
        """The stored turns of a session this caller owns (404 for anyone else's: not even its existence)."""
        if self.store.owner(session_id) != caller.owner:
            raise RequestError(404, f"no session {session_id}", "not_found")
        return self.store.turns(session_id)

    def check_message(self, text: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise RequestError(422, "the message is empty; send {\"content\": \"your question\"}")
        if len(text) > self.limits.max_message_chars:
            raise RequestError(413, f"the message has {len(text)} characters; the limit is "
                                    f"{self.limits.max_message_chars} (TURNRAG_MAX_MESSAGE_CHARS)")
        return text

    def check_history(self, history: Sequence[ChatMessage]) -> None:
        if len(history) > self.limits.max_history_messages:
            raise RequestError(413, f"{len(history)} earlier messages; the limit is {self.limits.max_history_messages} "
                                    "(TURNRAG_MAX_HISTORY_MESSAGES)")

    # ------------------------------------------------------------------ a turn

    async def events(self, session: Session, question: str, history: Sequence[ChatMessage] | None, *,
                     api: str, store_as: str | None = None) -> AsyncIterator[Event]:
        """query, sources, token..., conflict, done. ``store_as``: the session id the turn is appended
        to (whole, before "done"); a client gone before then leaves nothing stored."""
        async with self.admission.turn():
            stream = await asyncio.to_thread(session.prepare, question, None if history is None else list(history))
            # only a turn the LLM will write waits for (or is refused) an LLM slot, before anything is sent
            async with self.admission.slot() if stream.needs_llm else nullcontext():
                yield "query", {"query": stream.query}
                shown = self.pipeline.cited_sources(stream.state)  # what the finished turn will cite
                yield "sources", {"sources": [source_payload(s) for s in shown]}
                async for chunk in await stream.achunks():
                    if chunk.delta:
                        yield "token", {"text": chunk.delta}
        record = stream.record
        if record is None:  # every finished stream records its turn; this guards a future refactor
            raise RuntimeError("the turn finished without a record")
        self.metrics.observe(api, record)
        if store_as is not None:
            await asyncio.to_thread(self.store.append, store_as, StoredTurn(question, record.answer, record.to_dict()))
        notes = list((record.conflicts or {}).get("notes") or [])
        if notes:
            yield "conflict", {"notes": notes}
        yield "done", answer_payload(record)
