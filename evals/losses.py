"""Where an answer lost the expected value: the stage of the turn after which it was gone.

A wrong answer is a number; what to fix is a stage. For every answerable row with ``must_contain``
(full runs only), the values are followed through the turn's record:

* ``answered``      - the answer holds every value;
* ``refused``       - the gate or the check refused an answerable turn;
* ``not retrieved`` - some value is in none of the chunks retrieval kept (the top k);
* ``set aside``     - every value was retrieved, but the conflict check set aside the chunks holding one;
* ``not quoted``    - every value was in the passages the answer read, and the answer left one out
  (extract: the clause that holds it was not among those quoted; generate: the model did not write it).

The stages are exclusive and cover every checked row, so they add up to the answer count's denominator.
Chunk texts come from the index (``engines.corpus.store.fetch_chunks``); the functions over them are pure. A passage
the conflict check trimmed (``conflict_partial``, off by default) is read whole, so a value cut from it counts as
"not quoted", not "set aside".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engines.corpus.store import fetch_chunks
from evals.buckets import TURN_BUCKETS, turn_buckets
from evals.metrics import contains
from evals.runner import RowResult

if TYPE_CHECKING:
    from engines.pipeline import Pipeline

STAGES = ("answered", "refused", "not retrieved", "set aside", "not quoted")


def holds_all(texts: Iterable[str], values: Sequence[str]) -> bool:
    """Every value is in at least one of ``texts`` (the answer check's matching)."""
    texts = list(texts)
    return all(any(contains(text, value) for text in texts) for value in values)


def lost_at(result: RowResult, chunk_text: Mapping[str, str]) -> str | None:
    """The stage after which ``result``'s expected values were gone (see the module docstring); None for a
    row with nothing to check (unanswerable, no ``must_contain``, skipped, or a retrieval-only run)."""
    if result.must_contain_ok is None or not result.row.answerable:
        return None
    if result.must_contain_ok:
        return "answered"
    if result.refused:
        return "refused"
    values = result.row.must_contain
    context = [chunk_text.get(i, "") for i in result.context_node_ids]
    retrieved = [chunk_text.get(i, "") for i in result.retrieved_node_ids] + context
    if not holds_all(retrieved, values):
        return "not retrieved"
    if not holds_all(context, values):
        return "set aside"
    return "not quoted"


def with_losses(results: Sequence[RowResult], chunk_text: Mapping[str, str]) -> list[RowResult]:
    """New results with ``lost_at`` filled."""
    return [replace(r, lost_at=lost_at(r, chunk_text)) for r in results]


def loss_summary(results: Sequence[RowResult]) -> dict[str, Any]:
    """Rows per stage, overall (``all``) and per turn bucket, and per question type on follow-ups."""
    checked = [r for r in results if r.lost_at is not None]

    def count(rows: Iterable[RowResult]) -> dict[str, int]:
        found = Counter(r.lost_at for r in rows)
        return {stage: found.get(stage, 0) for stage in STAGES}

    out: dict[str, Any] = {bucket: count(r for r in checked if bucket in turn_buckets(r.row.turn))
                           for bucket in TURN_BUCKETS}
    for kind in sorted({r.row.type for r in checked}):
        out[f"{kind}/turn2+"] = count(r for r in checked if r.row.type == kind and r.row.turn >= 2)
    return out


def node_ids(results: Iterable[RowResult]) -> list[str]:
    """Every chunk id the results name, each once."""
    return list(dict.fromkeys(i for r in results for i in (*r.retrieved_node_ids, *r.context_node_ids)))


def chunk_texts(pipeline: "Pipeline", ids: Sequence[str]) -> dict[str, str]:
    """The stored text of each chunk id (ids the store does not hold are left out)."""
    if pipeline.retrieval is None or not ids:
        return {}
    chunks = fetch_chunks(pipeline.retrieval.collection, list(ids), include_embeddings=False)
    return {chunk["id"]: chunk["text"] for chunk in chunks}
