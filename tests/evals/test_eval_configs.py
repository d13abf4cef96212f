"""Query configurations: what each sends, history conversion and the registry."""

from __future__ import annotations

import json

import pytest
from llama_index.core.base.llms.types import MessageRole

from engines.errors import ConfigError
from evals.configs import (
    QueryConfig,
    TurnInput,
    available_configs,
    get_config,
    register_config,
    resolve_configs,
    to_chat_messages,
)
from evals.dataset import parse_rows

ROW = parse_rows([json.dumps({
    "conv_id": "c", "turn": 3, "question": "Cái đó có được cộng dồn không?", "type": "non_standalone",
    "gold_doc_ids": ["leave-seasonal-carryover"], "rewrite": "Phép thời vụ có được cộng dồn không?",
    "history": [["user", "Thử việc nghỉ mấy ngày?"], ["bot", "Không có."],
                ["user", "Còn thời vụ thì sao?"], ["assistant", "1 ngày mỗi tháng."]],
}, ensure_ascii=False)])[0]


def test_history_becomes_chat_messages_with_bot_as_assistant():
    messages = to_chat_messages([("user", "a"), ("bot", "b"), ("assistant", "c")])
    assert [m.role for m in messages] == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.ASSISTANT]
    assert [m.content for m in messages] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="system"):
        to_chat_messages([("system", "x")])


def test_lastturn_sends_the_question_alone_without_rewriting():
    config = get_config("lastturn")
    assert config.build(ROW) == TurnInput(ROW.question)
    assert config.engine_options == {"condense_window": 0}


def test_condense_passes_the_real_history():
    turn_input = get_config("condense").build(ROW)
    assert turn_input.message == ROW.question
    assert [m.content for m in turn_input.chat_history][-1] == "1 ngày mỗi tháng."
    assert get_config("condense").engine_options == {} and get_config("condense").audit


def test_history_concatenates_user_turns_only():
    turn_input = get_config("history").build(ROW)
    assert turn_input.message == "Thử việc nghỉ mấy ngày? Còn thời vụ thì sao? Cái đó có được cộng dồn không?"
    assert turn_input.chat_history == ()


def test_reference_uses_the_rewrite_or_skips():
    assert get_config("reference").build(ROW).message == ROW.rewrite
    no_rewrite = parse_rows([json.dumps({"conv_id": "c", "turn": 1, "history": [], "question": "q?",
                                         "type": "standalone", "gold_doc_ids": ["d"]})])[0]
    assert get_config("reference").build(no_rewrite).skip_reason == "no reference rewrite"


def test_registry_names_and_errors():
    assert available_configs()[:4] == ["lastturn", "condense", "history", "reference"]
    with pytest.raises(ConfigError, match="unknown configuration 'hyde'; available: lastturn"):
        resolve_configs(["lastturn", "hyde"])
    with pytest.raises(ConfigError, match="listed twice: condense"):
        resolve_configs(["condense", "condense"])
    with pytest.raises(ValueError, match="already registered"):
        register_config(QueryConfig("lastturn", "x", lambda r: TurnInput(r.question)))


def test_a_new_config_can_be_registered_by_name(monkeypatch):
    from evals import configs

    monkeypatch.setattr(configs, "_REGISTRY", dict(configs._REGISTRY))
    register_config(QueryConfig("multiquery", "condense + generated queries", configs.condensed, {"num_queries": 3}))
    [resolved] = resolve_configs(["multiquery"])
    assert resolved.engine_options == {"num_queries": 3}
