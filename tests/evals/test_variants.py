"""`python -m evals.variants`: settings side by side on one index, through the real CLI."""

from __future__ import annotations

import io
import json

import pytest

from engines.errors import ConfigError
from evals.variants import main, parse_variant
from tests.evals.test_eval_replay import dataset_lines


def test_variant_flags_parse_and_refuse_what_every_variant_shares():
    assert parse_variant("default:") == ("default", {})
    assert parse_variant("slot:TURNRAG_CLAUSE_SLOT_WEIGHT=0.05, answer_check=yesno") == (
        "slot", {"clause_slot_weight": "0.05", "answer_check": "yesno"})
    with pytest.raises(ConfigError, match="shared by every variant"):
        parse_variant("other:embedding=minilm")
    with pytest.raises(ConfigError, match="NAME:key=value"):
        parse_variant("answer_check=off")
    # a list setting keeps its commas
    assert parse_variant("tr:transforms=original,translate,top_k=5") == (
        "tr", {"transforms": "original,translate", "top_k": "5"})
    with pytest.raises(ConfigError, match="is not key=value"):
        parse_variant("bad:translate")
    with pytest.raises(ConfigError, match="is not key=value"):  # only list settings continue
        parse_variant("bad:answer_check=off,clause_slot_weight")


def test_variants_run_side_by_side_and_differ_where_their_settings_do(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("TURNRAG_REFUSAL_MIN_VECTOR", "0.25")
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("\n".join(dataset_lines()) + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main([str(dataset), "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--llm", "fake",
                 "--embedding", "fake", "--quiet", "--out", str(tmp_path / "v.json"),
                 "--variant", "default:answer_mode=extract", "--variant", "strict:answer_mode=extract,refusal_min_vector=0.99"],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "default" in out.getvalue() and "strict" in out.getvalue()
    table = json.loads((tmp_path / "v.json").read_text(encoding="utf-8"))["variants"]
    assert table["strict"]["answerable_refused"] == 1.0  # the gate refuses everything at 0.99
    assert table["default"]["answerable_refused"] < 1.0
    assert table["default"]["must_contain"]["all"][1] == 2  # the two rows with a must_contain value
    # where the values were lost: every checked row at one stage; the strict gate refuses them all
    assert table["strict"]["lost_at"]["turn1"]["refused"] + table["strict"]["lost_at"]["turn2+"]["refused"] == 2
    assert sum(sum(table["default"]["lost_at"][b].values()) for b in ("turn1", "turn2+")) == 2
    assert "where the expected value was lost" in out.getvalue()


def test_a_bad_setting_value_names_the_setting(tmp_path, corpus):
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("\n".join(dataset_lines()) + "\n", encoding="utf-8")
    err = io.StringIO()
    code = main([str(dataset), "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--llm", "fake",
                 "--embedding", "fake", "--quiet", "--variant", "bad:answer_check=maybe"],
                stdout=io.StringIO(), stderr=err)
    assert code == 2 and "answer_check" in err.getvalue()
