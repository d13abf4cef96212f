"""Neighbouring chunks of the best retrieved passages, as extra candidates for the answer.

A document's rule is often split across chunks: the clause that answers sits in the chunk after the
one retrieval ranked first (the processing time below the chunk about how to submit), or a price table
follows the paragraph that names the product. On held-out dev, 7 of 15 wrongly answered turns had the
expected value only in a neighbour of a retrieved chunk; adding neighbours won one dev answer and lost
four test answers (docs/answers.md), so it is off by default (``neighbour_chunks``). This
postprocessor adds the chunks just before and after the ``top_n`` best passages (chunk ids
"doc#n"), read from the store with their stored vectors, after the retrieved ones; the conflict
check and the quote then see them like any other passage. Retrieval's ranking, and the refusal gate
that judged it, are untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from engines.corpus.store import make_node

logger = logging.getLogger(__name__)

__all__ = ["NeighbourChunks", "neighbour_ids"]


def neighbour_ids(node_ids: Sequence[str], top_n: int) -> list[str]:
    """The ids just before and after each of the first ``top_n`` chunk ids ("doc#3" -> "doc#2", "doc#4"),
    in that order, without the ids already given. Pure."""
    have = set(node_ids)
    out: list[str] = []
    for node_id in node_ids[:top_n]:
        doc, sep, tail = node_id.rpartition("#")
        if not sep or not tail.isdigit():
            continue
        for n in (int(tail) - 1, int(tail) + 1):
            candidate = f"{doc}#{n}"
            if n >= 0 and candidate not in have and candidate not in out:
                out.append(candidate)
    return out


class NeighbourChunks(BaseNodePostprocessor):
    """Adds the neighbouring chunks of the ``top_n`` best passages (from ``fetch``: ids -> chunks)."""

    top_n: int = Field(default=1, ge=0, description="How many of the best passages get their neighbours.")
    fetch: Callable[[list[str]], list[dict[str, Any]]] | None = Field(default=None, exclude=True, description=(
        "Stored chunks by id, as {id, text, metadata, embedding} (engines.corpus.store.fetch_chunks); missing ids are skipped."))

    @classmethod
    def class_name(cls) -> str:
        return "NeighbourChunks"

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
                           ) -> list[NodeWithScore]:
        wanted = neighbour_ids([n.node.node_id for n in nodes], self.top_n)
        if not wanted or self.fetch is None:
            return [n.model_copy() for n in nodes]
        found = {c["id"]: c for c in self.fetch(wanted)}
        extra = [NodeWithScore(node=make_node(i, found[i]["text"], found[i]["metadata"], found[i].get("embedding")),
                               score=0.0) for i in wanted if i in found]
        logger.debug("neighbours added: %s", [n.node.node_id for n in extra])
        return [n.model_copy() for n in nodes] + extra
