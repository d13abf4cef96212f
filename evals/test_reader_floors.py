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

import pytest

from evals.headroom import rerank

pytestmark = pytest.mark.e2e

#: One turn of slack under the blend's 40; the fused order alone makes 37.
FLOOR_TOP5 = 39


def _top5(headroom) -> int:
    return sum(1 for t in headroom.turns if t.answerable and (r := t.first_holding(t.reranked or None)) and r <= 5)


def test_the_reader_blended_with_fusion_puts_the_value_in_the_top_5_more_often(heldout3_pools):
    headroom, reader = heldout3_pools
    fused = sum(1 for t in headroom.turns if t.answerable and (r := t.first_holding()) and r <= 5)
    blended = _top5(rerank(headroom, reader, fused_weight=1.0))
    assert fused < FLOOR_TOP5, f"the floor must fail with the reader off (fused {fused})"
    assert blended >= FLOOR_TOP5, f"blend {blended}, fused {fused}"
