"""The public LlamaIndex face: a ``CondenseQuestionChatEngine`` over one session.

``chat``, ``stream_chat``, ``achat`` and ``astream_chat`` all run the session's turn through the
shared pipeline (``engines.pipeline``) and differ only in how the answer is written out; the
condensed question is in ``response.sources[0].raw_input["query"]`` as with the stock engine, and
the whole turn record in :attr:`ConversationalRAGEngine.last_record`. Build one engine per
conversation (``Session`` is cheap); the pipeline behind it is shared.
"""

from __future__ import annotations

import asyncio
from threading import Thread
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.base.response.schema import Response
from llama_index.core.chat_engine import CondenseQuestionChatEngine
from llama_index.core.chat_engine.types import (
    AgentChatResponse,
    StreamingAgentChatResponse,
)
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.tools import ToolOutput

from engines.conversation.rewrite import CONDENSE_PROMPT
from engines.record import TurnRecord
from engines.session import Session
from engines.writing import AnswerStream


class SessionQueryEngine(BaseQueryEngine):
    """One standalone question through the session's pipeline, no history (``query_engine.query``)."""

    def __init__(self, session: Session) -> None:
        super().__init__(callback_manager=None)
        self._session = session

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    def _query(self, query_bundle: QueryBundle) -> Response:
        stream = self._session.prepare(query_bundle.query_str, chat_history=[])
        answer = stream.text()
        return Response(response=answer, source_nodes=_shown_nodes(stream))

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        return await asyncio.to_thread(self._query, query_bundle)


class ConversationalRAGEngine(CondenseQuestionChatEngine):
    """Condense-question chat with hybrid retrieval, a relevance gate, conflict resolution and
    turn records: a thin adapter over :class:`~engines.session.Session`."""

    def __init__(self, session: Session) -> None:
        pipeline = session.pipeline
        condense = pipeline.step("condense") if pipeline.has_step("condense") else None
        super().__init__(
            query_engine=SessionQueryEngine(session),
            condense_question_prompt=getattr(condense, "prompt", None) or CONDENSE_PROMPT,
            memory=session.memory,
            llm=pipeline.models.condense_llm,
        )
        self.session = session

    # ------------------------------------------------------------------ what the session knows

    @property
    def records(self) -> list[TurnRecord]:
        return list(self.session.records)

    @property
    def last_record(self) -> TurnRecord | None:
        return self.session.last_record

    def reset(self) -> None:
        self.session.reset()

    # ------------------------------------------------------------------ condense (LlamaIndex hooks)

    def _condense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        return self.session.condense(last_message, chat_history).query

    async def _acondense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        return await asyncio.to_thread(self._condense_question, chat_history, last_message)

    # ------------------------------------------------------------------ entry points

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        stream = self.session.prepare(message, chat_history)
        answer = stream.text()
        self._memory.put(ChatMessage(role=MessageRole.USER, content=message))
        self._memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))
        return AgentChatResponse(response=answer, sources=[_tool_output(stream)], source_nodes=_shown_nodes(stream))

    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        return await asyncio.to_thread(self.chat, message, chat_history)

    def stream_chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> StreamingAgentChatResponse:
        stream = self.session.prepare(message, chat_history)
        chunks = stream.chunks()
        self._memory.put(ChatMessage(role=MessageRole.USER, content=message))
        response = StreamingAgentChatResponse(chat_stream=chunks, sources=[_tool_output(stream)],
                                              source_nodes=_shown_nodes(stream))
        thread = Thread(target=response.write_response_to_history, args=(self._memory,), daemon=True)
        response.write_response_to_history_thread = thread
        thread.start()
        return response

    async def astream_chat(self, message: str, chat_history: list[ChatMessage] | None = None
                           ) -> StreamingAgentChatResponse:
        stream = await asyncio.to_thread(self.session.prepare, message, chat_history)
        chunks = await stream.achunks()
        await self._memory.aput(ChatMessage(role=MessageRole.USER, content=message))
        response = StreamingAgentChatResponse(achat_stream=chunks, sources=[_tool_output(stream)],
                                              source_nodes=_shown_nodes(stream))
        response.awrite_response_to_history_task = asyncio.create_task(
            response.awrite_response_to_history(self._memory))
        return response


def _shown_nodes(stream: AnswerStream) -> list[NodeWithScore]:
    """The context passages, unless the turn was refused (a refusal shows no sources)."""
    refused = stream.record.refused if stream.record is not None else bool(stream.state.draft and stream.state.draft.refused)
    return [] if refused else list(stream.state.nodes)


def _tool_output(stream: AnswerStream) -> ToolOutput:
    record = stream.record
    return ToolOutput(content=record.answer if record else "", tool_name="query_engine",
                      raw_input={"query": stream.query}, raw_output=record if record else stream)
