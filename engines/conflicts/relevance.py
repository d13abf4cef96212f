"""Which conflicts are about the question: only those are resolved.

Why: resolution sets aside whole passages, and the conflict graph joins passages transitively, so a
disagreement nobody asked about (a service that stops at the end of the day, a fee of another
procedure) used to set aside the passage that answered. A conflict matters to a turn when a claim
it compares is among the clauses the question is closest to (its *focus*: the best clauses of the
retrieved passages for the standalone query, ranked as the quoted answer ranks them):

* numeric: a focus clause of one side carries that side's compared value;
* abolition: a focus clause of the abolishing side carries the cue, or a focus clause of the other
  side states what the cue sentence abolishes (its words, the cue cut out, share at least
  ``min_target_overlap`` with the clause).

Pure functions over the detector's pairs and passages; the postprocessor supplies the focus.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from engines.conflicts.claims import Passage, cue_target
from engines.conflicts.graph import ConflictPair
from engines.conflicts.negation import find_abolition_cues
from engines.conflicts.subjects import claim_terms
from engines.text import normalize

#: Share of an abolition sentence's words (cue cut out) a focus clause of the other side must hold
#: for the question to be about what was abolished.
DEFAULT_MIN_TARGET_OVERLAP = 0.3

#: A focus clause: (node id of the passage it comes from, its text).
FocusClause = tuple[str, str]


def compared_values(pair: ConflictPair) -> tuple[set[str], set[str]]:
    """The values a numeric pair compares, side a and side b ("2 ngày vs 3 ngày" -> {"2 ngày"}, {"3 ngày"})."""
    left: set[str] = set()
    right: set[str] = set()
    for item in pair.evidence:
        a, sep, b = item.partition(" vs ")
        if sep:
            left.add(normalize(a).strip())
            right.add(normalize(b).strip())
    return left, right


def _cue_targets(cued: Passage) -> list[frozenset[tuple[str, ...]]]:
    """What each abolition sentence of ``cued`` names (cue cut out), the empty ones left out."""
    return [target for target in (cue_target(cued, cue) for cue in cued.cues) if target]


def states_target(clause: str, targets: Iterable[frozenset[tuple[str, ...]]], min_overlap: float) -> bool:
    """The clause holds at least ``min_overlap`` of one abolition sentence's terms."""
    terms = claim_terms(clause)
    return any(len(target & terms) / len(target) >= min_overlap for target in targets)


def about_question(pair: ConflictPair, passages: Mapping[str, Passage], focus: Sequence[FocusClause], *,
                   min_target_overlap: float = DEFAULT_MIN_TARGET_OVERLAP) -> bool:
    """Whether ``pair`` compares a claim the question's focus clauses hold (see the module docstring).
    Kinds this module does not read (an LLM verdict) always count."""
    clauses = [(node_id, normalize(text)) for node_id, text in focus]
    if pair.kind == "numeric":
        left, right = compared_values(pair)
        return any((node_id == pair.a and any(v in text for v in left))
                   or (node_id == pair.b and any(v in text for v in right)) for node_id, text in clauses)
    if pair.kind == "negation":
        a, b = passages[pair.a], passages[pair.b]
        cued, other = (a, b) if a.cues else (b, a)
        if any(node_id == cued.id and find_abolition_cues(text) for node_id, text in clauses):
            return True
        targets = _cue_targets(cued)
        return any(node_id == other.id and states_target(text, targets, min_target_overlap)
                   for node_id, text in clauses)
    return True


def split_by_question(pairs: Sequence[ConflictPair], passages: Sequence[Passage], focus: Sequence[FocusClause],
                      *, min_target_overlap: float = DEFAULT_MIN_TARGET_OVERLAP,
                      ) -> tuple[list[ConflictPair], list[ConflictPair]]:
    """(pairs about the question, pairs that are not), each in input order."""
    by_id = {p.id: p for p in passages}
    about: list[ConflictPair] = []
    aside: list[ConflictPair] = []
    for pair in pairs:
        (about if about_question(pair, by_id, focus, min_target_overlap=min_target_overlap) else aside).append(pair)
    return about, aside
