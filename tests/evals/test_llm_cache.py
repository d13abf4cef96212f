"""The evaluation's LLM cache: same messages, same reply, survives a restart and a torn last line."""

from llama_index.core.prompts import PromptTemplate

from engines.models.fakes import ScriptedLLM
from evals.llm_cache import CachedLLM

PROMPT = PromptTemplate("Question: {question}\nQueries:\n")


def test_replies_are_reused_across_instances_and_torn_lines_are_skipped(tmp_path) -> None:
    path = tmp_path / "cache.jsonl"
    inner = ScriptedLLM(["variant one", "variant two"])
    cached = CachedLLM(inner, path)
    assert cached.predict(PROMPT, question="a") == "variant one"
    assert cached.predict(PROMPT, question="a") == "variant one"
    assert cached.predict(PROMPT, question="b") == "variant two"
    assert inner.calls == 2 and (cached.hits, cached.misses) == (1, 2)
    with path.open("a", encoding="utf-8") as f:
        f.write('{"key": "abc", "te')  # a run killed mid-write
    again = CachedLLM(ScriptedLLM([]), path)
    assert again.predict(PROMPT, question="b") == "variant two" and again.hits == 1
