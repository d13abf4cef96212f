"""End to end on the tiny fake corpus: replay, score, report files, and the CLI's exit codes."""

from __future__ import annotations

import io
import json

import pytest

from engines.errors import ConfigError
from evals.configs import get_config
from evals.dataset import parse_rows
from evals.evaluation import run_evaluation
from evals.replay import main
from evals.report import markdown, write_report
from evals.runner import replay
from tests.conftest import DOCS

H1 = "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?"
A1 = "Không có phép năm trong thời gian thử việc."
H2 = "Còn hợp đồng thời vụ thì sao?"
A2 = "1 ngày phép cho mỗi tháng làm việc đủ."
C1 = "Thẻ SKU-4471 có phí thường niên bao nhiêu?"
ROWS = [
    {"conv_id": "hr", "turn": 1, "history": [], "question": H1, "type": "standalone",
     "gold_doc_ids": ["leave-probation"], "rewrite": H1, "lang": "vi"},
    {"conv_id": "hr", "turn": 2, "history": [["user", H1], ["assistant", A1]], "question": H2,
     "type": "non_standalone", "gold_doc_ids": ["leave-seasonal"], "must_contain": ["1 ngày"],
     "rewrite": "Nhân viên hợp đồng thời vụ được nghỉ phép năm bao nhiêu ngày?", "lang": "vi"},
    {"conv_id": "hr", "turn": 3, "history": [["user", H1], ["assistant", A1], ["user", H2], ["bot", A2]],
     "question": "Cái đó có được cộng dồn không?", "type": "non_standalone",
     "gold_doc_ids": ["leave-seasonal-carryover"], "rewrite": "Phép hợp đồng thời vụ có được cộng dồn không?",
     "lang": "vi"},
    {"conv_id": "card", "turn": 1, "history": [], "question": C1, "type": "standalone",
     "gold_doc_ids": ["card-sku-4471"], "must_contain": ["200.000"], "stale_value": "150.000", "lang": "vi"},
    {"conv_id": "card", "turn": 2, "history": [["user", C1], ["assistant", "200.000 đồng."]],
     "question": "Còn thẻ SKU-4417?", "type": "non_standalone", "gold_doc_ids": ["card-sku-4417"], "lang": "vi"},
    {"conv_id": "card", "turn": 3,
     "history": [["user", C1], ["assistant", "200.000 đồng."], ["user", "Còn thẻ SKU-4417?"], ["assistant", "1.500.000 đồng."]],
     "question": "Giá vàng SJC hôm nay bao nhiêu?", "type": "unanswerable", "gold_doc_ids": [], "lang": "vi"},
    {"conv_id": "api", "turn": 2, "history": [["user", "What is the public API rate limit?"], ["bot", "500 per minute."]],
     "question": "Since which version?", "type": "non_standalone", "gold_doc_ids": ["api-limits"], "lang": "en"},
]
REQUIRED_ROW_FIELDS = {"conv_id", "turn", "type", "question", "query", "retrieved_doc_ids", "hit", "refused",
                       "refusal_reason", "answer", "latency_ms", "llm_calls", "conflicts", "condense_fallback",
                       "gold_doc_ids", "scores", "skipped", "extra"}


def dataset_lines() -> list[str]:
    return [json.dumps(r, ensure_ascii=False) for r in ROWS]


@pytest.fixture
def rows():
    return parse_rows(dataset_lines(), source="tiny.jsonl")


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(dataset_lines()) + "\n", encoding="utf-8")
    return path


