"""Is an mtRAG question standalone? The benchmark labels few turns; these heuristics decide the
rest from the question, its reference rewrite and the earlier turns (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Sequence

# ---------------------------------------------------------------------------------------------
# Standalone rule (pure)
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_NON_TOPICAL = frozenset(
    """
    a an the of to in on at by for from with about into onto over under as than then so if or
    and but nor not no yes is are was were be been being am do does did done doing have has had
    having can could should would will shall may might must what which who whom whose when
    where why how i me my mine we us our ours you your yours he him his she her hers it its they
    them their theirs this that these those there here any some all each every both either
    neither more most much many few lot lots other another such same own very too also just only
    even still really quite s t d ll re ve m don didn doesn isn aren wasn weren won wouldn
    couldn shouldn get got go going make made take use want need like know tell explain mean
    say said describe give provide please thing something anything way kind type bit
    information info detail details example exactly specifically actually currently mention
    mentioned better best possible potential available specific general regarding related
    relationship between during while happen help able well often usually generally overall
    consider exist someone one ok okay
    """.split()
)
_PRONOUNS = frozenset(
    "he him his she her hers they them their theirs it its this these those".split()
)
_QUESTION_OPENERS = frozenset(
    """what which who whom whose when where why how is are was were do does did can could should
    would will shall may might must has have had""".split()
)
_DEICTIC = re.compile(
    r"\b(?:what about|how about|and about|you (?:said|mentioned|mean|just said|told me)|mentioned"
    r"|(?:is|was|does|did|isn't|doesn't) that|that (?:means|is why)|in that case)\b"
)
_SENTENCE_END = re.compile(r"[.!?;]+\s+")
# "is it worth to", "was it ever legal to": a dummy subject, not a reference back.
_DUMMY_IT = re.compile(
    r"\b(?:is|was|isn't|wasn't|would|will|does) it (?:\S+ ){1,2}(?:to|that|if)\b"
)


def _stem(word: str) -> str:
    """Crude suffix stripping: enough to equate pig/pigs, tax/taxes, make/makes."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)] + repl
            break
    return word.rstrip("e") if len(word) > 3 else word


def _topical_stems(text: str) -> set[str]:
    return {
        _stem(w)
        for w in _TOKEN.findall(text.lower())
        if w not in _NON_TOPICAL and _stem(w) not in _NON_TOPICAL
    }


def _same_word(a: str, b: str) -> bool:
    """Equal stems, or an abbreviation/prefix of at least 4 letters (chemo/chemotherapy)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


def imported_context_words(question: str, rewrite: str, earlier_texts: Sequence[str]) -> list[str]:
    """Stems the rewrite adds that the question lacks but the earlier turns contain."""
    asked = _topical_stems(question)
    context = _topical_stems(" ".join(earlier_texts))
    added = [w for w in _topical_stems(rewrite) if not any(_same_word(w, q) for q in asked)]
    return sorted(w for w in added if any(_same_word(w, c) for c in context))


def reference_cue(question: str) -> str | None:
    """A phrase pointing back at the dialogue, or a sentence whose first non-filler word is a
    pronoun. Sentences of one or two words ("Got it.", "I see.") are acknowledgements, not
    references, and are skipped."""
    lowered = question.lower().replace("\u2019", "'")
    deictic = _DEICTIC.search(lowered)
    if deictic:
        return deictic.group(0)
    sentences = _SENTENCE_END.split(lowered)
    for sentence in sentences:
        words = _TOKEN.findall(sentence)
        if len(words) <= 2 and len(sentences) > 1:
            continue
        for word in words:
            if word in _PRONOUNS:
                if word == "it" and _DUMMY_IT.search(sentence):
                    break
                return word
            if word not in _NON_TOPICAL:
                break
    return None


def is_fragment(question: str) -> bool:
    """Keyword-style follow-ups ("any awards", "Investments?") lean on the topic so far; a
    question word or auxiliary anywhere means a full clause ("What is WACC?")."""
    words = _TOKEN.findall(question.lower())
    if not words or any(w in _QUESTION_OPENERS for w in words):
        return False
    return len(_topical_stems(question)) <= 2


def decide_standalone(
    turn: int,
    question: str,
    rewrite: str | None,
    earlier_texts: Sequence[str],
    label: str | None = None,
    has_standalone_alternative: bool = False,
) -> tuple[bool, str]:
    """(standalone?, basis) by the rule in the module docstring."""
    if turn == 1:
        return True, "turn1"
    if label:
        return label.strip().lower().replace("-", "_") == "standalone", "label"
    if has_standalone_alternative:
        return False, "alternative"
    if rewrite is not None and imported_context_words(question, rewrite, earlier_texts):
        return False, "rewrite_context"
    if reference_cue(question):
        return False, "reference"
    if is_fragment(question):
        return False, "fragment"
    return True, "no_cue"
