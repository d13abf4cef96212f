"""Pairwise conflicts between retrieved passages and their cluster-aware resolution.

This module holds pure functions over plain dataclasses and numpy arrays.
A LlamaIndex postprocessor wraps it. The rules follow the design in
seeds/002: a cosine gate of 0.68, a numeric heuristic and a negation
heuristic. Conflicts form a graph. Each connected component is resolved
on its own ("cluster-aware recency"), so independent disputes in one top-k
never eliminate each other's winners.

Rule for "the same quantity" (numeric conflicts), applied per pair of
quantities (qa, qb); the functions live in ``engines.conflicts.claims``, which by default also
aligns each value with its closest claim, reads deadlines and changed periods:

1. Same canonical unit and same per-period. Rates are never converted:
   6000 req/hour and 100 req/min are different keys.
2. The values differ by more than the precision they were written with
   (``Quantity.resolution``) and by more than ``rel_tol``.
3. Neither value is agreed elsewhere: if qa's value also appears under the
   same key in the other passage, qa counts as agreement. For a single value
   per key this is the brief's "same key, same value means agreement"; it also
   keeps a shared row of a table from hiding a real dispute in another row.
4. Same subject. The subject markers in each quantity's sentence, up to the
   number, must not differ on both sides ("mutual difference"). Marker
   kinds: capitalised names that do not start a sentence ("Illinois",
   "Acme"); codes ("SKU-4471", a lone "A"/"B", all-caps words that are not
   common acronyms); fiscal periods ("FY2023", "Q4", "quý 4"); and category
   terms grouped by dimension (staff type: thử việc/probation,
   thời vụ/seasonal, ...; customer type; domestic/international; max/min).
   A marker is unmatched when the other passage never mentions it, anywhere.
   The pair is vetoed when both sides have an unmatched marker of the same
   kind. This works even though verbs and phrasing differ freely between
   two versions of one fact: "Auditors at Deloitte restated Acme's revenue"
   adds a name on one side only, so it is no veto.
5. Context overlap (``require_context_overlap``): the few words before the
   two numbers share at least one content word ("giới hạn", "revenue"). If
   either context has no content words, this check is skipped.
6. Same claim (``min_claim_overlap``): the two sentences holding the numbers, values masked,
   share at least that share of their words (Jaccard). Two documents on one topic state many
   numbers; only those in sentences saying the same thing are two values of one claim.

Known limits: names that begin a sentence are invisible to rule 4
("Illinois opens at 9:00"). So are lowercase subjects outside the lexicon
("gói vàng" vs "gói bạc"). Rule 5 compares Vietnamese syllables, so "phí" alone
links "phí thường niên" to "phí phát hành". Paraphrased conflicts ("service
retired" vs "service available") need NLI and are out of scope, as the seed
says.
"""

from __future__ import annotations

import datetime as dt
import logging
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components as csgraph_components

from engines.conflicts import (
    DEFAULT_ALIGN_CLAIMS,
    DEFAULT_MIN_ABOLITION_TARGET,
    DEFAULT_MIN_CLAIM_OVERLAP,
    DEFAULT_MIN_DEADLINE_OVERLAP,
    DEFAULT_MIN_PERIOD_OVERLAP,
    DEFAULT_SIM_THRESHOLD,
)
from engines.conflicts.claims import Facts, Passage, abolition_target_overlap, analyze, facts, numeric_evidence
from engines.conflicts.crosslingual import CrossLanguage, cross_language_evidence
from engines.conflicts.partial import amends_in_part, stale_spans
from engines.text import passage_language

logger = logging.getLogger(__name__)

__all__ = [
    "Passage",
    "ConflictPair",
    "Cluster",
    "Resolution",
    "analyze",
    "detect_pairs",
    "connected_components",
    "resolve",
    "DEFAULT_SIM_THRESHOLD",
]


ConflictKind = Literal["numeric", "negation", "replaced"]
ClusterKind = Literal["temporal", "unresolved"]


@dataclass(frozen=True)
class ConflictPair:
    """Two passages that disagree. ``a`` comes before ``b`` in input order."""

    a: str
    b: str
    kind: ConflictKind
    evidence: tuple[str, ...]
    similarity: float


@dataclass(frozen=True)
class Cluster:
    """One connected component of the conflict graph.

    The kind is "temporal" when every member has a date and one is strictly
    the newest. That one is ``winner_id``. Otherwise the kind is "unresolved":
    keep everything and tell the user the sources disagree.
    """

    ids: tuple[str, ...]
    kind: ClusterKind
    winner_id: str | None
    pairs: tuple[ConflictPair, ...]
    basis: str = "date"  # what chose the winner: "supersedes" (declared) or "date" (inferred)


