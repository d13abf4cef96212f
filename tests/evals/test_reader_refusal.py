"""The reader-refusal study: the bar comes from dev's answerable turns alone and is read on test."""

import json

from evals.reader_refusal import SIGNALS, calibrate, pools, refused, report


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
