"""Names a conversation is about, and whether a rewrite kept them.

The packaged 1.5B condenser keeps a follow-up's own words and often leaves out what the conversation is
about: after a question on one fund, one hospital or one data package, the rewrite of "is there a fee
for that?" keeps "fee" and drops the package's name, and retrieval then ranks every organisation's
rules alike. A proper name or a code in an earlier question ("Phú Thịnh Vượng", "QX-17") is what the
conversation is about in the most literal sense. Pure functions; written forms only (capitals and
digits), no lexicon.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engines.answering.asks import carries
from engines.text import normalize

_WORD = re.compile(r"[^\W_][\w'’.-]*[^\W_]|[^\W_]")
#: What may stand between a sentence's end and its first word.
_OPENERS = " \t\"“('‘"
#: A sentence's end: its next word is capitalised whatever it is.
_SENTENCE_ENDS = ".!?:;\n"


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence (a bounded look back: a long message stays linear)."""
    before = text[max(0, start - 16): start].rstrip(_OPENERS)
    return (not before and start <= 16) or (bool(before) and before[-1] in _SENTENCE_ENDS)


def _is_name_word(word: str) -> bool:
    """A word written as part of a name: a capital first letter and more than one letter, or a code
    ("QX-17", "LH", "MoMo")."""
    return len(word) > 1 and word[0].isupper()


def _is_code(word: str) -> bool:
    """A product or form code (``engines.answering.asks``' code shape: "QX-17", "SAO2") or a brand written with inner
    capitals ("TaxiGo"); not a unit or a short acronym ("GB", "VND")."""
    if carries(word, "code"):
        return True
    return not any(c.isdigit() for c in word) and len(word) >= 4 and sum(c.isupper() for c in word) >= 2


def names_in(text: str) -> list[str]:
    """Runs of two or more capitalised words ("Phú Thịnh Vượng", "Silver Harbor Dental Plan") and codes
    ("QX-17"), in order, each once. One capitalised word alone is no name: a sentence's start ("Gói",
    "What"), a weekday, or the first syllable of a Vietnamese institution ("Bệnh viện")."""
    text = normalize(text)
    names: list[str] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        if not run:
            return
        words = [m.group() for m in run]
        at_start = _starts_sentence(text, run[0].start())
        if at_start and not _is_code(words[0]):
            words = words[1:]  # the sentence's first word is capitalised anyway
        name = re.sub(r"['’]s$", "", " ".join(words))  # "Acme Corp's revenue": the name is "Acme Corp"
        if name and (len(words) > 1 or _is_code(words[0])) and name not in names:
            names.append(name)

    for match in _WORD.finditer(text):
        gap = text[run[-1].end(): match.start()] if run else ""
        if _is_name_word(match.group()) and (not run or gap.strip() == ""):
            run.append(match)
            continue
        close()
        run = [match] if _is_name_word(match.group()) else []
    close()
    return names


def dropped_names(question: str, rewrite: str, earlier: Sequence[str]) -> list[str]:
    """The names of the latest earlier question that has any, when neither ``question`` nor its
    ``rewrite`` keeps one of them and ``question`` names none of its own (a follow-up that names
    something has changed or narrowed the subject itself); else []."""
    if names_in(question):
        return []
    latest = next((found for text in reversed(earlier) if (found := names_in(text))), [])
    kept = normalize(f"{question} {rewrite}").casefold()
    if not latest or any(name.casefold() in kept for name in latest):
        return []
    return latest
