"""Replacement floors on documents nobody tuned on: which corpus document replaces which, read from
the documents' words and titles (data/eval/replacements/test, written from a brief by a helper that
had seen neither the code nor the other splits, frozen before the detector first ran on it).

dev, dev2 and dev3 chose the rules (dev2 and dev3 were test splits first: their frozen first runs,
0.83 / 0.77 and 0.83 / 0.33, are quoted in the README there and in docs/answers.md). Each floor fails
with its reading switched off: `python -m evals.replacements data/eval/replacements/test --ablations`.
"""

from pathlib import Path

import pytest

from evals.replacements import ABLATIONS, score_split

TEST = Path(__file__).resolve().parent.parent / "data" / "eval" / "replacements" / "test"

#: The first run on test (2026-12-04, detector of ddca85d): precision 0.82, recall 0.93 (14 of 15 found,
#: 17 flagged); sentences off: 0.86 / 0.40; versions off: 0.80 / 0.53. The splits before it (dev, dev2,
#: dev3) chose the rules and read 1.00 / 1.00; each was a test split once (docs/answers.md). The floors
#: leave one relation of slack each.
FLOORS = {"precision": 0.78, "recall": 0.86}


def test_replacement_floor_on_unseen_documents() -> None:
    scores = score_split(TEST)
    assert scores.precision >= FLOORS["precision"] and scores.recall >= FLOORS["recall"], scores.to_dict()


@pytest.mark.parametrize("ablation", sorted(ABLATIONS))
def test_replacement_floor_catches_each_reading_switched_off(ablation: str) -> None:
    scores = score_split(TEST, **ABLATIONS[ablation])
    assert scores.precision < FLOORS["precision"] or scores.recall < FLOORS["recall"], scores.to_dict()