def test_retrieval_only_replay_scores_every_config_and_writes_the_report(pipeline, rows, tmp_path):
    result = run_evaluation(pipeline, rows, ["lastturn", "condense", "history", "reference"], k=3,
                            retrieval_only=True, meta={"dataset": "tiny.jsonl", "corpus": "corpus"})
    assert result.configs == ["lastturn", "condense", "history", "reference"] and result.baseline == "lastturn"
    summary = result.summary
    assert summary["lastturn"]["all/all"]["n"] == 6
    assert summary["reference"]["n_skipped"] == 4  # card turns 1-3 and api have no rewrite
    assert summary["reference"]["all/all"]["n"] == 3
    assert summary["lastturn"]["cost"]["llm_calls_total"] == 0  # window 0: no condense call, no answer call
    # 5 later rows; the two "còn X" swaps are rewritten without an LLM call
    assert summary["condense"]["cost"]["llm_calls_by_turn"]["turn2+"] == 0.6
    assert summary["condense"]["refusal"]["n_unanswerable"] == 1
    assert "answers" not in summary["condense"]
    for name in result.configs:
        for bucket in ("all/all", "all/turn1", "all/turn2+", "non_standalone/turn2+"):
            assert 0.0 <= summary[name][bucket]["hit@3"] <= 1.0
    assert result.comparison("condense", "all/all").n == 6
    assert {a.config for a in result.audit} == {"condense"} and len(result.audit) == 4

    report = result.to_json()
    for name in result.configs:
        for row in report["configs"][name]["rows"]:
            assert REQUIRED_ROW_FIELDS <= set(row)
    row = report["configs"]["history"]["rows"][2]
    assert row["query"] == f"{H1} {H2} Cái đó có được cộng dồn không?"
    assert row["extra"] == {"lang": "vi"} and set(row["latency_ms"]) >= {"condense", "retrieve", "total"}
    assert row["retrieved_doc_ids"] and row["hit"] in (True, False)
    assert report["configs"]["reference"]["rows"][3]["skipped"] == "no reference rewrite"

    paths = write_report(result, tmp_path / "out")
    saved = json.loads(paths.json.read_text(encoding="utf-8"))
    assert set(saved) == {"summary", "configs", "comparisons", "audit", "meta"}
    assert set(saved["meta"]) >= {"dataset", "corpus", "k", "mode", "retrieval_only", "settings", "timestamp"}
    assert saved["meta"]["k"] == 3 and saved["meta"]["settings"]["top_k"] == 3
    assert saved["summary"]["headline"]["metric"] == "hit@3"
    assert paths.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = paths.markdown.read_text(encoding="utf-8")
    assert "![hit@3 by turn position](hit_by_turn.png)" in md
    assert "## Retrieval hit@3 by type/turn" in md and "| non_standalone/turn2+ |" in md
    assert "## Refusal on unanswerable rows" in md and "## Rewrite audit" in md


def test_rows_mode_uses_each_rows_history_not_the_engines_memory(pipeline, rows):
    llm = pipeline.models.condense_llm
    before = llm.calls
    results = replay(pipeline, rows, get_config("condense"), retrieval_only=True)
    prompts = llm.prompts[before:]
    # one condense call per row with history, except the two "còn X" swaps; turn-1 rows make none
    assert len(prompts) == 3
    card_prompt = next(p for p in prompts if "Giá vàng SJC" in p)
    assert C1 in card_prompt and H1 not in card_prompt  # the previous row (hr) did not leak in
    assert results[1].history_seen == (("user", H1), ("assistant", A1))
    assert results[2].condense_used_llm and results[0].llm_calls == 0


def test_full_run_has_answer_metrics(pipeline, rows):
    result = run_evaluation(pipeline, rows, ["lastturn", "reference"], k=3, retrieval_only=False)
    answers = result.summary["lastturn"]["answers"]
    assert answers["n_must_contain"] == 2 and answers["n_stale"] == 1
    # each checked row at exactly one stage, with the chunk ids it was followed through
    assert sum(answers["lost_at"]["all"].values()) == 2
    checked = [r for r in result.rows["lastturn"] if r.lost_at is not None]
    assert len(checked) == 2 and all(r.retrieved_node_ids or r.refused for r in checked)
    assert result.summary["lastturn"]["cost"]["latency_ms"]["total"]["n"] == 7
    row = result.rows["lastturn"][0]
    assert row.answer and row.llm_calls >= 1 - int(row.refused)


