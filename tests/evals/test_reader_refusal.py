"""The reader-refusal study: the bar comes from dev's answerable turns alone and is read on test."""

import json

import pytest

from evals.reader_refusal import SIGNALS, both, calibrate, pools, refused, report


def _file(tmp_path, name, turns):
    path = tmp_path / name
    path.write_text(json.dumps({"turns": [{"answerable": a, "scores": s} for a, s in turns]}))
    return path


def test_the_bar_refuses_at_most_the_budget_of_dev_answerable_turns_and_test_is_read_with_it(tmp_path) -> None:
    strong, weak = [0.9] + [0.01] * 19, [0.02] * 20
    dev = pools([_file(tmp_path, "dev.json", [(True, strong)] * 9 + [(True, weak), (False, weak), (False, [])])])
    assert len(dev) == 11  # a turn without a pool is left out
    best = SIGNALS["best score"]
    bar = calibrate(dev, best, budget=0.1)
    assert refused(dev, best, bar)["answerable_refused"] <= 0.1
    test = pools([_file(tmp_path, "test.json", [(True, strong), (False, weak), (False, strong)])])
    table = report(dev, test, budget=0.1)
    assert table["best score"]["test"] == {"answerable_refused": 0.0, "unanswerable_refused": 0.5,
                                           "answerable": 1, "unanswerable": 2}


def test_unknown_words_refuse_only_where_the_reader_is_also_unsure() -> None:
    sure, unsure = [-1.5, -3.0], [-4.5, -6.0]
    # (answerable, logits best first, names a word no document uses)
    dev = [(True, sure, True), (True, unsure, False), (False, unsure, True), (False, sure, True), (False, unsure, False)]
    table = both(dev, dev, budget=0.0)
    assert table["unknown words alone"]["dev"]["unanswerable_refused"] == 0.667  # 2 of 3, and 1 of 2 answerable
    assert table["unknown words alone"]["dev"]["answerable_refused"] == 0.5
    strict = table["unknown words and best < -2 (dev's bar)"]["dev"]  # the highest bar refusing no answerable turn
    assert strict == {"answerable_refused": 0.0, "unanswerable_refused": 0.333, "answerable": 2, "unanswerable": 3}


def test_a_pool_scored_on_an_index_that_is_not_there_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"dataset": "data/eval/nosplit/dev/conversations.jsonl",
                                "turns": [{"answerable": True, "scores": [0.5], "query": "x"}]}))
    with pytest.raises(ValueError, match="no BM25 index"):
        pools([path], tmp_path / "idx")
