"""What a passage claims and how two passages' claims compare: numbers, deadlines and rates read
from the text (``numbers``, ``deadlines``), each claim's sentence and subject markers
(``subjects``), claim alignment, changed periods and abolition targets. Pure functions; the
conflict graph (``graph``) decides with them.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engines.conflicts import lexicon as lx
from engines.conflicts.deadlines import DEADLINE_UNITS, parse_deadlines
from engines.conflicts.negation import Cue, find_abolition_cues
from engines.conflicts.numbers import Lang, Quantity, parse_quantities
from engines.conflicts.subjects import (
    Profile,
    claim_sentence,
    claim_terms,
    claim_words,
    column_header,
    content_words,
    markers,
    profile,
    sentence_prefix,
    sentences,
    subjects_differ,
)
from engines.conflicts.tables import with_header_units
from engines.text import passage_language

__all__ = ["Passage", "analyze", "claim_overlap", "numeric_evidence", "abolition_target_overlap", "cue_target", "Facts",
           "facts", "same_value", "same_rate", "PERIOD_DAYS"]


@dataclass(frozen=True)
class Passage:
    """A retrieved passage with what the detectors read from it.

    The spans in ``quantities`` and ``cues`` index the NFC form of ``text``.
    ``analyze`` stores ``text`` already in NFC.
    """

    id: str
    text: str
    date: dt.date | None = None
    quantities: tuple[Quantity, ...] = ()
    cues: tuple[Cue, ...] = ()
    title: str = ""  # the document's subject: its markers apply to every number in the passage
    source: str = ""  # the document it comes from; chunks of one document win or lose together
    supersedes: tuple[str, ...] = ()  # documents its document declares it replaces (front matter)
    authority: str = ""  # who issued its document (front matter ``department``); "" when unknown

    @property
    def source_key(self) -> str:
        return self.source or self.id


def analyze(
    id: str,
    text: str,
    date: dt.date | None = None,
    *,
    lang: Lang | None = None,
    skip_years: bool = True,
    skip_small_ints: bool = True,
    title: str = "",
    source: str = "",
    deadlines: bool = True,
    supersedes: Sequence[str] = (),
    authority: str = "",
    header_units: bool = True,
) -> Passage:
    """Build a ``Passage`` with its quantities (deadlines and table cells under a unit among them) and
    cues read from ``text``."""
    norm = unicodedata.normalize("NFC", text)
    quantities = parse_quantities(norm, lang, skip_years=skip_years, skip_small_ints=skip_small_ints)
    if header_units:
        quantities = with_header_units(norm, quantities)
    if deadlines:
        quantities = sorted([*quantities, *parse_deadlines(norm)], key=lambda q: q.span)
    return Passage(
        id=id,
        text=norm,
        date=date,
        title=unicodedata.normalize("NFC", title),
        source=source,
        supersedes=tuple(supersedes),
        authority=unicodedata.normalize("NFC", authority).casefold().strip(),
        quantities=tuple(quantities),
        cues=tuple(find_abolition_cues(norm)),
    )


def same_value(qa: Quantity, qb: Quantity, rel_tol: float) -> bool:
    tol = max(rel_tol * max(abs(qa.value), abs(qb.value)), qa.resolution, qb.resolution)
    return abs(qa.value - qb.value) <= tol


@dataclass(frozen=True)
class Facts:
    """Per-passage view used by pair checks; built once per passage."""

    profile: Profile
    markers: tuple[set[tuple[str, str]], ...]  # one per quantity
    contexts: tuple[set[str], ...]  # one per quantity
    claims: tuple[frozenset[str], ...]  # one per quantity: its sentence's words, values masked
    claim_texts: tuple[str, ...] = ()  # one per quantity: its sentence (and column header), as written
    language: str = "vi"  # the passage's ("vi" or "en"): claims in two languages share no words


def facts(p: Passage, table_headers: bool = True) -> Facts:
    """Built once per passage (only for passages in a same-topic pair that both carry numbers) and
    kept, bounded: the same chunks come back turn after turn, and building them was most of the
    conflict stage's time (``python -m evals.conflicts --overhead``). ``table_headers``: a table
    cell's claim holds its column's header beside its row. Read-only: the sets are shared."""
    return _facts(p, table_headers)


@lru_cache(maxsize=4096)
def _facts(p: Passage, table_headers: bool) -> Facts:
    text = unicodedata.normalize("NFC", p.text)
    title = unicodedata.normalize("NFC", p.title)
    title_markers = markers(title) if title else set()
    claim_texts = tuple(claim_sentence(text, *q.span) + (" " + column_header(text, q.span[0]) if table_headers else "")
                        for q in p.quantities)
    return Facts(
        profile=profile(f"{title}\n{text}" if title else text),
        markers=tuple(markers(sentence_prefix(text, q.span[0])) | title_markers for q in p.quantities),
        contexts=tuple(content_words(q.context) | content_words(sentence_prefix(text, q.span[0]))
                       for q in p.quantities),
        claims=tuple(claim_words(t) for t in claim_texts),
        claim_texts=claim_texts,
        language=passage_language(text),
    )


def claim_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two claims' masked words: how far they state the same thing."""
    return len(a & b) / len(a | b) if a and b else 0.0


