"""Conflict floors on documents nobody tuned on, the held-out set's frozen test split (four domains
written outside the team, data/eval/heldout/test) and two more independent sets (data/eval/heldout2,
data/eval/heldout3/test):

* the detector alone on its 66 labelled document pairs (e5-small similarities, the product's
  detector and resolution), failing with the claim rules switched off (``ABLATIONS["all rules off"]``);
* whole answers on its 25 supersession turns (the right value is in the newer of two documents),
  replayed through the pipeline with the embedded defaults, failing with the conflict check off.

Dev (data/eval/heldout/dev, data/eval/devpairs, data/eval/bank/dev) chose the rules; the floors sit
just below what test measured with them. `python -m evals.conflicts data/eval/heldout/test/conflict_pairs.jsonl
--corpus data/eval/heldout/corpus` prints the pair numbers with every rule switched off on its own.
"""

from pathlib import Path

import pytest

from engines.conflicts import DEFAULT_MIN_CLAIM_OVERLAP as CLAIM_OVERLAP
from engines.conflicts.claim_vectors import cross_language
from engines.models.registry import build_embedding, calibration_for
from evals.conflicts import ABLATIONS, embed_similarities, load_pairs, predict, scores

pytestmark = pytest.mark.e2e

HELDOUT = Path(__file__).resolve().parent.parent / "data" / "eval" / "heldout"
HELDOUT2 = HELDOUT.parent / "heldout2"
HELDOUT3 = HELDOUT.parent / "heldout3"
GATE = calibration_for("e5-small").conflict_similarity


@pytest.fixture(scope="module")
def embedder():
    return build_embedding("e5-small")


@pytest.fixture(scope="module")
def product(embedder):
    """The detector's keywords as the product composes them (app/compose.py)."""
    return {"claim_overlap": CLAIM_OVERLAP,
            "cross_language": cross_language(embedder, calibration_for("e5-small").cross_claim_similarity)}

FLOORS = {
    # measured 2026-12-04 on test (an abolition against the documents stating what it abolishes; two
    # departments on one day are no companions): precision 0.62, recall 0.72 (21/29); before these two
    # rules 0.56 / 0.80; all rules off: 0.58 / 0.60. The floors leave about one pair of slack each.
    "precision": 0.59,
    "recall": 0.68,
}


def _test_pairs(root: Path, embedder) -> tuple[list, object]:
    """A set's frozen test pairs with their e5-small similarities."""
    rows = load_pairs(root / "test" / "conflict_pairs.jsonl", root / "corpus")
    return rows, embed_similarities(rows, embedder)


def _table(pairs: tuple[list, object], product: dict, switched_off: str | None = None) -> dict:
    """Precision, recall and newer-kept over ``pairs``, as the product detects, or with one ablation."""
    rows, sims = pairs
    switches = ABLATIONS[switched_off] if switched_off else {}
    return scores(predict(rows, sims, GATE, **{**product, **switches}))["all"]


@pytest.fixture(scope="module")
def pairs_and_similarities(embedder):
    return _test_pairs(HELDOUT, embedder)


def test_conflict_detector_floor_on_unseen_pairs(pairs_and_similarities, product):
    table = _table(pairs_and_similarities, product)
    assert table["precision"] >= FLOORS["precision"] and table["recall"] >= FLOORS["recall"], table
    assert table["newer_kept"] >= 0.9, table  # the newer side on resolved conflicts


def test_conflict_floor_catches_the_claim_rules_switched_off(pairs_and_similarities, product):
    table = _table(pairs_and_similarities, product, "all rules off")
    assert table["precision"] < FLOORS["precision"] or table["recall"] < FLOORS["recall"], table


#: The second independent set (data/eval/heldout2: three more organisations, written 2026-12-04 from a
#: brief and frozen before the detector ran on it): measured precision 0.89, recall 0.61 (16/26); the
#: code before the abolition and department rules 0.78 / 0.54; abolition target off 0.80 / 0.61;
#: departments ignored 0.88 / 0.54; all rules off 0.75 / 0.35. One pair of slack each.
SECOND_FLOORS = {"precision": 0.84, "recall": 0.57}


@pytest.fixture(scope="module")
def second_set(embedder):
    return _test_pairs(HELDOUT2, embedder)


def _meets(table: dict, floors: dict) -> bool:
    return table["precision"] >= floors["precision"] and table["recall"] >= floors["recall"]


def test_conflict_detector_floor_on_the_second_unseen_set(second_set, product):
    table = _table(second_set, product)
    assert _meets(table, SECOND_FLOORS), table
    assert table["newer_kept"] >= 0.9, table


@pytest.mark.parametrize("switched_off", ["abolition target off", "departments ignored", "all rules off"])
def test_second_set_floor_fails_with_each_rule_switched_off(second_set, product, switched_off):
    table = _table(second_set, product, switched_off)
    assert not _meets(table, SECOND_FLOORS), table


#: The third independent set (data/eval/heldout3, written 2026-12-04 from a brief, frozen before anything
#: ran on it; its test half is a district tax office and a garment factory): measured precision 0.64,
#: recall 0.54 (7/13); all rules off 0.50 / 0.23. One pair of slack each.
THIRD_FLOORS = {"precision": 0.58, "recall": 0.46}


@pytest.fixture(scope="module")
def third_set(embedder):
    return _test_pairs(HELDOUT3, embedder)


def test_conflict_detector_floor_on_the_third_unseen_set(third_set, product):
    table = _table(third_set, product)
    assert _meets(table, THIRD_FLOORS), table


def test_third_set_floor_fails_with_the_claim_rules_switched_off(third_set, product):
    table = _table(third_set, product, "all rules off")
    assert not _meets(table, THIRD_FLOORS), table


#: Measured 2026-12-02 on the 25 supersession turns of test (quoted answers, no check; conflicts about
#: the question only): the newer value in 17, only the outdated one in 3; conflict check off: 12 and 8.
#: (``supersession_answers`` is in evals/conftest.py: only the conftest composes pipelines.)
ANSWER_FLOORS = {"newer": 15, "stale_at_most": 4}


def test_answers_carry_the_newer_value_on_unseen_supersession_turns(supersession_answers):
    on, _ = supersession_answers
    assert on["n"] == 25, on
    assert on["newer"] >= ANSWER_FLOORS["newer"] and on["stale"] <= ANSWER_FLOORS["stale_at_most"], on


def test_answer_floor_catches_the_conflict_check_switched_off(supersession_answers):
    _, off = supersession_answers
    assert off["newer"] < ANSWER_FLOORS["newer"] or off["stale"] > ANSWER_FLOORS["stale_at_most"], off
