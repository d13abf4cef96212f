"""The conversational engine: route → condense → retrieve (+ query transforms) → gate →
postprocess → answer, one record per turn.

A ``CondenseQuestionChatEngine`` subclass. All four entry points (chat, stream_chat, achat,
astream_chat) share :meth:`ConversationalRAGEngine._prepare_turn`; the async paths run it in a
worker thread, so there is one implementation of the pipeline, not four copies. The answer is
written by a per-request LLM call, never by flipping a shared synthesizer's streaming flag.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass, field
from pathlib import Path
from threading import Thread
from typing import Any, Protocol

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.chat_engine import CondenseQuestionChatEngine
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.llms import LLM
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.tools import ToolOutput

from engines import condense
from engines.answer import AnswerFilter, build_messages
from engines.extractive import ClauseVectorCache, ExtractConfig, check_prompt, check_says_no, extract_answer
from engines.record import Candidate, CondenseTrace, Source, TurnRecord, append_jsonl
from engines.refusal import RelevanceGate, refusal_message
from engines.router import DIRECT, DIRECT_REPLY_PROMPT, OUT_OF_SCOPE, out_of_scope_reply
from engines.text import detect_language
from engines.transforms import QueryExpander

logger = logging.getLogger(__name__)

#: generate: the answer LLM writes the answer; extract: the best-matching clauses are quoted.
ANSWER_MODES = ("generate", "extract")


class ReportingPostprocessor(Protocol):
    """A postprocessor that also explains itself (the conflict check does)."""

    def postprocess_with_report(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle, language: str
    ) -> "PostprocessOutcome": ...


@dataclass
class PostprocessOutcome:
    nodes: list[NodeWithScore]
    report: dict[str, Any] = field(default_factory=dict)
    prompt_notes: list[str] = field(default_factory=list)
    answer_suffix: str = ""


@dataclass
class PreparedTurn:
    """Everything decided before the answer is written."""

    record: TurnRecord
    nodes: list[NodeWithScore]
    messages: list[ChatMessage] | None  # None: no answer LLM call (refused, or quoted)
    answer_suffix: str = ""
    extracted: str | None = None  # answer_mode "extract": the quoted clauses are the answer
    started: float = 0.0
    answer_started: float | None = None
    first_token_ms: float | None = None

    @property
    def answering(self) -> bool:
        """An answer gets written (by the LLM or by quoting), i.e. the turn was not refused."""
        return self.messages is not None or self.extracted is not None


class ConversationalRAGEngine(CondenseQuestionChatEngine):
    """Condense-question chat over a hybrid retriever, with a relevance gate and turn records."""

    def __init__(
        self,
        *,
        retriever: Any,
        llm: LLM,
        condense_llm: LLM | None = None,
        gate: RelevanceGate,
        postprocessors: list[BaseNodePostprocessor] | None = None,
        memory: BaseMemory | None = None,
        condense_window: int = 6,
        condense_prompt: Any = None,
        max_context_chars: int = 6000,
        retrieve_answers: bool = True,
        record_log: Path | None = None,
        router: Any = None,
        expander: QueryExpander | None = None,
        embed_model: Any = None,
        answer_mode: str = "generate",
        extract_config: ExtractConfig | None = None,
        swap_followups: bool = True,
        answer_check: bool = True,
        clause_vectors: ClauseVectorCache | None = None,
    ) -> None:
        postprocessors = list(postprocessors or [])
        query_engine = RetrieverQueryEngine.from_args(retriever, llm=llm, node_postprocessors=postprocessors)
        super().__init__(
            query_engine=query_engine,
            condense_question_prompt=condense_prompt or condense.CONDENSE_PROMPT,
            memory=memory or ChatMemoryBuffer.from_defaults(token_limit=8000),
            llm=condense_llm or llm,
        )
        if condense_window < 0:
            raise ValueError(f"condense_window must be >= 0, got {condense_window}")
        if answer_mode not in ANSWER_MODES:
            raise ValueError(f"answer_mode must be one of {ANSWER_MODES}, got {answer_mode!r}")
        if answer_mode == "extract" and embed_model is None:
            raise ValueError("answer_mode 'extract' needs the embedding model to score clauses")
        self._retriever = retriever
        self._answer_llm = llm
        self._gate = gate
        self._postprocessors = postprocessors
        self._condense_window = condense_window
        self._max_context_chars = max_context_chars
        self._synthesize = retrieve_answers
        self._record_log = record_log
        self._router = router
        self._expander = expander if expander is not None and expander.is_active else None
        self._embed_model = embed_model
        self._answer_mode = answer_mode
        self._swap_followups = swap_followups
        self._answer_check = answer_check
        self._clause_vectors = clause_vectors or ClauseVectorCache()
        self._extract_config = extract_config or ExtractConfig()
        self._condense_override = condense_prompt  # None = per language (condense.prompt_for)
        self.records: list[TurnRecord] = []

    # ------------------------------------------------------------------ public helpers

    @property
    def last_record(self) -> TurnRecord | None:
        return self.records[-1] if self.records else None

    def reset(self) -> None:
        super().reset()
        self.records = []

    @property
    def metadata_filter(self) -> Any:
        return getattr(self._retriever, "metadata_filter", None)

    def set_filter(self, metadata_filter: Any) -> None:
        """Restrict every later turn of this session (both retrievers) to ``metadata_filter``."""
        self._retriever = self._retriever.with_filter(metadata_filter)
        self._query_engine = RetrieverQueryEngine.from_args(
            self._retriever, llm=self._answer_llm, node_postprocessors=self._postprocessors)

    @property
    def transforms(self) -> tuple[str, ...]:
        return self._expander.transforms if self._expander else ()

    def set_expander(self, expander: QueryExpander | None) -> None:
        self._expander = expander if expander is not None and expander.is_active else None

    def set_router(self, router: Any) -> None:
        self._router = router

    @property
    def router(self) -> Any:
        return self._router

    # ------------------------------------------------------------------ condense (overrides)

    def _condense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        return self._condense(chat_history, last_message, CondenseTrace())[0]

    async def _acondense_question(self, chat_history: list[ChatMessage], last_message: str) -> str:
        return await asyncio.to_thread(self._condense_question, chat_history, last_message)

    def _condense(self, history: list[ChatMessage], question: str, trace: CondenseTrace) -> tuple[str, int]:
        """Returns (query, llm_calls). No LLM call when the window holds no history."""
        recent = condense.window(history, self._condense_window)
        trace.window = len(recent)
        if not recent:
            return question, 0
        swapped = self._swap(question, recent)
        if swapped is not None:
            trace.rule = "swap"
            return swapped, 0
        raw = self._llm.predict(
            condense.prompt_for(detect_language(question), self._condense_override),
            question=question,
            chat_history=condense.history_to_text(recent),
        )
        decision = condense.guard(question, raw, recent, self._previous_query(recent))
        trace.used_llm = True
        trace.raw_output = raw
        trace.fallback_reason = decision.fallback_reason
        if decision.fallback_reason:
            logger.warning("condense fallback (%s): %r -> %r; using %r",
                           decision.fallback_reason, question, raw, decision.query)
        return decision.query, 1

    def _swap(self, question: str, recent: list[ChatMessage]) -> str | None:
        """"Còn X thì sao?": the previous standalone question with its subject swapped for X, the
        swap chosen by how well the corpus supports each candidate (no LLM call; the 1.5B
        condenser writes "Cái đó có hợp đồng thời vụ không?" here). None = not a swap."""
        target = condense.swap_target(question) if self._swap_followups else None
        support_of = getattr(self._retriever, "corpus_support", None)
        if target is None or self._embed_model is None or support_of is None:
            return None
        candidates = condense.swap_candidates(self._previous_query(recent), target)
        if not candidates:
            return None
        embed = self._embed_model
        support = support_of([embed.get_query_embedding(c.text) for c in candidates])
        if support is None:
            return None
        target_vector = embed.get_query_embedding(target)
        span_vectors = {span: embed.get_query_embedding(span) for span in {c.span for c in candidates}}
        likeness = [_dot(target_vector, span_vectors[c.span]) for c in candidates]
        chosen = candidates[condense.pick_swap(support, likeness)]
        logger.info("swap follow-up %r: replaced %r -> %r", question, chosen.span, chosen.text)
        return chosen.text

    def _previous_query(self, recent: list[ChatMessage]) -> str:
        """The standalone form of the last user message: this engine's rewrite of it when it
        answered that turn, else the message as written."""
        users = [m.content for m in recent if m.role == MessageRole.USER and m.content]
        if not users:
            return ""
        for record in reversed(self.records):
            if record.question == users[-1] and record.query:
                return record.query
        return users[-1]

    # ------------------------------------------------------------------ the shared pipeline

    def _prepare_turn(self, message: str, chat_history: list[ChatMessage] | None,
                      answer: bool = True) -> PreparedTurn:
        """Everything before the answer; ``answer=False`` stops after postprocessing (no quoting,
        no check, no answer prompt), which is what retrieval-only evaluation measures."""
        started = time.perf_counter()
        history = self._memory.get(input=message) if chat_history is None else list(chat_history)
        language = detect_language(message)
        record = TurnRecord(question=message, language=language)

        flt = self.metadata_filter
        if flt is not None:
            record.filters = flt.to_spec()
        routed = self._route(record, message, history, started)
        if routed is not None:
            return routed

        t0 = time.perf_counter()
        record.query, calls = self._condense(history, message, record.condense)
        record.llm_calls += calls
        record.timings_ms["condense"] = _ms(t0)

        t0 = time.perf_counter()
        nodes, first_pass = self._retrieve(record, message)
        record.timings_ms["retrieve"] = _ms(t0)
        record.candidates = [_candidate(n) for n in nodes]
        # The gate judges the user's question (first pass), never an LLM-invented query or passage.
        record.max_raw_scores = self._gate.max_scores(getattr(n, "raw_scores", {}) or {} for n in first_pass)

        if not nodes or not self._gate.is_relevant(record.max_raw_scores):
            record.refused = True
            record.refusal_reason = "no_relevant_documents"
            return PreparedTurn(record, [], None, started=started)

        t0 = time.perf_counter()
        suffix = ""
        notes: list[str] = []
        query_bundle = QueryBundle(record.query)
        for pp in self._postprocessors:
            if hasattr(pp, "postprocess_with_report"):
                outcome: PostprocessOutcome = pp.postprocess_with_report(nodes, query_bundle, language)
                nodes = outcome.nodes
                record.conflicts = outcome.report
                notes.extend(outcome.prompt_notes)
                suffix += outcome.answer_suffix
            else:
                nodes = pp.postprocess_nodes(nodes, query_bundle=query_bundle)
        record.timings_ms["postprocess"] = _ms(t0)
        record.context_node_ids = [n.node.node_id for n in nodes]
        # Cite only passages that are relevant on their own, not rank filler.
        record.sources = _sources([n for n in nodes if self._gate.is_relevant(getattr(n, "raw_scores", {}) or {})] or nodes)
        if not (self._synthesize and answer):
            return PreparedTurn(record, nodes, None, started=started)
        if self._answer_mode == "extract":
            return self._extract(record, nodes, suffix, started)
        messages = build_messages(message, record.query, nodes, language, notes, self._max_context_chars)
        record.prompt_chars = sum(len(m.content or "") for m in messages)
        return PreparedTurn(record, nodes, messages, answer_suffix=suffix, started=started)

    def _extract(self, record: TurnRecord, nodes: list[NodeWithScore], suffix: str,
                 started: float) -> PreparedTurn:
        """Quote the clauses closest to the standalone query (one batched embedding call for the
        clauses not seen before)."""
        t0 = time.perf_counter()
        record.answer_mode = "extract"
        embed = self._embed_model

        def similarity(query: str, texts: list[str]) -> list[float]:
            query_vector = embed.get_query_embedding(query)
            return [_dot(query_vector, v) for v in self._clause_vectors.vectors(texts, embed.get_text_embedding_batch)]

        passages = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        titles = [str(n.node.metadata.get("title") or n.node.metadata.get("doc_id") or "") for n in nodes]
        text, chosen = extract_answer(record.query, passages, titles, record.language, similarity,
                                      self._extract_config)
        record.timings_ms["extract"] = _ms(t0)
        record.quoted = [{"text": c.text, "doc_id": str(nodes[c.passage].node.metadata.get("doc_id", "")),
                          "score": round(score, 4)} for c, score in chosen]
        if not text:
            record.refused = True
            record.refusal_reason = "no_quotable_clause"
            return PreparedTurn(record, [], None, started=started)
        if self._answer_check:
            t0 = time.perf_counter()
            # A fallback query strings earlier questions together ("...bao nhiêu ngày? Cái đó có được
            # cộng dồn không?"); the clauses were chosen with all of it, but only the last one is asked.
            asked = record.question if record.condense.fallback_reason else record.query
            system, user = check_prompt(asked, chosen, titles)
            reply = self._answer_llm.chat([ChatMessage(role=MessageRole.SYSTEM, content=system),
                                           ChatMessage(role=MessageRole.USER, content=user)], max_tokens=4)
            record.llm_calls += 1
            record.timings_ms["check"] = _ms(t0)
            if check_says_no(reply.message.content or ""):
                record.refused = True
                record.refusal_reason = "check_not_answered"
                record.sources = []
                return PreparedTurn(record, [], None, started=started)
        quoted_docs = {q["doc_id"] for q in record.quoted}
        record.sources = [s for s in record.sources if s.doc_id in quoted_docs] or _sources(
            [n for n in nodes if str(n.node.metadata.get("doc_id", "")) in quoted_docs])
        return PreparedTurn(record, nodes, None, answer_suffix=suffix, started=started, extracted=text)

    def _route(self, record: TurnRecord, message: str, history: list[ChatMessage],
               started: float) -> PreparedTurn | None:
        """Small talk is answered without retrieval, out-of-scope requests declined; None = DOCS."""
        if self._router is None:
            return None
        t0 = time.perf_counter()
        decision = self._router.route(message, condense.history_to_text(condense.window(history, 2)))
        record.timings_ms["route"] = _ms(t0)
        record.route, record.route_scores = decision.route, dict(decision.scores)
        record.llm_calls += decision.llm_calls
        if decision.route == OUT_OF_SCOPE:
            record.refused, record.refusal_reason = True, "out_of_scope"
            return PreparedTurn(record, [], None, started=started)
        if decision.route == DIRECT:
            messages = None
            if self._synthesize:
                messages = [ChatMessage(role=MessageRole.SYSTEM, content=DIRECT_REPLY_PROMPT),
                            *condense.window(history, 4), ChatMessage(role=MessageRole.USER, content=message)]
            return PreparedTurn(record, [], messages, started=started)
        return None

    def _retrieve(self, record: TurnRecord, question: str) -> tuple[list[NodeWithScore], list[NodeWithScore]]:
        """(nodes for the context, the first pass alone). Extra queries of the enabled transforms
        are retrieved separately and fused with the first pass by reciprocal rank."""
        retriever = self._retriever
        if not hasattr(retriever, "run"):
            nodes = retriever.retrieve(record.query)
            return nodes, nodes
        runs = retriever.run(QueryBundle(record.query))
        first_pass = retriever.fuse(runs)
        if self._expander is None:
            return first_pass, first_pass
        best = max((float(n.raw_scores.get("vector", float("-inf"))) for n in first_pass
                    if getattr(n, "raw_scores", None)), default=None)
        t0 = time.perf_counter()
        expansion = self._expander.expand(record.query, question, best)
        record.timings_ms["transform"] = _ms(t0)
        record.llm_calls += expansion.llm_calls
        record.transforms = list(expansion.trace)
        for extra in expansion.queries:
            if extra.vector_only:
                if "vector" not in retriever.retriever_names or self._embed_model is None:
                    continue
                # HyDE: an answer-shaped text is compared as a passage with passages.
                bundle = QueryBundle(extra.text, embedding=self._embed_model.get_text_embedding(extra.text))
                runs += retriever.run(bundle, only=["vector"])
            else:
                runs += retriever.run(QueryBundle(extra.text))
        return (retriever.fuse(runs) if expansion.queries else first_pass), first_pass

    def _finish(self, prepared: PreparedTurn, answer: AnswerFilter | None, synth_ms: float | None) -> None:
        record = prepared.record
        if not prepared.answering:
            if record.refusal_reason == "out_of_scope":
                record.answer = out_of_scope_reply(record.language)
            elif record.refused:
                record.answer = refusal_message(record.language)
        else:
            record.llm_calls += prepared.messages is not None
            record.answer = answer.text if answer else ""
            if answer and answer.not_found:
                record.refused = True
                record.refusal_reason = "answer_not_found"
                record.sources = []
        if synth_ms is not None:
            record.timings_ms["answer"] = synth_ms
        if prepared.first_token_ms is not None:
            record.timings_ms["answer_first_token"] = prepared.first_token_ms
        record.timings_ms["total"] = _ms(prepared.started)
        self.records.append(record)
        if self._record_log:
            append_jsonl(self._record_log, record)

    def _tool_output(self, prepared: PreparedTurn) -> ToolOutput:
        return ToolOutput(content=prepared.record.answer, tool_name="query_engine",
                          raw_input={"query": prepared.record.query}, raw_output=prepared.record)

    def _source_nodes(self, prepared: PreparedTurn) -> list[NodeWithScore]:
        return [] if prepared.record.refused else prepared.nodes

    # ------------------------------------------------------------------ entry points

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        prepared = self._prepare_turn(message, chat_history)
        answer = None
        synth_ms = None
        if prepared.answering:
            t0 = time.perf_counter()
            answer = AnswerFilter(prepared.record.language, suffix=prepared.answer_suffix)
            if prepared.extracted is not None:
                answer.feed(prepared.extracted)
            else:
                answer.feed(self._answer_llm.chat(prepared.messages).message.content or "")
            answer.finish()
            synth_ms = _ms(t0)
        self._finish(prepared, answer, synth_ms)
        self._remember(message, prepared.record.answer)
        return AgentChatResponse(response=prepared.record.answer, sources=[self._tool_output(prepared)],
                                 source_nodes=self._source_nodes(prepared))

    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        return await asyncio.to_thread(self.chat, message, chat_history)

    def stream_chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> StreamingAgentChatResponse:
        prepared = self._prepare_turn(message, chat_history)
        parts = iter(())
        if prepared.extracted is not None:
            parts = iter([_chunk(prepared.extracted, prepared.extracted)])
        elif prepared.messages:
            prepared.answer_started = time.perf_counter()
            parts = _primed(self._answer_llm.stream_chat(prepared.messages))
            prepared.first_token_ms = _ms(prepared.answer_started)
        self._memory.put(ChatMessage(role=MessageRole.USER, content=message))
        response = StreamingAgentChatResponse(
            chat_stream=self._stream(prepared, parts), sources=[self._tool_output(prepared)],
            source_nodes=self._source_nodes(prepared),
        )
        thread = Thread(target=response.write_response_to_history, args=(self._memory,), daemon=True)
        response.write_response_to_history_thread = thread
        thread.start()
        return response

    async def astream_chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> StreamingAgentChatResponse:
        prepared = await asyncio.to_thread(self._prepare_turn, message, chat_history)
        parts = None
        if prepared.extracted is not None:
            parts = _aiter_once(_chunk(prepared.extracted, prepared.extracted))
        elif prepared.messages:
            prepared.answer_started = time.perf_counter()
            parts = await _aprimed(await self._answer_llm.astream_chat(prepared.messages))
            prepared.first_token_ms = _ms(prepared.answer_started)
        await self._memory.aput(ChatMessage(role=MessageRole.USER, content=message))
        response = StreamingAgentChatResponse(
            achat_stream=self._astream(prepared, parts), sources=[self._tool_output(prepared)],
            source_nodes=self._source_nodes(prepared),
        )
        response.awrite_response_to_history_task = asyncio.create_task(
            response.awrite_response_to_history(self._memory)
        )
        return response

    # ------------------------------------------------------------------ streaming internals

    def _stream(self, prepared: PreparedTurn, parts: Any) -> Generator[ChatResponse, None, None]:
        turn = _StreamedTurn(self, prepared)
        if prepared.answering:
            for part in parts:
                if (chunk := turn.feed(part.delta or "")) is not None:
                    yield chunk
        if (chunk := turn.end()) is not None:
            yield chunk

    async def _astream(self, prepared: PreparedTurn, parts: Any) -> AsyncGenerator[ChatResponse, None]:
        turn = _StreamedTurn(self, prepared)
        if prepared.answering:
            async for part in parts:
                if (chunk := turn.feed(part.delta or "")) is not None:
                    yield chunk
        if (chunk := turn.end()) is not None:
            yield chunk

    def _remember(self, question: str, answer: str) -> None:
        self._memory.put(ChatMessage(role=MessageRole.USER, content=question))
        self._memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))

    # ------------------------------------------------------------------ retrieval-only (evaluation)

    def prepare_only(self, message: str, chat_history: list[ChatMessage] | None = None) -> TurnRecord:
        """Condense, retrieve, gate and postprocess without writing an answer (no answer LLM call).

        Memory is not touched: the evaluation passes each row's history explicitly.
        """
        prepared = self._prepare_turn(message, chat_history, answer=False)
        prepared.messages = None
        self._finish(prepared, None, None)
        return prepared.record


class _StreamedTurn:
    """What the sync and async streams share: filter deltas, then close the turn's record."""

    def __init__(self, engine: ConversationalRAGEngine, prepared: PreparedTurn) -> None:
        self._engine = engine
        self._prepared = prepared
        self._answer = AnswerFilter(prepared.record.language, suffix=prepared.answer_suffix)
        self._t0 = prepared.answer_started or time.perf_counter()

    def feed(self, delta: str) -> ChatResponse | None:
        shown = self._answer.feed(delta)
        return _chunk(self._answer.text, shown) if shown else None

    def end(self) -> ChatResponse | None:
        prepared = self._prepared
        if not prepared.answering:  # refused before answering: the refusal is the whole answer
            self._engine._finish(prepared, None, None)
            return _chunk(prepared.record.answer, prepared.record.answer)
        tail = self._answer.finish()
        self._engine._finish(prepared, self._answer, _ms(self._t0))
        return _chunk(self._answer.text, tail) if tail or not self._answer.text else None


