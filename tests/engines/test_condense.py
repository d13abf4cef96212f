import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines import condense


def msgs(*texts):
    roles = [MessageRole.USER, MessageRole.ASSISTANT]
    return [ChatMessage(role=roles[i % 2], content=t) for i, t in enumerate(texts)]


HISTORY = msgs("Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", "Không có phép năm khi thử việc.",
               "Còn hợp đồng thời vụ thì sao?", "1 ngày mỗi tháng làm việc.")


def test_window_keeps_the_last_n_messages():
    history = msgs(*[f"m{i}" for i in range(10)])
    assert [m.content for m in condense.window(history, 6)] == [f"m{i}" for i in range(4, 10)]
    assert condense.window(history, 0) == []
    assert len(condense.window(history[:3], 6)) == 3
    with pytest.raises(ValueError):
        condense.window(history, -1)


def test_good_rewrite_is_accepted():
    out = "Ngày phép của hợp đồng thời vụ có được cộng dồn không?"
    decision = condense.guard("Cái đó có được cộng dồn không?", out, HISTORY)
    assert decision == condense.CondenseDecision(out)


@pytest.mark.parametrize("output, reason", [
    ("", "empty"),
    ("   \n ", "empty"),
    ("Cái đó có được cộng dồn không?", "unchanged"),
    ("Có, phép được cộng dồn tối đa 5 ngày sang quý 1 năm sau.", "answered"),
])
def test_bad_rewrites_fall_back_to_history_query(output, reason):
    decision = condense.guard("Cái đó có được cộng dồn không?", output, HISTORY)
    assert decision.fallback_reason == reason
    assert decision.query == "Còn hợp đồng thời vụ thì sao? Cái đó có được cộng dồn không?"


def test_unchanged_standalone_question_is_kept():
    question = "Lãi suất vay mua nhà ưu đãi là bao nhiêu phần trăm một năm?"
    assert condense.guard(question, question, HISTORY) == condense.CondenseDecision(question)


def test_labels_and_quotes_are_stripped():
    out = 'Standalone question: "What is the API rate limit in version 1.2?"\nExtra line'
    assert condense.clean_output(out) == "What is the API rate limit in version 1.2?"


@pytest.mark.parametrize("question, dependent", [
    ("Còn hợp đồng thời vụ thì sao?", True),
    ("Cái đó có được cộng dồn không?", True),
    ("vậy phí bao nhiêu?", True),
    ("What about v2?", True),
    ("Lãi suất vay mua nhà ưu đãi là bao nhiêu?", False),
    ("What is the rate limit of the public API?", False),
])
def test_dependence_heuristic(question, dependent):
    assert condense.looks_dependent(question) is dependent


def test_english_follow_ups_get_the_zero_shot_prompt_and_vietnamese_the_few_shot_one() -> None:
    from engines.condense import CONDENSE_PROMPT, CONDENSE_PROMPT_EN, prompt_for

    assert prompt_for("en") is CONDENSE_PROMPT_EN and prompt_for("vi") is CONDENSE_PROMPT
    custom = CONDENSE_PROMPT_EN.partial_format()
    assert prompt_for("vi", custom) is custom  # an explicit prompt serves every language
    text = CONDENSE_PROMPT_EN.format(chat_history="user: What is NAV?", question="And market cap?")
    assert "Lãi suất" not in text and "Do not answer" in text  # no Vietnamese examples to copy from
