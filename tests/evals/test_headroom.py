"""`python -m evals.headroom`: where the expected value sits in the fused pool, fused and reranked."""

from __future__ import annotations

import io
import json

from evals.headroom import Headroom, PoolRecorder, TurnPool, main, rerank
from tests.evals.test_eval_replay import dataset_lines


def _pool(turn: int, holding: int | None, size: int = 8) -> TurnPool:
    passages = tuple("phí 200.000 đồng" if i == holding else f"đoạn khác {i}" for i in range(size))
    return TurnPool(turn=turn, query=f"q{turn}", passages=passages, values=("200.000 đồng",))


class LastFirst:
    """A scripted cross-encoder that prefers later passages."""

    def score(self, query, passages):
        return [float(i) for i in range(len(passages))]


def test_ranks_and_buckets_count_where_the_value_sits() -> None:
    turns = [_pool(1, 0), _pool(2, 6), _pool(3, None), _pool(4, 7)]
    assert [t.first_holding() for t in turns] == [1, 7, None, 8]
    summary = Headroom(pool=8, turns=tuple(turns)).summary()
    assert summary["all"] == {"turns": 4, "top5": 1, "top10": 3, "pool": 3}
    assert summary["turn2+"] == {"turns": 3, "top5": 0, "top10": 2, "pool": 2}
    reranked = rerank(Headroom(pool=8, turns=tuple(turns)), LastFirst())
    assert reranked.summary()["all"]["reranked_top5"] == 2  # the values at 7 and 8 move to the top
    assert [t.reranked for t in turns] == [(), (), (), ()]  # the input is left as it was


def test_the_recorder_keeps_the_fused_order_and_hands_pools_back_in_turn_order() -> None:
    recorder = PoolRecorder()
    assert recorder.score("q", ["a", "b", "c"]) == [0.0, -1.0, -2.0]
    recorder.score("q", ["d"])
    assert recorder.take("q") == ["a", "b", "c"] and recorder.take("q") == ["d"] and recorder.take("q") is None


def test_the_cli_replays_the_rows_and_writes_each_turns_rank(tmp_path, corpus, monkeypatch) -> None:
    monkeypatch.setenv("TURNRAG_REFUSAL_MIN_VECTOR", "0.25")
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("\n".join(dataset_lines()) + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main([str(dataset), "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--llm", "fake",
                 "--embedding", "fake", "--quiet", "--pool", "6", "--out", str(tmp_path / "h.json")],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    report = json.loads((tmp_path / "h.json").read_text(encoding="utf-8"))
    reached = report["summary"]["all"]["turns"]
    assert reached + report["not_reached"] == 2  # the two answerable rows with a must_contain value
    assert all(t["fused_rank"] is None or 1 <= t["fused_rank"] <= 6 for t in report["turns"])
    assert "fused pool of" in out.getvalue()
    bad = main([str(dataset), "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--llm", "fake",
                "--embedding", "fake", "--quiet", "--reranker", str(tmp_path / "none")],
               stdout=io.StringIO(), stderr=(msg := io.StringIO()))
    assert bad == 2 and "TURNRAG_RERANKER" in msg.getvalue()


def test_a_conversation_reading_recorder_is_matched_to_its_rows(tmp_path, corpus, monkeypatch) -> None:
    """With a reader, pools are keyed by what it reads (the conversation), and still found for each row."""
    from dataclasses import replace

    from app.compose import build_pipeline
    from app.config import load_settings
    from evals.configs import resolve_configs
    from evals.dataset import load_rows
    from evals.evaluation import run_evaluation
    from evals.headroom import collect
    from evals.variants import models_and_index

    monkeypatch.setenv("TURNRAG_REFUSAL_MIN_VECTOR", "0.25")
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("\n".join(dataset_lines()) + "\n", encoding="utf-8")
    settings = load_settings(index_dir=tmp_path / "idx", llm="fake", embedding="fake", rerank_pool=6)
    models, index = models_and_index(settings, corpus, None)
    rows = load_rows(dataset)

    def pools(recorder):
        pipeline = build_pipeline(settings, replace(models, reranker=recorder), index)
        result = run_evaluation(pipeline, rows, resolve_configs(["condense"]), k=5, retrieval_only=True)
        return collect(result.rows["condense"], recorder)

    plain, read = pools(PoolRecorder()), pools(PoolRecorder(reads_conversation=True))
    assert read.turns and read.not_reached == plain.not_reached
    assert [t.passages for t in read.turns] == [t.passages for t in plain.turns]  # every row found its pool
    assert all(" | " in t.query for t in read.turns if t.turn > 1)  # the reader's query carries the history
    assert not any(" | " in t.query for t in plain.turns)