def _primed(stream: Any) -> Any:
    """Pull the first chunk now, so a connection or auth failure surfaces in the caller's thread
    (as an exception the REPL can explain), not inside the history-writing thread."""
    first = next(stream, None)

    def chained() -> Generator[Any, None, None]:
        if first is not None:
            yield first
        yield from stream

    return chained()


async def _aprimed(stream: Any) -> Any:
    first = await anext(stream, None)

    async def chained() -> AsyncGenerator[Any, None]:
        if first is not None:
            yield first
        async for part in stream:
            yield part

    return chained()


async def _aiter_once(item: Any) -> AsyncGenerator[Any, None]:
    yield item


def _chunk(full: str, delta: str) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=full), delta=delta)


def _candidate(nws: NodeWithScore) -> Candidate:
    meta = nws.node.metadata
    return Candidate(
        node_id=nws.node.node_id,
        doc_id=str(meta.get("doc_id", nws.node.node_id)),
        title=str(meta.get("title", "")),
        fused_score=float(nws.score or 0.0),
        raw_scores=dict(getattr(nws, "raw_scores", {}) or {}),
        ranks=dict(getattr(nws, "ranks", {}) or {}),
    )


def _sources(nodes: list[NodeWithScore]) -> list[Source]:
    sources: dict[str, Source] = {}
    for nws in nodes:
        meta = nws.node.metadata
        doc_id = str(meta.get("doc_id", nws.node.node_id))
        sources.setdefault(doc_id, Source(doc_id=doc_id, title=str(meta.get("title", "")), date=str(meta.get("date", ""))))
    return list(sources.values())


def _dot(a: list[float], b: list[float]) -> float:
    """Cosine for the L2-normalised vectors the embedding adapters return."""
    return sum(x * y for x, y in zip(a, b))


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
