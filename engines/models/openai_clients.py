"""LlamaIndex's OpenAI clients with one fix: a call's own ``max_tokens`` is honoured.

llama-index-llms-openai 0.8.3 builds a request from the call's keyword arguments and then writes the
client's ``max_tokens`` over them (``OpenAI._get_model_kwargs``), so ``llm.chat(messages, max_tokens=1)``
asked the packaged model for up to 384 tokens (measured: a 1-token request came back with 384). A
check that wants one token, and a rambling small model, then cost seconds. Every client the registry
builds (the packaged model's, OpenAI's, any OpenAI-compatible server's) goes through this mixin.
"""

from __future__ import annotations

from typing import Any

from llama_index.llms.openai import OpenAI
from llama_index.llms.openai_like import OpenAILike


class CallMaxTokens:
    """Mixin for ``OpenAI`` subclasses: ``max_tokens`` given to a call wins over the client's."""

    def _get_model_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        built = super()._get_model_kwargs(**kwargs)  # type: ignore[misc]
        wanted = kwargs.get("max_tokens")
        if wanted is not None:
            built["max_completion_tokens" if "max_completion_tokens" in built else "max_tokens"] = wanted
        return built


class OpenAIClient(CallMaxTokens, OpenAI):
    @classmethod
    def class_name(cls) -> str:
        return "OpenAIClient"


class OpenAILikeClient(CallMaxTokens, OpenAILike):
    @classmethod
    def class_name(cls) -> str:
        return "OpenAILikeClient"