#: Days in a period, to tell "6 days per month" from "1.5 days per week" (same rate) and from
#: "1 day per week" (a new rule).
PERIOD_DAYS = {"second": 1 / 86400, "minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0,
                "month": 30.4375, "quarter": 91.3125, "year": 365.25}

#: What a period change can change between: units of time, or none stated ("per visit" is neither).
_TIME_PERIODS = frozenset(PERIOD_DAYS) | {None}


def same_rate(qa: Quantity, qb: Quantity) -> bool:
    """Both periods known and the two values the same per day (to 1%)."""
    if qa.per not in PERIOD_DAYS or qb.per not in PERIOD_DAYS:
        return False
    ra, rb = qa.value / PERIOD_DAYS[qa.per], qb.value / PERIOD_DAYS[qb.per]
    return abs(ra - rb) <= 0.01 * max(abs(ra), abs(rb))


def _period_changes(pa: Passage, fa: Facts, pb: Passage, fb: Facts, min_overlap: float,
                    subject_veto: bool) -> list[str]:
    """A value whose period changes with it ("6 days per month" -> "1 day per week"): same unit,
    different period, in sentences stating the same claim. Rates that convert into each other agree."""
    out: list[str] = []
    for i, qa in enumerate(pa.quantities):
        if not qa.unit:
            continue
        for j, qb in enumerate(pb.quantities):
            if qb.unit != qa.unit or qb.per == qa.per or same_rate(qa, qb) or same_value(qa, qb, 1e-9):
                continue
            if qa.per not in _TIME_PERIODS or qb.per not in _TIME_PERIODS:
                continue  # per visit vs per day: two different limits, not one whose period changed
            if subject_veto and subjects_differ(fa.markers[i], fa.profile, fb.markers[j], fb.profile):
                continue
            if claim_overlap(fa.claims[i], fb.claims[j]) < min_overlap:
                continue
            item = f"{qa.text} vs {qb.text}"
            if item not in out:
                out.append(item)
    return out


def _best_aligned(claim: frozenset[str], candidates: list[tuple[int, Quantity]], claims: tuple[frozenset[str], ...],
                  min_overlap: float, position: int = -1) -> tuple[int, Quantity] | None:
    """The candidate whose sentence states ``claim`` most nearly (at least ``min_overlap``); among
    values of one sentence ("from 17:00 to 20:00"), the one at ``position`` (the same place)."""
    scored = [(claim_overlap(claim, claims[j]), j, q) for j, q in candidates]
    scored = [t for t in scored if t[0] >= min_overlap]
    if not scored:
        return None
    _, j, q = max(scored, key=lambda t: (t[0], t[1] == position, -t[1]))
    return j, q


def _counterpart(i: int, p: Passage, f: Facts, candidates: list[tuple[int, Quantity]], other: Facts) -> int:
    """The index, among ``candidates``, at the same place as value ``i`` in its sentence: the k-th
    value of its unit in a sentence maps to the k-th in the best-matching sentence (-1 if none)."""
    unit = p.quantities[i].unit
    rank = sum(1 for k in range(i) if f.claims[k] == f.claims[i] and p.quantities[k].unit == unit)
    best = max((claim_overlap(f.claims[i], other.claims[j]) for j, _ in candidates), default=0.0)
    same_sentence = [j for j, _ in candidates if claim_overlap(f.claims[i], other.claims[j]) == best]
    return same_sentence[rank] if rank < len(same_sentence) else -1


def _aligned_change(i: int, pa: Passage, fa: Facts, *, j_candidates: list[tuple[int, Quantity]], pb: Passage,
                    fb: Facts, rel_tol: float, min_overlap: float, subject_veto: bool,
                    min_deadline_overlap: float | None = None) -> str | None:
    """Claim alignment: ``pa``'s i-th value against the value of ``pb`` stated in the most similar
    sentence, and back; a change only when each side's closest claim holds a different value. A
    newer notice that repeats the old deadline while moving it ("registered before 31/05: no need
    to re-register; extended to 30/09") still moves it."""
    qa = pa.quantities[i]
    if qa.unit in DEADLINE_UNITS and min_deadline_overlap is not None:
        min_overlap = min_deadline_overlap  # a deadline is the one limit its sentence sets
    best = _best_aligned(fa.claims[i], j_candidates, fb.claims, min_overlap,
                         _counterpart(i, pa, fa, j_candidates, fb))
    if best is None:
        return None
    j, qb = best
    if same_value(qa, qb, rel_tol):
        return None
    back = [(k, q) for k, q in enumerate(pa.quantities) if (q.unit, q.per) == (qb.unit, qb.per)]
    back_best = _best_aligned(fb.claims[j], back, fa.claims, min_overlap, _counterpart(j, pb, fb, back, fa))
    if back_best is not None and same_value(back_best[1], qb, rel_tol):
        return None
    if subject_veto and subjects_differ(fa.markers[i], fa.profile, fb.markers[j], fb.profile):
        return None
    return f"{qa.text} vs {qb.text}"