@dataclass(frozen=True)
class Resolution:
    """What to pass to generation. The ids keep the input order."""

    kept_ids: tuple[str, ...]
    dropped_ids: tuple[str, ...]
    clusters: tuple[Cluster, ...] = field(default_factory=tuple)
    #: kept passages that lost a cluster, with the spans of their stale sentences (to cut out)
    trimmed: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()


def _check_similarity(similarity: ArrayLike, n: int) -> np.ndarray:
    sim = np.asarray(similarity, dtype=float)
    if sim.shape != (n, n):
        raise ValueError(f"similarity must be {n}x{n} for {n} passages, got shape {sim.shape}")
    if not np.all(np.isfinite(sim)):
        raise ValueError("similarity contains NaN or infinite values")
    if not np.allclose(sim, sim.T, atol=1e-6):
        raise ValueError("similarity must be symmetric (cosine similarity matrix)")
    return sim


def _check_unique(ids: Sequence[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"duplicate passage id {i!r}")
        seen.add(i)


def detect_pairs(
    passages: Sequence[Passage],
    similarity: ArrayLike,
    *,
    sim_threshold: float = DEFAULT_SIM_THRESHOLD,
    rel_tol: float = 1e-9,
    require_context_overlap: bool = True,
    subject_veto: bool = True,
    min_context_overlap: float = 0.5,
    require_unit: bool = True,
    companion_veto: bool = True,
    min_claim_overlap: float = DEFAULT_MIN_CLAIM_OVERLAP,
    min_period_overlap: float | None = DEFAULT_MIN_PERIOD_OVERLAP,
    align_claims: bool = DEFAULT_ALIGN_CLAIMS,
    min_abolition_overlap: float | None = DEFAULT_MIN_ABOLITION_TARGET,
    min_deadline_overlap: float | None = DEFAULT_MIN_DEADLINE_OVERLAP,
    table_headers: bool = True,
    cross_language: CrossLanguage | None = None,
) -> list[ConflictPair]:
    """Conflicting pairs among ``passages``, ordered by input position.

    ``table_headers``: a table cell's claim is named by its column's header beside its row
    ("| Đăng ký thường trú | 25.000 đồng/lần |" under "Nộp trực tiếp"), so it aligns with a sentence
    stating the same fee.

    ``companion_veto``: two differently titled documents issued on the same date are companions
    (a set of rules published together, e.g. leave for probation staff and for seasonal staff),
    not a revision of one another, so their different numbers are different facts.

    ``cross_language``: with it, two passages in different languages, whose claims share no words,
    are aligned by a multilingual embedder instead (``crosslingual``), and pass the same-topic gate
    from ``sim_threshold - cross_language.gate_drop`` (one topic in two languages scores lower); a
    pair let in by the lower gate meets the abolition check too, whose word overlap rarely holds
    across languages.

    Only pairs with ``similarity[i, j] >= sim_threshold`` are examined. A pair
    can yield a "numeric" and a "negation" conflict; the numeric one is listed
    first. A negation conflict means one passage has an abolition cue and the
    other has none. The numeric rule is in the module docstring.
    """
    if not -1.0 <= sim_threshold <= 1.0:
        raise ValueError(f"sim_threshold must be in [-1, 1], got {sim_threshold!r}")
    if rel_tol < 0:
        raise ValueError(f"rel_tol must be >= 0, got {rel_tol!r}")
    n = len(passages)
    _check_unique([p.id for p in passages])
    sim = _check_similarity(similarity, n)
    read: dict[int, Facts] = {}
    out: list[ConflictPair] = []
    targeted: set[tuple[str, str]] | None = None  # read on the first abolition pair (most turns have none)
    cross_gate = sim_threshold - cross_language.gate_drop if cross_language is not None else sim_threshold
    languages = [passage_language(p.text) for p in passages] if cross_gate < sim_threshold else []
    for i, j in np.argwhere(np.triu(sim >= min(sim_threshold, cross_gate), k=1)).tolist():
        pa, pb = passages[i], passages[j]
        s = float(sim[i, j])
        if s < sim_threshold and languages[i] == languages[j]:
            continue  # the lower gate is for two languages, whose passages score lower on one topic
        if companion_veto and are_companions(pa, pb):
            continue
        if pa.quantities and pb.quantities:
            if i not in read:  # (setdefault would rebuild the facts on every pair)
                read[i] = facts(pa, table_headers)
            if j not in read:
                read[j] = facts(pb, table_headers)
            fa, fb = read[i], read[j]
            evidence = numeric_evidence(
                pa, fa, pb, fb, rel_tol=rel_tol,
                require_context_overlap=require_context_overlap, subject_veto=subject_veto,
                min_context_overlap=min_context_overlap, require_unit=require_unit,
                min_claim_overlap=min_claim_overlap, min_period_overlap=min_period_overlap,
                align_claims=align_claims, min_deadline_overlap=min_deadline_overlap,
            )
            if not evidence and cross_language is not None and fa.language != fb.language:
                evidence = cross_language_evidence(
                    pa, fa, pb, fb, np.asarray(cross_language.similarity(fa.claim_texts, fb.claim_texts)),
                    min_similarity=cross_language.min_similarity, min_margin=cross_language.min_margin,
                    subject_veto=subject_veto)
            if evidence:
                out.append(ConflictPair(pa.id, pb.id, "numeric", evidence, s))
        if bool(pa.cues) != bool(pb.cues):
            cued, other = (pa, pb) if pa.cues else (pb, pa)
            # an abolition conflicts only with a document that states what it abolishes
            if min_abolition_overlap is not None and targeted is None:
                targeted = abolished_sources(passages, min_abolition_overlap)
            if targeted is None or (cued.id, other.source_key) in targeted:
                phrases = tuple(dict.fromkeys(c.phrase for c in cued.cues))
                out.append(ConflictPair(pa.id, pb.id, "negation", phrases, s))
    for pair in out:
        logger.debug("conflict %s %s<->%s sim=%.3f %s", pair.kind, pair.a, pair.b, pair.similarity, pair.evidence)
    return out


def abolished_sources(passages: Sequence[Passage], min_overlap: float) -> set[tuple[str, str]]:
    """(cued passage id, document) where one of the document's passages states what the cue abolishes.

    Decided per document, not per passage: the other chunks of an abolished rule ("register on form
    NS-21", "the days in office are checked monthly") do not restate it, yet fall with it.
    """
    out: set[tuple[str, str]] = set()
    for cued in passages:
        if not cued.cues:
            continue
        for other in passages:
            key = (cued.id, other.source_key)
            if other.cues or other.source_key == cued.source_key or key in out:
                continue
            if abolition_target_overlap(cued, other) >= min_overlap:
                out.add(key)
    return out


def are_companions(a: Passage, b: Passage) -> bool:
    """Different documents, same issue date, different titles: published together, not a revision."""
    if not (a.source and b.source) or a.source == b.source or a.date is None or a.date != b.date:
        return False
    if a.authority and b.authority and a.authority != b.authority:
        return False  # two departments on one day: nothing says they were published as one set
    return unicodedata.normalize("NFC", a.title).casefold().strip() != unicodedata.normalize("NFC", b.title).casefold().strip()


# --------------------------------------------------------------------------- graph + resolution


def _ends(pair: ConflictPair | tuple[str, str]) -> tuple[str, str]:
    return (pair.a, pair.b) if isinstance(pair, ConflictPair) else (pair[0], pair[1])


def connected_components(
    n_or_ids: int | Sequence[str],
    pairs: Iterable[ConflictPair | tuple[str, str]],
) -> list[list[str]]:
    """All connected components, singletons included (``scipy.sparse.csgraph``).

    Components are ordered by their first member; members keep input order. An int ``n``
    stands for the ids "0".."n-1".
    """
    if isinstance(n_or_ids, int):
        if n_or_ids < 0:
            raise ValueError(f"n must be >= 0, got {n_or_ids!r}")
        ids: list[str] = [str(i) for i in range(n_or_ids)]
    else:
        ids = list(n_or_ids)
    _check_unique(ids)
    if not ids:
        return []
    index = {id_: k for k, id_ in enumerate(ids)}
    rows, cols = [], []
    for pair in pairs:
        a, b = _ends(pair)
        for end in (a, b):
            if end not in index:
                raise ValueError(f"pair refers to unknown passage id {end!r}")
        rows.append(index[a])
        cols.append(index[b])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(ids), len(ids)))
    _, labels = csgraph_components(graph, directed=False)
    groups: dict[int, list[str]] = {}
    for k, id_ in enumerate(ids):
        groups.setdefault(int(labels[k]), []).append(id_)
    return list(groups.values())


