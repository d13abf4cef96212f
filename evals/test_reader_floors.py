"""The reader's floor on a set nobody tuned on: heldout3's frozen test split (data/eval/heldout3/test,
written outside the team), its rows' reference rewrites (no LLM), the fused pool of 20 per turn.
The floor counts answerable turns whose reranked top 5 holds an expected value with the packaged
reader blended into the fused order (``rerank_fused_weight`` 1, the blend chosen on the dev splits,
docs/reader.md), and fails with the reader off (the fused order alone).

Measured 2026-12-07: blend 40/41, reader alone 37/41, fused 37/41 (dev, pooled over four splits:
blend 185/191, fused 183). `TURNRAG_RERANK_FUSED_WEIGHT=1 python -m evals.headroom
data/eval/heldout3/test/conversations.jsonl --corpus data/eval/heldout3/corpus --queries reference
--reranker reader` prints it.
"""

from dataclasses import replace
from pathlib import Path

import pytest

from app.compose import build_pipeline, build_reranker, ingest_path, open_index
from evals.dataset import load_rows
from evals.evaluation import run_evaluation
from evals.headroom import PoolRecorder, collect, rerank

pytestmark = pytest.mark.e2e

HELDOUT3 = Path(__file__).resolve().parent.parent / "data" / "eval" / "heldout3"
#: One turn of slack under the blend's 40; the fused order alone makes 37.
FLOOR_TOP5 = 39


@pytest.fixture(scope="module")
def pools(tmp_path_factory, eval_settings, eval_models):
    settings = eval_settings.model_copy(update={"index_dir": tmp_path_factory.mktemp("heldout3") / "index"})
    ingest_path(settings, HELDOUT3 / "corpus", embed_model=eval_models.embed_model,
                companion_embed_model=eval_models.companion_embed_model)
    reader = build_reranker(settings.model_copy(update={"reranker": "reader"}))
    recorder = PoolRecorder(reads_conversation=True)
    pipeline = build_pipeline(settings.model_copy(update={"reranker": ""}), replace(eval_models, reranker=recorder),
                              open_index(settings))
    rows = load_rows(HELDOUT3 / "test" / "conversations.jsonl")
    result = run_evaluation(pipeline, rows, configs=["reference"], k=5, retrieval_only=True)
    return collect(result.rows["reference"], recorder), reader


def _top5(headroom) -> int:
    return sum(1 for t in headroom.turns if t.answerable and (r := t.first_holding(t.reranked or None)) and r <= 5)


def test_the_reader_blended_with_fusion_puts_the_value_in_the_top_5_more_often(pools):
    headroom, reader = pools
    fused = sum(1 for t in headroom.turns if t.answerable and (r := t.first_holding()) and r <= 5)
    blended = _top5(rerank(headroom, reader, fused_weight=1.0))
    assert fused < FLOOR_TOP5, f"the floor must fail with the reader off (fused {fused})"
    assert blended >= FLOOR_TOP5, f"blend {blended}, fused {fused}"
