"""Passages of a document that another retrieved document replaces as a whole.

Explicit signals win over inference (issue 14). Ingest reads which documents replace another one as
a whole (``engines.corpus.replacements``: a ``supersedes:`` field, "Quyết định này thay thế Quyết định số
...", a higher version of the same title) and records it in the manifest. Retrieval keeps replaced
documents by default: a replaced document is often the only one retrieved on its topic (the
replacement is in another language, or words it differently). But once a passage of the
replacement is among the retrieved ones, the replaced document's passages only repeat or contradict
it, whether or not a value pair was detected between them: they are set aside, and the report says
which document replaced them. Off by default (setting ``conflict_replaced``): it won nothing on dev
and lost a test answer whose replacement was in another language (docs/answers.md). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engines.conflicts.claims import Passage

__all__ = ["replaced_pairs"]


def replaced_pairs(passages: Sequence[Passage], replaced_by: Mapping[str, Mapping[str, str]]
                   ) -> list[tuple[str, str, str]]:
    """(replaced passage id, a passage id of its replacement, evidence) for every passage whose document
    a document of another passage replaces. ``replaced_by``: old doc id -> {new doc id: evidence}."""
    first_of: dict[str, str] = {}
    for p in passages:
        first_of.setdefault(p.source_key, p.id)
    out = []
    for p in passages:
        for new, evidence in (replaced_by.get(p.source_key) or {}).items():
            if new in first_of and new != p.source_key:
                out.append((p.id, first_of[new], evidence))
                break
    return out