def _date_key(d: dt.date) -> dt.datetime:
    """Dates and datetimes compare on one axis; a bare date means midnight."""
    return d if isinstance(d, dt.datetime) else dt.datetime.combine(d, dt.time.min)


def _declared_winner(members: list[str], by_id: dict[str, Passage]) -> str | None:
    """The member whose document declares (``supersedes``) every other document of the cluster."""
    sources = {by_id[m].source_key for m in members}
    for m in members:
        own = by_id[m]
        if sources - {own.source_key} <= set(own.supersedes):
            return m
    return None


def _cluster(members: list[str], by_id: dict[str, Passage], pairs: tuple[ConflictPair, ...]) -> Cluster:
    """Explicit signals win over inference: a declared replacement first, then the one newest date."""
    declared = _declared_winner(members, by_id)
    if declared is not None:
        return Cluster(tuple(members), "temporal", declared, pairs, basis="supersedes")
    dates = [by_id[m].date for m in members]
    if all(d is not None for d in dates):
        keys = [_date_key(d) for d in dates if d is not None]
        newest = max(keys)
        newest_members = [m for m, k in zip(members, keys) if k == newest]
        # Several chunks of the one newest document are one winner, not a tie.
        if len({by_id[m].source_key for m in newest_members}) == 1:
            return Cluster(tuple(members), "temporal", newest_members[0], pairs)
    return Cluster(tuple(members), "unresolved", None, pairs)