def test_live_mode_feeds_the_engines_own_answers_back(pipeline, rows):
    results = replay(pipeline, rows, get_config("condense"), retrieval_only=False, mode="live")
    assert [r.index for r in results] == list(range(len(rows)))
    hr2 = results[1]
    assert hr2.history_seen[0] == ("user", H1)
    assert hr2.history_seen[1][1] == results[0].answer and hr2.history_seen[1][1] != A1
    api = results[6]  # its turn 1 is not a row: sent first, unscored, so the conversation is complete
    assert api.history_seen[0] == ("user", "What is the public API rate limit?")
    assert api.history_seen[1][1] != "500 per minute." and api.condense_used_llm


def test_live_mode_needs_answers(pipeline, rows):
    with pytest.raises(ConfigError, match="live"):
        replay(pipeline, rows, get_config("condense"), retrieval_only=True, mode="live")


def test_markdown_without_plot_still_lists_tables(pipeline, rows):
    result = run_evaluation(pipeline, rows[:2], ["lastturn"], k=3)
    text = markdown(result, plot_name=None)
    assert "![" not in text and "## Dataset" in text and "Paired comparison" not in text


# ---------------------------------------------------------------------------------- CLI


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_writes_the_report(tmp_path, corpus, dataset, monkeypatch):
    monkeypatch.setenv("TURNRAG_REFUSAL_MIN_VECTOR", "0.25")
    monkeypatch.setenv("TURNRAG_TOP_K", "3")
    monkeypatch.setenv("TURNRAG_CANDIDATE_K", "10")
    code, out, err = run_cli(dataset, "--corpus", corpus, "--index", tmp_path / "idx", "--configs",
                             "lastturn,history,condense", "--k", "3", "--retrieval-only", "--llm", "fake",
                             "--embedding", "fake", "--out", tmp_path / "out")
    assert code == 0, err
    assert "7 added" in err
    assert "Retrieval hit@3 by type/turn" in out and "Paired comparison against lastturn" in out
    assert "\x1b[" not in out  # no colour codes when captured
    for name in ("report.json", "report.md", "hit_by_turn.png"):
        assert (tmp_path / "out" / name).is_file()
    meta = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["meta"]
    assert meta["dataset"] == str(dataset) and meta["retrieval_only"] is True and meta["mode"] == "rows"
    code, _, err = run_cli(dataset, "--corpus", corpus, "--index", tmp_path / "idx", "--configs", "lastturn",
                           "--k", "3", "--retrieval-only", "--llm", "fake", "--embedding", "fake",
                           "--out", tmp_path / "out2", "--limit", "2")
    assert code == 0 and "7 unchanged" in err  # the index is reused


def test_cli_bad_dataset_line_exits_2_with_file_line_and_field(tmp_path, corpus, dataset):
    lines = dataset.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[2])
    bad["type"] = "followup"
    lines[2] = json.dumps(bad, ensure_ascii=False)
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(dataset, "--corpus", corpus, "--index", tmp_path / "idx", "--llm", "fake",
                             "--embedding", "fake", "--retrieval-only")
    assert code == 2
    assert f"{dataset}:3: field 'type'" in err and "Traceback" not in err + out
    assert not (tmp_path / "idx").exists()  # failed before touching the index


def test_cli_unknown_config_exits_2(tmp_path, corpus, dataset):
    code, _, err = run_cli(dataset, "--corpus", corpus, "--configs", "lastturn,hyde", "--retrieval-only")
    assert code == 2 and "unknown configuration 'hyde'" in err


def test_cli_unknown_baseline_exits_2(tmp_path, corpus, dataset):
    code, _, err = run_cli(dataset, "--corpus", corpus, "--index", tmp_path / "idx", "--llm", "fake",
                           "--embedding", "fake", "--retrieval-only", "--configs", "lastturn,history",
                           "--baseline", "condense", "--limit", "1")
    assert code == 2 and "baseline 'condense' is not among the configurations: lastturn, history" in err


