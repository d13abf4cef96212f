"""Turn buckets: where in a conversation a turn sits. One definition, the views reports use.

Buckets exist because one average hides where users see failures: turn 1 is the demo,
follow-ups are the product.

* report view: ``turn1``, ``turn2``, ``turn3+`` (exclusive) plus ``turn2+`` (every follow-up) and ``all``;
* positions (the plot and the sanity table): ``1``..``4``, ``5+``;
* mtRAG's split: ``turn1`` and ``later``;
* by position (benchmarks): ``turn1``, ``turn2``, ``turn3``, ``turn4+``.
"""

from __future__ import annotations

#: Turn buckets of the report; "turn2+" overlaps turn2 and turn3+ on purpose (the follow-up view).
TURN_BUCKETS = ("all", "turn1", "turn2", "turn3+", "turn2+")
#: Turn positions of the plot and the sanity table.
POSITIONS = ("1", "2", "3", "4", "5+")
#: mtRAG's own split (turn 1 against later turns), as its paper reports.
MTRAG_BUCKETS = ("turn1", "later", "all")
#: Finer, for benchmarks that compare pipelines turn by turn.
POSITION_BUCKETS = ("turn1", "turn2", "turn3", "turn4+", "all")


def _check(turn: int) -> int:
    if turn < 1:
        raise ValueError(f"turn numbers start at 1, got {turn}")
    return turn


def turn_bucket(turn: int) -> str:
    """"turn1", "turn2" or "turn3+": the exclusive bucket of a turn number."""
    turn = _check(turn)
    return "turn1" if turn == 1 else "turn2" if turn == 2 else "turn3+"


def turn_buckets(turn: int) -> tuple[str, ...]:
    """Every report bucket a turn counts in: "all", its own bucket, and "turn2+" for follow-ups."""
    own = turn_bucket(turn)
    return ("all", own, "turn2+") if turn >= 2 else ("all", own)


def turn_position(turn: int) -> str:
    """Plot position: "1".."4", then "5+" (long conversations are few per position)."""
    turn = _check(turn)
    return str(turn) if turn < 5 else "5+"


def mtrag_buckets(turn: int) -> tuple[str, ...]:
    return ("all", "turn1" if _check(turn) == 1 else "later")


def position_buckets(turn: int) -> tuple[str, ...]:
    turn = _check(turn)
    return ("all", f"turn{turn}" if turn < 4 else "turn4+")
