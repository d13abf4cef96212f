"""The training data is a third thing: written for training, from other organisations than any eval
set, and no sentence of an evaluation corpus or question reaches it."""

import json
from pathlib import Path

import pytest

from engines.reader.examples import load_training_sets
from engines.reader.leakage import leaked, sentences

ROOT = Path(__file__).resolve().parents[3]
TRAIN, EVAL = ROOT / "data" / "train", ROOT / "data" / "eval"


@pytest.fixture(scope="module")
def sets():
    return load_training_sets(TRAIN)


def _training_texts(sets):
    for s in sets:
        yield from (d.text for d in s.documents)
        for t in s.turns:
            yield from (t.question, t.rewrite, t.answer)


def _eval_texts():
    """Every evaluation document and question, every split (dev too: training never borrows them)."""
    for path in sorted(EVAL.rglob("*")):
        if path.suffix in (".md", ".txt") and "corpus" in path.parts:
            yield path.read_text(encoding="utf-8")
        elif path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    yield from (str(row.get(k, "")) for k in ("question", "answer", "rewrite", "text", "title"))
    for path in sorted((ROOT / "data" / "sample").glob("*.md")):
        yield path.read_text(encoding="utf-8")


def test_no_evaluation_sentence_is_in_the_training_data(sets):
    found = leaked(_training_texts(sets), _eval_texts())
    assert not found, f"{len(found)} evaluation sentence(s) in data/train, e.g. {sorted(found)[:3]}"


def test_the_leak_check_finds_a_copied_sentence():
    protected = ["Phí dịch vụ thẻ tín dụng hạng vàng được miễn năm đầu tiên cho khách hàng mới."]
    assert leaked(["Mở đầu. phí dịch vụ thẻ tín dụng  hạng vàng được miễn năm đầu tiên cho khách hàng mới. Hết."],
                  protected)
    assert not leaked(["Phí dịch vụ thẻ tín dụng hạng bạc được miễn năm đầu tiên cho khách hàng mới."], protected)
    assert not sentences("Điều 1. Phạm vi")  # too short to mean a copy


def test_training_organisations_are_not_any_eval_sets(sets):
    eval_prefixes = {p.stem.split("-")[0].lower() for p in EVAL.rglob("*.md") if "corpus" in p.parts}
    eval_prefixes |= {p.stem.split("-")[0].lower() for p in (ROOT / "data" / "sample").glob("*.md")}
    train_prefixes = {d.doc_id.split("-")[0] for s in sets for d in s.documents}
    assert not train_prefixes & eval_prefixes


def test_the_sets_are_the_size_and_shape_the_brief_asked(sets):
    turns = [t for s in sets for t in s.turns]
    assert len(turns) >= 2000
    assert sum(len(s.pairs) for s in sets) >= 600
    assert sum(t.follow_up for t in turns) / len(turns) >= 0.40
    assert 0.10 <= sum(not t.answerable for t in turns) / len(turns) <= 0.20
    assert 0.20 <= sum(t.language == "en" for t in turns) / len(turns) <= 0.40
