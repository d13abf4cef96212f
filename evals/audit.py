"""Read the rewrites before trusting any score: the question beside the query actually used.

For every non-standalone row of a rewriting configuration, three flags:

* ``answered``    - the query is not a question: the condenser answered instead of rewriting.
* ``unchanged``   - the query has the same content words as the question: nothing resolved.
* ``new_content`` - the query holds content words found neither in the history nor in the
  question: the rewrite invented a detail (a year, a product, a condition).

Content words are lower-cased NFC tokens, minus a small Vietnamese/English stopword list and
tokens of :data:`MIN_TOKEN_LEN` characters or fewer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from engines.conversation.rewrite import looks_like_question
from engines.text import content_words, normalize
from evals.runner import RowResult

MIN_TOKEN_LEN = 2
_WORD = re.compile(r"(?u)\w+")
FLAGS = ("answered", "unchanged", "new_content")
#: Function words a rewrite may add without adding content.
STOPWORDS = frozenset("""
    the and for are was were what which who whom whose when where why how does did can could
    should would will shall may might must has have had this that these those there their them
    they its with from into about than then also any some such not but only more most very
    của các những này đó kia thì với cho trong ngoài được không có còn vậy thế nào gì bao nhiêu
    như nếu khi sau trước theo hay hoặc cũng đã đang sẽ rồi thôi làm sao đâu ạ nhé hả
    sang về đến tới từ bằng mỗi một đối
""".split())


@dataclass(frozen=True)
class AuditEntry:
    """One rewrite beside its question, with what looks wrong about it."""

    config: str
    conv_id: str
    turn: int
    question: str
    query: str
    answered: bool
    unchanged: bool
    new_content: bool
    new_words: list[str] = field(default_factory=list)
    fallback_reason: str | None = None

    @property
    def flags(self) -> list[str]:
        return [name for name in FLAGS if getattr(self, name)]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["flags"] = self.flags
        return data


def significant_words(text: str) -> list[str]:
    """Content tokens worth comparing: no stopwords, nothing of MIN_TOKEN_LEN chars or fewer,
    except codes: tokens with a digit ("05", "4.2") and acronyms ("TD", "HR") always count, so
    "Mẫu đó" -> "Mẫu 05/TD" is a resolved reference, not an unchanged question."""
    words = []
    for token in _WORD.findall(normalize(text)):
        lowered = token.lower()
        is_code = any(ch.isdigit() for ch in token) or (token.isascii() and token.isupper() and len(token) >= 2
                                                        and lowered not in STOPWORDS)
        if is_code or (len(lowered) > MIN_TOKEN_LEN and lowered not in STOPWORDS):
            words.append(lowered)
    return words


def audit_query(question: str, query: str, history: Iterable[str]) -> tuple[bool, bool, list[str]]:
    """(answered, unchanged, new words) for one rewrite."""
    answered = not looks_like_question(query)
    unchanged = set(significant_words(query)) == set(significant_words(question))
    known = set(content_words(question))
    for text in history:
        known.update(content_words(text))
    new_words = list(dict.fromkeys(w for w in significant_words(query) if w not in known))
    return answered, unchanged, new_words


def audit_rows(results: Sequence[RowResult], config: str) -> list[AuditEntry]:
    """Audit entries for the non-standalone rows one configuration scored."""
    entries = []
    for r in results:
        if not r.scored or r.row.type != "non_standalone":
            continue
        history = [text for _, text in (r.history_seen or r.row.history)]
        answered, unchanged, new_words = audit_query(r.row.question, r.query, history)
        entries.append(AuditEntry(config, r.row.conv_id, r.row.turn, r.row.question, r.query, answered,
                                  unchanged, bool(new_words), new_words, r.condense_fallback))
    return entries


def audit_summary(entries: Sequence[AuditEntry]) -> dict[str, dict]:
    """Per configuration: rows audited, rows per flag, rows with any flag, condense fallbacks."""
    out: dict[str, dict] = {}
    for entry in entries:
        counts = out.setdefault(entry.config, {"n": 0, **{f: 0 for f in FLAGS}, "flagged": 0, "fallbacks": Counter()})
        counts["n"] += 1
        for name in entry.flags:
            counts[name] += 1
        counts["flagged"] += bool(entry.flags)
        if entry.fallback_reason:
            counts["fallbacks"][entry.fallback_reason] += 1
    return {name: {**c, "fallbacks": dict(c["fallbacks"])} for name, c in out.items()}

