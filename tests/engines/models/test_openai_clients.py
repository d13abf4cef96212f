"""A call's max_tokens reaches the request for every OpenAI-compatible client the registry builds."""

from __future__ import annotations

from engines.models.openai_clients import OpenAIClient, OpenAILikeClient
from engines.models.registry import LLMOptions, build_llm


def test_a_calls_max_tokens_wins_over_the_clients_own() -> None:
    for kind, options in (("openai", LLMOptions(api_key="sk-test", max_tokens=384)),
                          ("openai-like", LLMOptions(api_base="http://127.0.0.1:9/v1", max_tokens=384))):
        llm = build_llm(kind, options)
        assert isinstance(llm, (OpenAIClient, OpenAILikeClient))
        assert llm._get_model_kwargs(max_tokens=1)["max_tokens"] == 1
        assert llm._get_model_kwargs()["max_tokens"] == 384  # no cap asked: the client's


def test_reasoning_models_get_the_cap_as_max_completion_tokens() -> None:
    llm = OpenAIClient(model="o1", api_key="sk-test", max_tokens=384)
    built = llm._get_model_kwargs(max_tokens=3)
    assert built["max_completion_tokens"] == 3 and "max_tokens" not in built
