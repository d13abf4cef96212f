"""Words of a question that the documents never use: a plain refusal that says which.

Unanswerable questions here are near misses by design: on topic, about a named product, asking for
what its documents never state ("… có thêm vào Apple Pay không?", "… a limit for medical evacuation?").
Every score that compares the question with passages (cosine, BM25, the reader's P(answers)) finds the
product's passages and calls them close. What those passages lack is the asked thing itself, and that is
visible without a model: the question names a content word that no chunk of the corpus contains. When the
rest of the question is in the corpus's words (so it is not an English question over Vietnamese
documents, whose words are all "unknown"), such a word means the documents do not cover what is asked.

English words are compared by their Snowball stems ("cancels" and "cancel"), Vietnamese syllables as
they are. Pure functions over the BM25 vocabulary; the gate step asks them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import Stemmer

from engines.retrieval.bm25 import TokenizerSettings, tokenize
from engines.text import normalize

#: Words a question uses to ask, not to name what it is about; documents rarely contain them
#: ("bao nhiêu", "bao lâu", "ở đâu", "hiện nay", "how long", "what").
QUESTION_WORDS = frozenset("""
bao nhiêu lâu gì đâu nào sao mấy ai thế vậy nhỉ ạ à hả ơi nói hỏi mình tôi em anh chị bạn những cái chiếc đó này kia nay
muốn dùng xong chót hiện giờ khi nếu thì mà là có không được phải cần vào ra với của cho từ đến trong qua các một và
hoặc hay nữa rồi đã sẽ đang vẫn còn
what which who whom whose when where why how much many long does did do is are was were can could should would will
there any i my me we our us you your it its the a an of to in on at for from by with get still also be been being have
has had if or and else than then that this these those please tell know until about into as so not no yes
""".split())

#: Share of a question's content words the corpus must know for the unknown ones to count. Dev (reference rewrites,
#: four splits): 0.8 / 0.85 / 0.9 refuse 15 / 13 / 7 of 36 unanswerable turns and 17 / 15 / 9 of 191 answerable ones.
DEFAULT_MIN_KNOWN = 0.85
#: Why a turn was refused when the question names words no document uses.
UNKNOWN_TERMS = "unknown_terms"


_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    """This thread's stemmer: PyStemmer's may not be called from two threads at once, and turns run in threads."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def stem(token: str) -> str:
    """An English word's Snowball stem ("cancels", "cancelled" -> "cancel"), so an inflection the documents do not
    use is still known; any other token as it is (a Vietnamese syllable does not inflect)."""
    return _stemmer().stemWord(token) if token.isascii() and token.isalpha() else token


@dataclass(frozen=True)
class Vocabulary:
    """The corpus's words as the BM25 index tokenized them, English ones stemmed, and how it tokenized (a
    question is cut the same way)."""

    words: frozenset[str]
    tokenizer: TokenizerSettings = field(default_factory=TokenizerSettings)

    @classmethod
    def of(cls, tokens: Iterable[str], tokenizer: TokenizerSettings | None = None) -> Vocabulary:
        """From the index's tokens (built once per pipeline: stemming ~20,000 tokens takes milliseconds)."""
        return cls(frozenset(stem(t) for t in tokens), tokenizer or TokenizerSettings())

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and stem(token) in self.words


def content_words(question: str, tokenizer: TokenizerSettings | None = None) -> list[str]:
    """The question's words that name something: no question word, no number or code with a digit."""
    return [t for t in dict.fromkeys(tokenize(question, tokenizer or TokenizerSettings()))  # compounds' parts come too
            if t.isalpha() and len(t) > 1 and t not in QUESTION_WORDS]


def unknown_terms(question: str, vocabulary: Vocabulary, *, min_known: float = DEFAULT_MIN_KNOWN) -> tuple[str, ...]:
    """The content words of ``question`` the corpus never uses, when at least ``min_known`` of its content
    words are the corpus's own; () otherwise (nothing unknown, or a question in other words than the corpus's)."""
    words = content_words(question, vocabulary.tokenizer)
    unknown = tuple(w for w in words if w not in vocabulary)
    if not unknown or (len(words) - len(unknown)) / len(words) < min_known:
        return ()
    return unknown


def as_written(question: str, terms: tuple[str, ...]) -> list[str]:
    """Each term as the question spells it ("apple" -> "Apple")."""
    text = normalize(question)
    found = (re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text, re.IGNORECASE) for t in terms)
    return [m.group(0) if m else t for m, t in zip(found, terms)]