def numeric_evidence(
    pa: Passage, fa: Facts, pb: Passage, fb: Facts, *,
    rel_tol: float, require_context_overlap: bool, subject_veto: bool,
    min_context_overlap: float = 0.5, require_unit: bool = True, min_claim_overlap: float = 0.0,
    min_period_overlap: float | None = None, align_claims: bool = False,
    min_deadline_overlap: float | None = None,
) -> tuple[str, ...]:
    evidence: list[str] = []
    if min_period_overlap is not None:
        evidence += _period_changes(pa, fa, pb, fb, min_period_overlap, subject_veto)
    for i, qa in enumerate(pa.quantities):
        if require_unit and not qa.unit:
            continue  # a bare number ("2.1", "70") is a clause label or a table cell far more often than a claim
        same_key_b = [(j, qb) for j, qb in enumerate(pb.quantities) if (qb.unit, qb.per) == (qa.unit, qa.per)]
        if align_claims:
            item = _aligned_change(i, pa, fa, j_candidates=same_key_b, pb=pb, fb=fb, rel_tol=rel_tol,
                                   min_overlap=min_claim_overlap, subject_veto=subject_veto,
                                   min_deadline_overlap=min_deadline_overlap)
            if item and item not in evidence:
                evidence.append(item)
            continue
        if not same_key_b or any(same_value(qa, qb, rel_tol) for _, qb in same_key_b):
            continue  # nothing to compare, or agreement on this value
        for j, qb in same_key_b:
            if any(same_value(qa2, qb, rel_tol) for qa2 in pa.quantities if (qa2.unit, qa2.per) == (qb.unit, qb.per)):
                continue  # qb is agreed by another value of pa
            if subject_veto and subjects_differ(fa.markers[i], fa.profile, fb.markers[j], fb.profile):
                continue
            ca, cb = fa.contexts[i], fb.contexts[j]
            if require_context_overlap and ca and cb and len(ca & cb) / min(len(ca), len(cb)) < min_context_overlap:
                continue  # the words before the two numbers must mostly agree: same quantity, new value
            if min_claim_overlap and claim_overlap(fa.claims[i], fb.claims[j]) < min_claim_overlap:
                continue  # the two sentences must state the same claim (subject, attribute, scope)
            item = f"{qa.text} vs {qb.text}"
            if item not in evidence:
                evidence.append(item)
    return tuple(evidence)


def abolition_target_overlap(cued: Passage, other: Passage) -> float:
    """How far ``other`` states what ``cued`` abolishes: the best share of a cue sentence's terms
    (``claim_terms``; the cue itself cut out) found in one sentence of ``other`` that carries no cue,
    or 1 when the cue sentence names a value ``other`` states. An
    abolition of one allowance beside a document about another shares the topic, not the target."""
    best = 0.0
    other_sentences = uncued_sentence_terms(other.text)
    for cue in cued.cues:
        sentence = claim_sentence(cued.text, *cue.span)
        start = cued.text.find(sentence)
        named = [q for q in cued.quantities if q.unit and start <= q.span[0] < start + len(sentence)]
        if any((q.unit, q.per) == (o.unit, o.per) and same_value(q, o, 1e-9) for q in named for o in other.quantities):
            return 1.0  # "the 3 days/week rule no longer applies" names the rule by the value the other states
        target = cue_target(cued, cue)
        against = other_sentences
        if not target:  # "Bãi bỏ Quyết định số 7/2022/QĐ-X.": the document it names is the target
            target, against = cue_target(cued, cue, citations=True), uncued_sentence_terms(other.text, citations=True)
        if not target:
            continue
        best = max([best, *(len(target & o) / len(target) for o in against)])
    return best


@lru_cache(maxsize=4096)
def uncued_sentence_terms(text: str, citations: bool = False) -> tuple[frozenset[tuple[str, ...]], ...]:
    """The terms of each sentence of ``text`` that carries no abolition cue and is no decision's preamble.
    Kept per text: every abolition among a turn's passages is checked against every other passage, and
    the same chunks come back turn after turn."""
    return tuple(_target_terms(s, citations) for s in sentences(text)
                 if not find_abolition_cues(s) and not lx.PREAMBLE_RE.match(s))


def _target_terms(sentence: str, citations: bool = False) -> frozenset[tuple[str, ...]]:
    """``claim_terms``, document references left out unless ``citations``: "bãi bỏ X ban hành kèm theo
    Quyết định số N" names X; the base document N is cited by every decision that amends it."""
    return claim_terms(sentence if citations else lx.CITATION_RE.sub(" . ", sentence))


def cue_target(cued: Passage, cue: Cue, citations: bool = False) -> frozenset[tuple[str, ...]]:
    """What an abolition sentence names: its terms (``claim_terms``) with the cue itself cut out."""
    sentence = claim_sentence(cued.text, *cue.span)
    start = cued.text.find(sentence)
    lo, hi = cue.span[0] - start, cue.span[1] - start
    if start < 0 or not 0 <= lo <= hi <= len(sentence):
        return _target_terms(sentence, citations)
    return _target_terms(sentence[:lo] + " . " + sentence[hi:], citations)
