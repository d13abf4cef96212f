"""The OpenAI protocol as real clients speak it: the official `openai` client (sync, async,
streaming), LlamaIndex's `OpenAILike` and LiteLLM, each pointed at the service on 127.0.0.1 for one
multi-turn conversation; content parts, usage, OpenAI-shaped errors, word-by-word streaming of a
quoted answer, and a `sources` event that agrees with the finished turn."""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import pytest

from app.service.keys import Keys
from engines.models.fakes import ScriptedLLM
from tests.app.test_service import dept_corpus, events_of, keys_file, service, serving  # noqa: F401  (fixtures)

QUESTION = "Phí thường niên thẻ SKU-4471 là bao nhiêu?"
ANSWER = "Thẻ SKU-4471 có phí thường niên 200.000 đồng."
FOLLOW_UP = "Còn thẻ đó có hoàn phí không?"
REWRITE = "Thẻ SKU-4471 có được hoàn phí thường niên không?"
SECOND = "Phí thường niên được hoàn nếu chi tiêu đủ 50 triệu đồng."


def _conversation_llm() -> ScriptedLLM:
    return ScriptedLLM([ANSWER, REWRITE, SECOND] * 3)


class CountingWords:
    """A token counter that counts words, so the expected usage is known exactly."""

    def __call__(self, text: str) -> int:
        return len(text.split())


def _served(service, llm=None, **settings):  # noqa: F811
    built = service(llm or _conversation_llm(), **settings)
    built._count_tokens = CountingWords()
    return built


def test_the_official_client_sync_async_and_streaming_holds_a_conversation(service, tmp_path) -> None:  # noqa: F811
    import openai

    with serving(_served(service), keys_file(tmp_path)) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-all")
        first = client.chat.completions.create(model="turnrag-test", messages=[{"role": "user", "content": QUESTION}])
        assert first.choices[0].message.content == ANSWER
        assert first.usage.prompt_tokens == len(QUESTION.split())
        assert first.usage.completion_tokens == len(ANSWER.split())
        assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
        history = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ANSWER}]
        chunks = list(client.chat.completions.create(
            model="turnrag-test", stream=True, stream_options={"include_usage": True},
            messages=[*history, {"role": "user", "content": [{"type": "text", "text": FOLLOW_UP}]}]))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == SECOND
        assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == len(SECOND.split())
        stop = next(c for c in chunks if c.choices and c.choices[0].finish_reason == "stop")
        assert stop.model_extra["turnrag"]["query"] == REWRITE  # condensed from the history the client sent

        async def async_turn() -> str:
            aclient = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="key-all")
            reply = await aclient.chat.completions.create(model="turnrag-test",
                                                          messages=[{"role": "user", "content": QUESTION}])
            return reply.choices[0].message.content

        assert asyncio.run(async_turn()) == ANSWER


def test_llamaindex_openai_like_and_litellm_are_clients_too(service, tmp_path) -> None:  # noqa: F811
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of litellm's price list
    import litellm
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.llms.openai_like import OpenAILike

    with serving(_served(service), keys_file(tmp_path)) as base:
        llm = OpenAILike(model="turnrag-test", api_base=f"{base}/v1", api_key="key-all", is_chat_model=True)
        first = llm.chat([ChatMessage(role="user", content=QUESTION)])
        assert first.message.content == ANSWER
        streamed = "".join(r.delta or "" for r in llm.stream_chat(
            [ChatMessage(role="user", content=QUESTION), ChatMessage(role="assistant", content=ANSWER),
             ChatMessage(role="user", content=FOLLOW_UP)]))
        assert streamed == SECOND

        reply = litellm.completion(model="openai/turnrag-test", api_base=f"{base}/v1", api_key="key-all",
                                   messages=[{"role": "user", "content": QUESTION}])
        assert reply.choices[0].message.content == ANSWER and reply.usage.total_tokens > 0
        parts = litellm.completion(model="openai/turnrag-test", api_base=f"{base}/v1", api_key="key-all", stream=True,
                                   messages=[{"role": "user", "content": QUESTION},
                                             {"role": "assistant", "content": ANSWER},
                                             {"role": "user", "content": FOLLOW_UP}])
        assert "".join(p.choices[0].delta.content or "" for p in parts if p.choices) == SECOND


@pytest.mark.parametrize(("field", "value", "code"), [
    ("max_tokens", 10**12, "above_max_value"),
    ("max_tokens", -5, "below_min_value"),
    ("max_tokens", "abc", "invalid_type"),
    ("temperature", 3, "above_max_value"),
    ("n", 2, "above_max_value"),
])
def test_bad_parameters_get_openai_s_error_shape(service, tmp_path, field, value, code) -> None:  # noqa: F811
    import openai

    with serving(_served(service), Keys(None)) as base:
        body = {"messages": [{"role": "user", "content": QUESTION}], field: value}
        reply = httpx.post(f"{base}/v1/chat/completions", json=body)
        assert reply.status_code == 400
        error = reply.json()["error"]
        assert error["param"] == field and error["code"] == code and error["type"] == "invalid_request_error"
        assert field in error["message"]
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused")
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": QUESTION}],
                                           extra_body={field: value})
        assert raised.value.code == code and raised.value.param == field


def test_content_parts_other_than_text_are_named(service, tmp_path) -> None:  # noqa: F811
    with serving(_served(service), Keys(None)) as base:
        reply = httpx.post(f"{base}/v1/chat/completions", json={"messages": [{"role": "user", "content": [
            {"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]})
        assert reply.status_code == 400
        error = reply.json()["error"]
        assert error["code"] == "unsupported_content_type" and "messages[0].content[1]" in error["message"]
        assert "image_url" in error["message"]


def test_a_quoted_answer_streams_word_by_word_and_sources_agree_with_the_finished_turn(
        service, tmp_path) -> None:  # noqa: F811
    with serving(_served(service, answer_mode="extract"), Keys(None)) as base:
        sid = httpx.post(f"{base}/v1/sessions").json()["id"]
        streamed = httpx.post(f"{base}/v1/sessions/{sid}/messages", headers={"Accept": "text/event-stream"},
                              json={"content": QUESTION}, timeout=30)
        events = events_of(streamed.text)
        tokens = [d["text"] for n, d in events if n == "token"]
        done = next(d for n, d in events if n == "done")
        assert "200.000" in done["answer"] and "".join(tokens) == done["answer"]
        assert len(tokens) > 5  # word by word, not one chunk at the end
        early = next(d for n, d in events if n == "sources")
        assert early["sources"] == done["sources"] and done["sources"]

        chunks = httpx.post(f"{base}/v1/chat/completions", timeout=30, json={
            "stream": True, "messages": [{"role": "user", "content": QUESTION}]}).text.split("\n\n")
        deltas = [json.loads(c[len("data: "):]) for c in chunks if c.startswith("data: {")]
        assert sum(1 for d in deltas if d["choices"] and d["choices"][0]["delta"].get("content")) > 5