#: ``partial`` modes: which losing passages keep the sentences that do not conflict on their own.
PARTIAL_MODES = ("off", "amendments", "values", "all")


def partial_mode(partial: bool | str) -> str:
    """One of :data:`PARTIAL_MODES` (``True`` means "all", ``False`` "off")."""
    mode = ("all" if partial else "off") if isinstance(partial, bool) else partial
    if mode not in PARTIAL_MODES:
        raise ValueError(f"partial must be one of {PARTIAL_MODES}, got {partial!r}")
    return mode


def _may_trim(cluster: Cluster, member: str, mode: str, winners: Sequence[Passage]) -> bool:
    """Whether ``member``, which lost ``cluster``, may be trimmed instead of set aside whole. ``"values"``:
    only when the newer passage changed values of it (every pair it is in is numeric) and inferred
    by date: an abolition, or a document that declares it replaces this one, replaces the whole
    rule, including sentences that carry no value a sentence check could catch. ``"amendments"``:
    as ``"values"``, and only when the newer document presents itself as a change to parts of
    another (``partial.amends_in_part``): a new price list or a new edition replaces the whole."""
    if mode == "all":
        return True
    if mode == "off" or cluster.basis != "date":
        return False
    if {p.kind for p in cluster.pairs if member in (p.a, p.b)} != {"numeric"}:
        return False
    return mode == "values" or any(amends_in_part(w.title, w.text) for w in winners)


def resolve(
    passages: Sequence[Passage],
    pairs: Iterable[ConflictPair],
    *,
    resolve_conflicts: bool = True,
    partial: bool | str = False,
) -> Resolution:
    """Keep the newest passage of each conflict cluster. Keep all when that is unclear.

    A cluster is resolved only when every member has a date and exactly one is
    newest. Clusters without that keep all their members as "unresolved", and
    passages in no conflict pass through. With ``resolve_conflicts=False``,
    clusters are still reported, including the would-be winner, but nothing is
    dropped.
    """
    mode = partial_mode(partial)
    ids = [p.id for p in passages]
    _check_unique(ids)
    by_id = {p.id: p for p in passages}
    pair_list = list(pairs)
    for pair in pair_list:
        if pair.a == pair.b:
            raise ValueError(f"pair joins passage {pair.a!r} to itself")
    components = connected_components(ids, pair_list)
    comp_of = {id_: k for k, comp in enumerate(components) for id_ in comp}
    pairs_of: dict[int, list[ConflictPair]] = {}
    for pair in pair_list:
        pairs_of.setdefault(comp_of[pair.a], []).append(pair)
    clusters = [
        _cluster(comp, by_id, tuple(pairs_of[k]))
        for k, comp in enumerate(components)
        if k in pairs_of
    ]
    dropped: set[str] = set()
    trimmed: dict[str, tuple[tuple[int, int], ...]] = {}
    if resolve_conflicts:
        for c in clusters:
            if c.kind == "temporal":
                winner_source = by_id[c.winner_id].source_key
                winners = [by_id[m] for m in c.ids if by_id[m].source_key == winner_source]
                for m in c.ids:
                    if by_id[m].source_key == winner_source:
                        continue
                    spans = stale_spans(by_id[m], winners, detect_pairs) if _may_trim(c, m, mode, winners) else None
                    if spans:
                        trimmed[m] = spans
                    else:
                        dropped.add(m)
    for c in clusters:
        logger.debug("cluster %s kind=%s winner=%s", c.ids, c.kind, c.winner_id)
    return Resolution(
        kept_ids=tuple(i for i in ids if i not in dropped),
        dropped_ids=tuple(i for i in ids if i in dropped),
        clusters=tuple(clusters),
        trimmed=tuple((i, trimmed[i]) for i in ids if i in trimmed),
    )
