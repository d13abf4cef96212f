import pytest

from app.config import load_settings
from engines.errors import ConfigError


def test_defaults_are_the_offline_embedded_stack(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith("TURNRAG_"):
            monkeypatch.delenv(key)
    s = load_settings()
    assert s.llm == "local" and s.embedding == "e5-small" and s.chroma_host is None
    assert s.condense_window == 6 and s.num_queries == 1
    assert s.reranker == "" and "rerank" in s.steps  # listed, off until a cross-encoder is named
    assert s.effective_answer_mode == "extract"  # the packaged 1.5B model quotes, it does not paraphrase


def test_answer_mode_follows_the_llm_unless_set(monkeypatch):
    monkeypatch.delenv("TURNRAG_ANSWER_MODE", raising=False)
    assert load_settings(llm="openai-like", llm_api_base="http://127.0.0.1:1/v1").effective_answer_mode == "generate"
    assert load_settings(llm="fake").effective_answer_mode == "generate"
    assert load_settings(llm="local", answer_mode="generate").effective_answer_mode == "generate"
    with pytest.raises(ConfigError) as err:
        load_settings(answer_mode="summarise")
    assert "TURNRAG_ANSWER_MODE" in str(err.value)


def test_env_and_toml_and_overrides_in_order(tmp_path, monkeypatch):
    toml = tmp_path / "turnrag.toml"
    toml.write_text('top_k = 7\ncandidate_k = 30\nllm = "fake"\n', encoding="utf-8")
    monkeypatch.setenv("TURNRAG_CANDIDATE_K", "40")
    s = load_settings(toml, top_k=9)
    assert s.llm == "fake"  # from the file
    assert s.candidate_k == 40  # env beats file
    assert s.top_k == 9  # explicit beats both


@pytest.mark.parametrize("overrides, named", [
    ({"top_k": 0}, "TURNRAG_TOP_K"),
    ({"embedding": "bert"}, "TURNRAG_EMBEDDING"),
    ({"llm": "claude"}, "TURNRAG_LLM"),
    ({"chunk_size": 100, "chunk_overlap": 200}, "chunk_overlap"),
    ({"llm": "openai-like"}, "TURNRAG_LLM_API_BASE"),
    ({"reranker": "/models/ce", "top_k": 8, "rerank_pool": 5}, "rerank_pool"),
])
def test_bad_values_name_the_setting(overrides, named):
    with pytest.raises(ConfigError) as err:
        load_settings(**overrides)
    assert named in str(err.value)


def test_bad_env_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("TURNRAG_TOP_K", "many")
    with pytest.raises(ConfigError, match="TURNRAG_TOP_K"):
        load_settings()


def test_missing_or_broken_config_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("top_k = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.toml"):
        load_settings(broken)


def test_thresholds_follow_the_embedding_model_unless_set():
    assert load_settings(embedding="e5-small").calibrated("refusal_min_vector") == 0.83
    assert load_settings(embedding="minilm").calibrated("refusal_min_vector") == 0.39  # MiniLM's cosine scale
    assert load_settings(embedding="hf:/some/model").calibrated("conflict_similarity") == 0.68
    assert load_settings(embedding="minilm", refusal_min_vector=0.5).calibrated("refusal_min_vector") == 0.5


def test_an_empty_variable_means_unset(monkeypatch):
    monkeypatch.setenv("TURNRAG_LOG_DIR", "")
    monkeypatch.setenv("TURNRAG_SESSION_STORE", "")
    s = load_settings(index_dir="/tmp/idx")
    assert s.log_dir is None and s.record_log is None  # not ./turns.jsonl
    assert s.conversations == "/tmp/idx/sessions.sqlite3"