def test_cli_rejects_live_retrieval_only(capsys, dataset, corpus):
    with pytest.raises(SystemExit) as info:
        main([str(dataset), "--corpus", str(corpus), "--mode", "live", "--retrieval-only"])
    assert info.value.code == 2 and "cannot be --retrieval-only" in capsys.readouterr().err


def test_cli_help_lists_configs_and_outputs(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "lastturn" in text and "reference" in text and "report-schema.md" in text and "--retrieval-only" in text


def test_row_filters_restrict_that_row_only(pipeline) -> None:
    rows = parse_rows([json.dumps(r, ensure_ascii=False) for r in [
        {"conv_id": "f", "turn": 1, "history": [], "question": H1, "type": "standalone",
         "gold_doc_ids": ["leave-probation"], "filters": {"date_from": "2024-03-01"}},
        {"conv_id": "g", "turn": 1, "history": [], "question": H1, "type": "standalone", "gold_doc_ids": ["leave-probation"]},
    ]])
    filtered, free = replay(pipeline, rows, get_config("lastturn"))
    dates = {doc_id: date for doc_id, (_, date, _) in DOCS.items()}
    assert filtered.retrieved_doc_ids and all(dates[d] >= "2024-03-01" for d in filtered.retrieved_doc_ids)
    assert free.retrieved_doc_ids[0] == "leave-probation"


def test_bad_row_filter_names_the_line() -> None:
    line = json.dumps({"conv_id": "f", "turn": 1, "history": [], "question": "q", "type": "standalone",
                       "gold_doc_ids": ["x"], "filters": {"date_to": "yesterday"}})
    with pytest.raises(Exception, match=r"rows>:1.*date_to.*YYYY-MM-DD"):
        parse_rows([line])


def test_composed_configurations_run_transforms_by_name(pipeline) -> None:
    rows = parse_rows([json.dumps(ROWS[0], ensure_ascii=False)])
    [result] = replay(pipeline, rows, get_config("condense+multiquery+stepback"))
    assert result.retrieved_doc_ids[0] == "leave-probation"
    # turn 1: no condense call; the fake LLM restates the question, so both transforms add nothing
    assert result.llm_calls == 2 and [t.split(":")[0] for t in result.transforms] == ["multiquery", "stepback"]
    with pytest.raises(ConfigError, match="modifiers joined by"):
        get_config("condense+rerank")


class APITimeoutError(Exception):
    """Named like the openai client's: what a busy llama.cpp server gives after the timeout."""


def test_a_slow_llm_call_is_retried_once_then_the_row_is_skipped_not_the_run(pipeline, rows, monkeypatch):
    llm = pipeline.models.condense_llm
    original = type(llm)._reply
    failures = {"left": 1}

    def flaky(self, prompt):
        if failures["left"]:
            failures["left"] -= 1
            raise APITimeoutError("Request timed out.")
        return original(self, prompt)

    monkeypatch.setattr(type(llm), "_reply", flaky)
    results = replay(pipeline, rows, get_config("condense"), retrieval_only=True)
    assert all(r.scored for r in results)  # the first failure was retried

    failures["left"] = 10**6  # the LLM server is gone for good
    results = replay(pipeline, rows, get_config("condense"), retrieval_only=True)
    skipped = {r.row.key: r.skipped for r in results if not r.scored}
    assert skipped == {"hr#3": "llm error: APITimeoutError", "card#3": "llm error: APITimeoutError",
                       "api#2": "llm error: APITimeoutError"}  # the rows that needed the condenser
    assert results[0].scored  # turn 1 needs no LLM


def test_other_errors_still_stop_the_run(pipeline, rows, monkeypatch):
    monkeypatch.setattr(type(pipeline.models.condense_llm), "_reply", lambda self, prompt: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        replay(pipeline, rows, get_config("condense"), retrieval_only=True)
