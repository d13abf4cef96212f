"""mtRAG converter: a hand-made layout that always runs, plus checks on the real benchmark
when /work/shared/benchmarks/mtrag is present."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals.datasets.mtrag import convert, main
from evals.datasets.mtrag_files import Conversation, MtragError, match_conversations, read_qrels
from evals.datasets.mtrag_standalone import decide_standalone, imported_context_words, is_fragment, reference_cue

FIXTURE = Path(__file__).parent / "fixtures" / "mtrag"
REAL_SRC = Path(os.environ.get("MTRAG_SRC", "/work/shared/benchmarks/mtrag"))
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("toy_out")
    result = convert(FIXTURE, "toy", out)
    rows = {row["task_id"]: row for row in read_rows(result.rows_path)}
    assert len(rows) == len(result.rows)
    return rows


# --- fixture layout ---------------------------------------------------------------------------


def test_rows_cover_tasks_and_unanswerable_turns_only(toy: dict[str, dict]) -> None:
    assert sorted(toy) == [
        "aaa<::>1", "aaa<::>2", "aaa<::>3",  # aaa<::>4 is CONVERSATIONAL and not a task
        "bbb<::>1", "bbb<::>2", "bbb<::>3", "bbb<::>4",
    ]  # fmt: skip


def test_shared_opening_turn_resolves_to_the_right_file(toy: dict[str, dict]) -> None:
    assert toy["aaa<::>2"]["source_file"] == "1.json"
    assert toy["bbb<::>1"]["source_file"] == "2.json"
    assert toy["bbb<::>1"]["history"] == []


def test_history_is_all_earlier_messages_in_order(toy: dict[str, dict]) -> None:
    for row in toy.values():
        assert len(row["history"]) == 2 * (row["turn"] - 1)
        assert [role for role, _ in row["history"]] == ["user", "assistant"] * (row["turn"] - 1)
    assert toy["aaa<::>3"]["history"] == [
        ["user", "What is a Roth IRA?"],
        ["assistant", "A Roth IRA is a retirement account funded with after-tax money."],
        ["user", "What are its contribution limits?"],
        ["assistant", "The IRS sets the limits each year."],
    ]
    assert toy["aaa<::>3"]["reference_answer"] == "I'm sorry, I can't predict that."


def test_gold_ids_come_from_qrels_with_positive_score(toy: dict[str, dict]) -> None:
    assert toy["aaa<::>2"]["gold_doc_ids"] == ["d2"]  # d3 and d3b have score 0
    assert toy["bbb<::>2"]["gold_doc_ids"] == ["d4"]


def test_unanswerable_turns_have_no_gold_even_when_qrels_list_some(toy: dict[str, dict]) -> None:
    listed = toy["bbb<::>3"]
    assert (listed["type"], listed["answerability"], listed["gold_doc_ids"]) == (
        "unanswerable",
        "UNANSWERABLE",
        [],
    )
    assert listed["in_retrieval_tasks"] is True
    extra = toy["aaa<::>3"]
    assert (extra["type"], extra["gold_doc_ids"], extra["rewrite"]) == ("unanswerable", [], None)
    assert extra["in_retrieval_tasks"] is False


def test_turn_one_is_standalone(toy: dict[str, dict]) -> None:
    for task_id in ("aaa<::>1", "bbb<::>1"):
        assert (toy[task_id]["type"], toy[task_id]["standalone_basis"]) == ("standalone", "turn1")


def test_standalone_rule_on_later_turns(toy: dict[str, dict]) -> None:
    assert (toy["aaa<::>2"]["type"], toy["aaa<::>2"]["standalone_basis"]) == (
        "non_standalone",
        "rewrite_context",
    )
    assert (toy["bbb<::>2"]["type"], toy["bbb<::>2"]["standalone_basis"]) == (
        "non_standalone",
        "label",
    )
    assert toy["bbb<::>2"]["standalone_label"] == "Non-standalone"
    assert (toy["bbb<::>4"]["type"], toy["bbb<::>4"]["standalone_basis"]) == (
        "standalone",
        "no_cue",
    )


def test_rewrite_and_labels_are_carried(toy: dict[str, dict]) -> None:
    row = toy["aaa<::>2"]
    assert row["rewrite"] == "What are the Roth IRA contribution limits?"
    assert row["question"] == "What are its contribution limits?"
    assert (row["domain"], row["answerability"], row["multi_turn"]) == (
        "toy",
        "ANSWERABLE",
        "Follow-up",
    )
    assert toy["bbb<::>3"]["question_type"] == ["Comparative", "Opinion"]
    assert toy["bbb<::>2"]["answerability"] == "PARTIAL"


def test_corpus_is_written_in_beir_form(tmp_path: Path) -> None:
    result = convert(FIXTURE, "toy", tmp_path)
    docs = read_rows(tmp_path / "toy_corpus.jsonl")
    assert [d["_id"] for d in docs] == ["d1", "d2", "d3", "d4", "d5"]
    assert all(list(d)[:3] == ["_id", "title", "text"] for d in docs)
    assert docs[3]["url"] == "https://example.org/broker"
    assert result.corpus.docs == 5
    assert result.missing_gold == 0


def test_tasks_only_and_limit(tmp_path: Path) -> None:
    result = convert(FIXTURE, "toy", tmp_path, tasks_only=True, limit_conversations=1)
    assert [r["task_id"] for r in result.rows] == ["bbb<::>1", "bbb<::>2", "bbb<::>3", "bbb<::>4"]
    assert all(r["in_retrieval_tasks"] for r in result.rows)
    assert result.corpus.docs == 5  # the corpus is never cut


def test_cli_prints_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(FIXTURE), "--domain", "toy", "--out", str(tmp_path)]) == 0
    summary = capsys.readouterr().out
    assert "7 rows from 2 conversations" in summary
    assert "unanswerable" in summary and "corpus: 5 passages" in summary
    assert (tmp_path / "toy.jsonl").is_file()


# --- errors -----------------------------------------------------------------------------------


@pytest.fixture
def broken_src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    return src


def test_missing_file_exits_2_naming_path(
    broken_src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = broken_src / "retrieval_tasks" / "toy" / "qrels" / "dev.tsv"
    qrels.unlink()
    assert main([str(broken_src), "--domain", "toy", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert str(qrels) in err and "expected layout" in err and "Traceback" not in err


def test_broken_src_from_the_shell_has_no_traceback(broken_src: Path, tmp_path: Path) -> None:
    (broken_src / "corpus" / "toy.jsonl").unlink()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evals.datasets.mtrag",
            str(broken_src),
            "--domain",
            "toy",
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "toy.jsonl: missing file" in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_domain_lists_available(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(FIXTURE), "--domain", "cloud", "--out", str(tmp_path)]) == 2
    assert "available: toy" in capsys.readouterr().err


def test_bad_json_line_names_file_and_line(broken_src: Path, tmp_path: Path) -> None:
    rewrite = broken_src / "retrieval_tasks" / "toy" / "toy_rewrite.jsonl"
    lines = rewrite.read_text().splitlines()
    lines[2] = '{"_id": "bbb<::>3", "text": '
    rewrite.write_text("\n".join(lines) + "\n")
    with pytest.raises(MtragError, match=r"toy_rewrite\.jsonl:3: invalid JSON"):
        convert(broken_src, "toy", tmp_path / "out")


def test_unmatched_conversation_is_an_error(broken_src: Path, tmp_path: Path) -> None:
    (broken_src / "conversations" / "2.json").unlink()
    with pytest.raises(MtragError, match=r"no conversation file matches .* bbb"):
        convert(broken_src, "toy", tmp_path / "out")


# --- pure helpers -----------------------------------------------------------------------------


def test_match_conversations_rejects_ambiguity() -> None:
    same = [{"speaker": "user", "text": "Hi there"}]
    convs = [Conversation("1.json", tuple(same), ""), Conversation("2.json", tuple(same), "")]
    with pytest.raises(MtragError, match=r"matches several files: 1\.json, 2\.json"):
        match_conversations({"c<::>1": "|user|: Hi there"}, convs)


def test_read_qrels_skips_header_and_zero_scores(tmp_path: Path) -> None:
    path = tmp_path / "dev.tsv"
    with path.open("w", newline="") as handle:
        csv.writer(handle, delimiter="\t").writerows(
            [["query-id", "corpus-id", "score"], ["q", "a", "1"], ["q", "b", "0"], ["q", "c", "2"]]
        )
    assert read_qrels(path) == {"q": ["a", "c"]}


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("Is this the best river for fishing in the country?", "this"),
        ("did he always have powers?", "he"),
        ("What about FICA?", "what about"),
        ("I'm told guinea pigs are raised for food. Is that true?", "is that"),
        ("Got it. Can I change my 401k contribution mid-year?", None),
        ("Is it worth to open a second bank account?", None),
        ("Speaking about vaccines, how are they made?", None),
    ],
)
def test_reference_cue(question: str, cue: str | None) -> None:
    assert reference_cue(question) == cue


@pytest.mark.parametrize(
    ("question", "fragment"),
    [
        ("Investments?", True),
        ("any awards", True),
        ("What is WACC?", False),
        ("How is a 401k account taxed?", False),
    ],
)
def test_is_fragment(question: str, fragment: bool) -> None:
    assert is_fragment(question) is fragment


def test_imported_context_words_ignore_inflection_and_style_words() -> None:
    earlier = ["Tell me about guinea pigs.", "Guinea pigs are rodents from the Andes."]
    assert (
        imported_context_words(
            "What do guinea pigs eat?", "Could you tell me what guinea pigs eat?", earlier
        )
        == []
    )
    assert imported_context_words("Where do they live?", "Where do guinea pigs live?", earlier) == [
        "guinea",
        "pig",
    ]


def test_decide_standalone_precedence() -> None:
    assert decide_standalone(1, "Which is more important?", None, []) == (True, "turn1")
    assert decide_standalone(3, "Is it taxed?", "Is it taxed?", [], label="Standalone") == (
        True,
        "label",
    )
    assert decide_standalone(3, "Why?", None, [], has_standalone_alternative=True) == (
        False,
        "alternative",
    )


# --- the real benchmark -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict]]:
    if not (REAL_SRC / "retrieval_tasks").is_dir():
        pytest.skip(f"mtRAG not present at {REAL_SRC}")
    out = tmp_path_factory.mktemp("mtrag_real")
    converted = {}
    for domain in ("clapnq", "fiqa"):
        if not (REAL_SRC / "retrieval_tasks" / domain).is_dir():
            pytest.skip(f"mtRAG domain {domain} not present under {REAL_SRC}")
        result = convert(REAL_SRC, domain, out)
        converted[domain] = {row["task_id"]: row for row in result.rows}
    return converted


def _task_ids(domain: str) -> list[str]:
    path = REAL_SRC / "retrieval_tasks" / domain / f"{domain}_rewrite.jsonl"
    return [json.loads(line)["_id"] for line in path.read_text().splitlines()]


@pytest.mark.parametrize("domain", ["clapnq", "fiqa"])
def test_real_every_task_is_a_row_with_qrels_gold(
    real: dict[str, dict[str, dict]], domain: str
) -> None:
    rows = real[domain]
    tasks = _task_ids(domain)
    assert set(tasks) <= set(rows)
    qrels = read_qrels(REAL_SRC / "retrieval_tasks" / domain / "qrels" / "dev.tsv")
    for task_id in tasks:
        assert rows[task_id]["gold_doc_ids"] == qrels[task_id]
        assert rows[task_id]["answerability"] in ("ANSWERABLE", "PARTIAL")
    extra = [r for r in rows.values() if not r["in_retrieval_tasks"]]
    assert extra and all(r["type"] == "unanswerable" and r["gold_doc_ids"] == [] for r in extra)


def test_real_known_rows(real: dict[str, dict[str, dict]]) -> None:
    fiqa = real["fiqa"]["e9dd465e8dd63a80dda8f3ce9cba6848<::>2"]
    assert fiqa["question"] == "Which is more important?"
    assert fiqa["rewrite"] == "Which one is more important, Market Cap or NAV?"
    assert fiqa["history"][0] == ["user", "What's the difference between Market Cap and NAV?"]
    assert len(fiqa["history"]) == 2 and fiqa["type"] == "non_standalone"

    clapnq = real["clapnq"]
    first = clapnq["dd6b6ffd177f2b311abe676261279d2f<::>1"]  # the Arizona Cardinals opener
    assert (first["type"], first["gold_doc_ids"], first["in_retrieval_tasks"]) == (
        "unanswerable",
        [],
        False,
    )
    second = clapnq["dd6b6ffd177f2b311abe676261279d2f<::>2"]
    assert second["gold_doc_ids"] == [
        "822086267_7384-8758-0-1374", "822086267_6698-7277-0-579", "822086267_453-961-0-508",
    ]  # fmt: skip
    assert [role for role, _ in second["history"]] == ["user", "assistant"]


def test_real_history_lengths_and_turn_one(real: dict[str, dict[str, dict]]) -> None:
    for rows in real.values():
        for row in rows.values():
            assert len(row["history"]) == 2 * (row["turn"] - 1)
            if row["turn"] == 1 and row["type"] != "unanswerable":
                assert row["type"] == "standalone"
