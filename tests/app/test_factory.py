"""Swapping models is a config change; each kind builds the right LlamaIndex object."""

import pytest
from llama_index.core import Settings as LlamaSettings

from app.compose import build_models
from app.config import load_settings
from engines.errors import ConfigError
from engines.models.fakes import HashEmbedding, ScriptedLLM


def test_fake_models(tmp_path, monkeypatch):
    monkeypatch.setattr(LlamaSettings, "_llm", None)
    monkeypatch.setattr(LlamaSettings, "_embed_model", None)
    models = build_models(load_settings(llm="fake", embedding="fake", index_dir=tmp_path))
    assert isinstance(models.llm, ScriptedLLM) and isinstance(models.embed_model.inner, HashEmbedding)
    assert models.embed_model.class_name() == "QueryVectorCache"  # a turn's query is embedded once
    assert models.condense_llm is models.llm
    assert LlamaSettings._llm is None and LlamaSettings._embed_model is None  # global Settings left alone


def test_llamaindex_globals_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(LlamaSettings, "_llm", None)
    monkeypatch.setattr(LlamaSettings, "_embed_model", None)
    models = build_models(load_settings(llm="fake", embedding="fake", index_dir=tmp_path, llamaindex_globals=True))
    assert LlamaSettings.llm is models.llm and LlamaSettings.embed_model is models.embed_model


def test_openai_needs_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_models(load_settings(llm="openai", embedding="fake"))


def test_openai_with_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    from llama_index.llms.openai import OpenAI

    models = build_models(load_settings(llm="openai", llm_model="gpt-4o-mini", embedding="fake"))
    assert isinstance(models.llm, OpenAI) and models.llm.model == "gpt-4o-mini"


def test_openai_like_server():
    from llama_index.llms.openai_like import OpenAILike

    models = build_models(load_settings(llm="openai-like", llm_api_base="http://127.0.0.1:9/v1",
                                        llm_model="qwen2.5", embedding="fake"))
    assert isinstance(models.llm, OpenAILike)
    assert models.llm.api_base == "http://127.0.0.1:9/v1" and models.llm.is_chat_model


def test_separate_condense_llm():
    from llama_index.llms.openai_like import OpenAILike

    models = build_models(load_settings(llm="fake", condense_llm="openai-like", llm_api_base="http://127.0.0.1:9/v1",
                                        condense_llm_model="small", embedding="fake"))
    assert isinstance(models.llm, ScriptedLLM) and isinstance(models.condense_llm, OpenAILike)
    assert models.condense_llm.model == "small"


def test_local_llm_with_a_missing_gguf_path():
    with pytest.raises(ConfigError, match="llm_model"):
        build_models(load_settings(llm="local", llm_model="/nope/model.gguf", embedding="fake"))


def test_local_llm_is_lazy():
    from llama_index.llms.openai_like import OpenAILike

    from engines.models.llama_server import LocalOpenAILike

    models = build_models(load_settings(llm="local", embedding="fake"))
    assert isinstance(models.llm, LocalOpenAILike)  # built without loading 1 GB of weights
    assert isinstance(models.llm, OpenAILike) and not models.llm.server.is_running  # the OpenAI-compatible path


def test_huggingface_path_that_does_not_exist():
    from engines.errors import ModelUnavailable

    with pytest.raises(ModelUnavailable, match="no model hub is reachable"):
        build_models(load_settings(llm="fake", embedding="hf:/nope/model"))
