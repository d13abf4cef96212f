"""The committed mtRAG slice keeps its conversations whole, every gold passage, and hard negatives."""

import json

import pytest

from evals.datasets.mtrag_slice import cut, main

CORPUS = [
    {"_id": "gold-1", "title": "Roth IRA", "text": "A Roth IRA is funded with after-tax dollars."},
    {"_id": "near-1", "title": "Traditional IRA", "text": "A traditional IRA is funded with pre-tax dollars."},
    {"_id": "gold-2", "title": "Index funds", "text": "An index fund tracks a market index at low cost."},
    {"_id": "far-1", "title": "Mortgages", "text": "A fixed-rate mortgage keeps the same rate for its term."},
]
ROWS = [
    {"conv_id": "c1", "turn": 1, "question": "What is a Roth IRA?", "type": "standalone",
     "gold_doc_ids": ["gold-1"], "rewrite": "What is a Roth IRA?"},
    {"conv_id": "c1", "turn": 2, "question": "And the traditional one?", "type": "non_standalone",
     "gold_doc_ids": ["near-1"], "rewrite": "What is a traditional IRA?"},
    {"conv_id": "c2", "turn": 1, "question": "What is an index fund?", "type": "standalone",
     "gold_doc_ids": ["gold-2"], "rewrite": "What is an index fund?"},
]


def test_the_first_conversations_whole_with_gold_and_bm25_neighbours():
    rows, corpus = cut(ROWS, CORPUS, n_conversations=1, k=1)
    assert [(r["conv_id"], r["turn"]) for r in rows] == [("c1", 1), ("c1", 2)]
    ids = {p["_id"] for p in corpus}
    assert {"gold-1", "near-1"} <= ids and "far-1" not in ids and "gold-2" not in ids


def test_a_gold_passage_missing_from_the_corpus_is_named(tmp_path):
    with pytest.raises(SystemExit, match="gold-2"):
        cut(ROWS, [p for p in CORPUS if p["_id"] != "gold-2"], n_conversations=2, k=1)


def test_the_command_writes_rows_and_corpus(tmp_path):
    for name, items in (("rows.jsonl", ROWS), ("corpus.jsonl", CORPUS)):
        (tmp_path / name).write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    assert main([str(tmp_path / "rows.jsonl"), str(tmp_path / "corpus.jsonl"), "--out", str(tmp_path / "out"),
                 "--conversations", "2", "--distractors", "1"]) == 0
    assert len((tmp_path / "out" / "rows.jsonl").read_text().splitlines()) == 3
