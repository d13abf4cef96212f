"""Small text helpers shared by the pipeline: normalisation and language guess.

Vietnamese text arrives in both NFC and NFD forms (copy-paste from PDFs and macOS produce NFD);
everything that compares strings goes through :func:`normalize` first so "Hà Nội" typed either
way is the same token.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

_VI_LETTERS = set("ăâđêôơưàáảãạằắẳẵặầấẩẫậèéẻẽẹềếểễệìíỉĩịòóỏõọồốổỗộờớởỡợùúủũụừứửữựỳýỷỹỵ")
_WORD = re.compile(r"(?u)\w+")

#: Function words of Vietnamese (syllables) and English: what a text is about is in the other words.
FUNCTION_WORDS = frozenset(
    # Vietnamese function syllables
    "là của và các những được bị có cho với trong tại từ đến tới lên xuống này đó kia theo về khi "
    "thì mà sẽ đã đang phải một mỗi hàng hằng nên để như vào ra ở trên dưới hơn không cũng còn rằng "
    "nhưng hoặc hay thêm nữa rồi vẫn chỉ lúc nay hiện sau trước bởi bằng qua vì nếu do nào gì "
    # English function words
    "the a an of to for in on at by is was are were be been being has have had it its this that "
    "these those and or with as from up now per each every than which who will shall must may can "
    "could would should our their your his her all any not no new after before into over under also "
    "only then there here so such get gets got s".split()
)


def normalize(text: str) -> str:
    """NFC-normalise, so composed and decomposed Vietnamese compare equal."""
    return unicodedata.normalize("NFC", text)


#: A passage counts as Vietnamese when this share of its letters is Vietnamese-only (Vietnamese prose: ~30%;
#: a Vietnamese name in English prose: ~2%).
VI_PASSAGE_SHARE = 0.05


def passage_language(text: str) -> str:
    """"vi" or "en" for a passage: by the share of Vietnamese-only letters, not by one of them."""
    lowered = normalize(text).lower()
    letters = sum(1 for ch in lowered if ch.isalpha())
    vi_chars = sum(1 for ch in lowered if ch in _VI_LETTERS)
    return "vi" if letters and vi_chars / letters >= VI_PASSAGE_SHARE else "en"


def language_shares(texts: Iterable[str]) -> dict[str, float]:
    """Share of passages in each language, rounded (empty for no passages)."""
    counts: dict[str, int] = {}
    for text in texts:
        lang = passage_language(text)
        counts[lang] = counts.get(lang, 0) + 1
    total = sum(counts.values())
    return {lang: round(n / total, 4) for lang, n in sorted(counts.items())} if total else {}


def main_language(languages: dict[str, float]) -> str:
    """The language most chunks are in, from :func:`language_shares` (Vietnamese when unknown: an
    index written before the shares were recorded)."""
    return max(languages, key=languages.__getitem__) if languages else "vi"


#: English words that frame a sentence and are no Vietnamese syllable written without its marks ("in",
#: "do", "to", "an", "can", "may", "me", "my", "on" are both): two of them around a Vietnamese name
#: keep the sentence English.
_EN_FRAME_WORDS = frozenset(
    "the is are was were be been does did what how when where why which who whom of for from with your you it its "
    "this that these those and or if will would should could there".split())


def other_language(query: str, texts: Sequence[str]) -> list[bool]:
    """Per text: whether it is written in the other language than ``query`` (the question's language by
    :func:`detect_language`, each text's by :func:`passage_language`)."""
    language = detect_language(query)
    return [passage_language(t) != language for t in texts]


def detect_language(text: str) -> str:
    """Return "vi" when the text is Vietnamese, else "en".

    A question of a few words is too short for statistical detectors; Vietnamese diacritics are
    a near-perfect signal, and an undiacritised Vietnamese question is rare in practice. An English
    question may name a Vietnamese place or product ("Is the Hà Đông campus open on Sundays?"): with
    at least two English frame words and fewer than half its words diacritised, it is English.
    """
    words = [w for w in _WORD.findall(normalize(text).lower()) if w.isalpha()]
    diacritised = sum(1 for w in words if any(ch in _VI_LETTERS for ch in w))
    if not diacritised:
        return "en"
    english = sum(1 for w in words if w in _EN_FRAME_WORDS)
    return "en" if english >= 2 and diacritised / len(words) < 0.5 else "vi"


def content_words(text: str) -> list[str]:
    """Lower-cased word tokens of the NFC text (used for overlap checks, not for BM25)."""
    return _WORD.findall(normalize(text).lower())


def searchable_text(text: str, metadata: dict) -> str:
    """What gets embedded and BM25-indexed: the title heads every chunk, so a chunk deep in a
    document still carries its topic."""
    title = str(metadata.get("title") or "")
    return f"{title}\n{text}" if title and not text.startswith(title) else text


def dot(a: list[float], b: list[float]) -> float:
    """Cosine for the L2-normalised vectors the embedding adapters return."""
    return sum(x * y for x, y in zip(a, b))


def singular(word: str) -> str:
    """An English plural's singular by its "s" ("shifts" -> "shift"; "class", "bus" and Vietnamese stay)."""
    return word[:-1] if len(word) > 3 and word.isascii() and word.endswith("s") and not word.endswith("ss") else word

