"""Extractive answers: quote the clauses that answer the question instead of letting a small
model paraphrase them.

The packaged 1.5B model reads the right passages and still writes wrong Vietnamese answers
(invents "2 ngày", says NOT_FOUND beside the exact clause; see README "Answers from the packaged
1.5B model"). Quoting the best-matching clauses is faithful by construction: the answer is the
document's own words, with the clause number and the title, chosen by the embedding model that
already ranked the passages. The pure functions here split and select; the engine supplies the
similarity scores (one batched embedding call per turn); the yes/no check over the quotes is
``engines.steps.check``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from threading import Lock

import numpy as np
from cachetools import LRUCache

from engines.answering.asks import CODE_SHAPE, asked_for, carries, counted_noun, states_count_of, states_quantity
from engines.answering.clauses import (
    CLAUSE_NUMBER,
    LABELLED_VALUE,
    MIN_CLAUSE_CHARS,
    SECTION_WORDS,
    Clause,
    split_clauses,
)
from engines.answering.ranges import band_score, bands, question_numbers
from engines.retrieval.bm25 import tokenize
from engines.text import normalize, other_language

INTROS = {
    "vi": "Theo tài liệu:",
    "en": "From the documents:",
}


#: The product's default for :attr:`ExtractConfig.range_weight` (and the setting ``clause_range_weight``).
DEFAULT_RANGE_WEIGHT = 0.02
#: The product's default for :attr:`ExtractConfig.fact_guard` (and the setting ``clause_fact_guard``).
DEFAULT_FACT_GUARD = True
#: The product's default for :attr:`ExtractConfig.lead_ins` (and the setting ``clause_lead_ins``).
DEFAULT_LEAD_INS = True
#: Whether the product sets :attr:`ExtractConfig.cross_language_boost` to the embedder's calibrated gap
#: (the setting ``clause_cross_language``): off, the test splits turned it down (docs/answers.md).
DEFAULT_CLAUSE_CROSS_LANGUAGE = False
#: The product's default for :attr:`ExtractConfig.skip_issuers` (and the setting ``clause_skip_issuers``).
DEFAULT_SKIP_ISSUERS = True
#: The product's default for :attr:`ExtractConfig.number_weight` (and the setting ``clause_number_weight``).
DEFAULT_NUMBER_WEIGHT = 0.05
#: The product's default for :attr:`ExtractConfig.drop_shared_names` (and the setting ``clause_drop_shared_names``).
DEFAULT_DROP_SHARED_NAMES = False
#: The product's default for :attr:`ExtractConfig.count_weight` (and the setting ``clause_count_weight``).
DEFAULT_COUNT_WEIGHT = 0.02


@dataclass(frozen=True)
class ExtractConfig:
    """How many clauses to quote and how much the clause's words count beside its meaning."""

    max_clauses: int = 3
    max_chars: int = 900
    #: Weight of the clause's BM25 score (scaled to 0..1 within the turn) added to its cosine.
    #: Set for e5-small, whose cosines between a question and its candidate clauses span only
    #: ~0.1. On the bundled eval set's 52 must_contain rows, weights 0 / 0.01 / 0.02 / 0.03 / 0.04
    #: / 0.05 quote the expected value in 33 / 36 / 37 / 38 / 39 / 37 rows, and the seed's English
    #: API question loses "500 requests per minute" from 0.05 on: 0.03 is inside the plateau.
    lexical_weight: float = 0.03
    #: Added when a clause carries the kind of fact the question asks for (a number of days, an
    #: amount, a date, a form code, ...: ``engines.answering.asks``). 0 = off.
    slot_weight: float = 0.0
    #: Bonus for clauses of better-ranked passages (linear: the first passage gets all of it, the last
    #: none): a clause of the passage retrieval ranked first is more likely the one that answers.
    passage_weight: float = 0.0
    #: Added when a range the clause states holds a number of the same kind the question names ("35
    #: tuổi" in "18 – 40 tuổi"), subtracted when its ranges of that kind all miss it (``engines.answering.ranges``).
    #: Dev (heldout3, held-out): 0.02 and 0.05 each mend one answer of 112 and change no other; 0 = off.
    range_weight: float = DEFAULT_RANGE_WEIGHT
    #: Added when a clause states a number of the thing the question counts ("bao nhiêu phiên" and
    #: "không quá 2 phiên"; ``engines.answering.asks.counted_noun``). Dev (heldout3, held-out): 0.02 and 0.04 each
    #: mend one answer of 112 and lose none; 0 = off.
    count_weight: float = DEFAULT_COUNT_WEIGHT
    #: When the question asks for a quantity (an amount, a number of days, a count) and no chosen clause
    #: states any number but versions, years, dates and codes, the best clause of the same passages that
    #: carries one takes the last place: an answer to "how much" without a number is wrong whatever else
    #: it quotes.
    fact_guard: bool = DEFAULT_FACT_GUARD
    #: Ranked clauses handed on beside the quote, for a later step to choose among.
    candidates: int = 6
    #: When the condense step composed the query without the LLM (a fallback: "subject: follow-up"), the
    #: clauses' words are matched against the follow-up alone: the subject's words would pick clauses
    #: for the earlier question's ask. Meaning is still matched against the whole composed query.
    fallback_words_from_message: bool = True
    #: A bold section title is the heading of the clauses below it (``split_clauses``). The conflict
    #: check's question focus leaves it off: there it lost a held-out dev answer (docs/answers.md).
    bold_headings: bool = False
    #: A list item is scored with the lead-in that introduced its list ("Khi chuyển nơi công tác, nhân viên được
    #: nghỉ:" before "5 ngày khi chuyển ra ngoài tỉnh"): alone, an item does not say what its number is of.
    #: Dev (heldout3, held-out, bundled): 23 / 54 / 21 -> 23 / 54 / 23 answers, none lost. The conflict
    #: check's question focus leaves it off.
    lead_ins: bool = DEFAULT_LEAD_INS
    #: Added to the clauses of passages in the other language than the question's: the embedder scores
    #: an English question against a Vietnamese clause lower than against any English one (the gap
    #: measured for passages, ``Calibration.cross_language_boost``), and BM25 finds none of its words. 0 = off.
    #: Dev (heldout3, held-out, bundled) at e5-small's 0.04: 23 / 54 / 23 -> 24 / 54 / 23, none lost; the
    #: test splits: one answer fewer and one more stale-only answer over the four.
    cross_language_boost: float = 0.0
    #: Added to a clause whose own number, or its section's, is the one the question names ("Điều 4.2 quy định
    #: gì?", "What does clause 3.1 say?"), in a passage holding the codes the question names ("… của thẻ
    #: SKU-4471"): clause numbers match exactly, as codes do in retrieval. 0 = off.
    number_weight: float = DEFAULT_NUMBER_WEIGHT
    #: Lines naming the document's issuer or act are never quoted (``is_issuer_line``).
    skip_issuers: bool = DEFAULT_SKIP_ISSUERS
    #: The meaning of the question is matched without the names every passage of the turn holds (the
    #: organisation a rewrite names: "… does Canh Dieu have a Mây Trắng lounge?"): with them, a sentence that
    #: says little but the name ("Canh Dieu Airlines is committed to …") stood first (``without_shared_names``).
    #: Off: on dev with the reference rewrites 149 -> 152 of 191 answers, but with the condense step's own rewrites
    #: 134 -> 132 (a product every retrieved passage names, "SAOMAX", "Tiết Kiệm", is the question's subject too).
    drop_shared_names: bool = DEFAULT_DROP_SHARED_NAMES


class ClauseVectorCache:
    """Clause vectors by scoring text, least recently used out first, shared by a pipeline's
    sessions (one embedding model). The same passages come back turn after turn in a conversation;
    embedding their ~40 clauses costs e5-small ~2 s on one core each time."""

    def __init__(self, capacity: int = 4096) -> None:
        self._vectors: LRUCache = LRUCache(maxsize=capacity)
        self._lock = Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)

    def vectors(self, texts: Sequence[str], embed_batch: Callable[[list[str]], list[list[float]]]) -> np.ndarray:
        """Vectors for ``texts``, one row each: cached ones reused, the rest embedded in one
        batch call (outside the lock); every vector returned is read while the lock is held, so a
        concurrent eviction never loses one."""
        with self._lock:
            known = {t: self._vectors[t] for t in dict.fromkeys(texts) if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        fresh = {t: np.asarray(v, dtype=np.float64) for t, v in zip(missing, embed_batch(missing))} if missing else {}
        with self._lock:
            for text, vector in fresh.items():
                self._vectors[text] = vector
        found = {**known, **fresh}
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, 0))


def scoring_text(clause: Clause, title: str) -> str:
    """What a clause is compared as: with its document title and section heading, because a
    sentence alone ("Mỗi lần nghỉ không quá 3 ngày") does not say whose rule it is. Measured on the
    bundled eval set: must_contain 35/52 with title and heading, 27/52 without."""
    return ". ".join(part for part in (title, clause.heading, clause.lead, clause.text) if part)


@lru_cache(maxsize=8192)
def clause_tokens(text: str) -> tuple[str, ...]:
    """A clause's BM25 tokens, memoised: the same passages, hence clauses, come back turn after turn
    and tokenizing ~40 of them cost ~5 ms a call."""
    return tuple(tokenize(text))


def lexical_scores(query: str, texts: Sequence[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 of the query against the clauses themselves, with the product's Vietnamese/English
    tokenizer: rare words of the question ("API", "Open Banking", "SKU-4417") weigh more than words
    every clause shares ("hạn mức"), which a sentence embedding alone does not see.

    The scores are bm25s's defaults (Lucene idf, k1 1.5, b 0.75; tests hold them equal), computed
    directly: building a bm25s index for ~40 clauses cost ~2 ms a turn, most of the conflict check's
    budget, for arithmetic over a few dozen counts."""
    tokens = [clause_tokens(t) or ("",) for t in texts]
    query_tokens = tokenize(query)
    if not query_tokens or not any(t != ("",) for t in tokens):
        return [0.0] * len(texts)
    counts = [Counter(t) for t in tokens]
    lengths = np.array([len(t) for t in tokens], dtype=np.float64)
    norm = k1 * (1 - b + b * lengths / lengths.mean())
    df = Counter(token for c in counts for token in c)
    scores = np.zeros(len(texts))
    for token in query_tokens:
        if token in df:
            idf = math.log(1 + (len(texts) - df[token] + 0.5) / (df[token] + 0.5))
            tf = np.array([c.get(token, 0) for c in counts], dtype=np.float64)
            scores += idf * tf / (tf + norm)
    return scores.tolist()


def combined_scores(similarities: Sequence[float], lexical: Sequence[float], weight: float) -> list[float]:
    """Cosine plus ``weight`` times the BM25 score scaled by the turn's best BM25 score."""
    if len(similarities) != len(lexical):
        raise ValueError(f"{len(similarities)} similarities but {len(lexical)} lexical scores")
    top = max(lexical, default=0.0)
    return [float(s) + (weight * float(b) / top if top > 0 else 0.0) for s, b in zip(similarities, lexical)]


#: Kinds of fact an answer cannot hold without a number.
QUANTITY_KINDS = frozenset({"amount", "duration", "count"})


def select_clauses(clauses: Sequence[Clause], scores: Sequence[float],
                   config: ExtractConfig = ExtractConfig(), kind: str = "other") -> list[tuple[Clause, float]]:
    """The ``max_clauses`` best-scoring clauses within ``max_chars``, put back in reading order
    (passage rank, then position) so quoted rules read as they do in the document. ``kind`` is what
    the question asks for (``engines.answering.asks.asked_for``), used by :attr:`ExtractConfig.fact_guard`."""
    if len(clauses) != len(scores):
        raise ValueError(f"{len(clauses)} clauses but {len(scores)} scores")
    ranked = sorted(range(len(clauses)), key=lambda i: -scores[i])
    picked: list[int] = []
    used = 0
    for i in ranked[: config.max_clauses]:
        if picked and used + len(clauses[i].text) > config.max_chars:
            break
        picked.append(i)
        used += len(clauses[i].text)
    if config.fact_guard and kind in QUANTITY_KINDS:
        picked = _with_asked_fact(picked, ranked, clauses, kind, config.max_chars)
    chosen = [(clauses[i], float(scores[i])) for i in picked]
    return sorted(chosen, key=lambda item: (item[0].passage, item[0].position))


def _with_asked_fact(picked: list[int], ranked: Sequence[int], clauses: Sequence[Clause], kind: str,
                     max_chars: int) -> list[int]:
    """``picked`` with its last (lowest-scoring) clause replaced by the best-ranked clause of the same
    passages that carries ``kind`` and states a quantity, when no picked clause states any (only
    versions, years, dates, codes) and the swap stays within ``max_chars``; unchanged otherwise. Other
    passages are not searched: their numbers are about other things."""
    if not picked or any(states_quantity(clauses[i].text) for i in picked):
        return picked
    passages = {clauses[i].passage for i in picked}
    room = max_chars - sum(len(clauses[i].text) for i in picked[:-1])
    best = next((i for i in ranked if i not in picked and clauses[i].passage in passages
                 and (len(picked) == 1 or len(clauses[i].text) <= room)
                 and carries(clauses[i].text, kind) and states_quantity(clauses[i].text)), None)
    return picked if best is None else [*picked[:-1], best]


def _title(titles: Sequence[str], clause: Clause) -> str:
    """The title of the passage a clause came from ("" when the caller gave none)."""
    return titles[clause.passage] if clause.passage < len(titles) else ""


def lead_with_best(chosen: Sequence[tuple[Clause, float]]) -> list[tuple[Clause, float]]:
    """The best-scoring clause first (the earliest on a tie), the others after it in the order given: a
    reader looks for the answer in the first line, and in reading order it often stood below an
    unrelated clause of an earlier passage."""
    if len(chosen) < 2:
        return list(chosen)
    best = max(range(len(chosen)), key=lambda i: (chosen[i][1], -i))
    return [chosen[best], *(item for i, item in enumerate(chosen) if i != best)]


def compose_answer(chosen: Sequence[tuple[Clause, float]], titles: Sequence[str], language: str) -> str:
    """A short quoted answer: one bullet per clause, naming the document it comes from, the clause that
    answers best first (``lead_with_best``)."""
    if not chosen:
        return ""
    lines = [INTROS.get(language, INTROS["en"])]
    for clause, _ in lead_with_best(chosen):
        title = _title(titles, clause)
        lines.append(f"- {_with_heading(clause)}" + (f" ({title})" if title else ""))
    return "\n".join(lines)


def _with_heading(clause: Clause) -> str:
    """A short labelled value ("Pin: 12 tháng;", "Màn hình: 24 tháng;") says what it is only under its
    heading: quoted with it."""
    if clause.heading and len(clause.text) < 2 * MIN_CLAUSE_CHARS and LABELLED_VALUE.match(clause.text):
        return f"{clause.heading} — {clause.text}"
    return clause.text


#: A clause or section the question names by number: "Điều 4.2", "khoản 3.1", "clause 2.3", "Section 5".
_NAMED_NUMBER = re.compile(rf"(?iu)(?<!\w)(?:{SECTION_WORDS}|§)\s*(\d+(?:\.\d+)*)(?![\d.]\d)")


def named_numbers(question: str) -> frozenset[str]:
    """The clause and section numbers ``question`` names ("Điều 4.2 ..." -> {"4.2"}): a clause so named is asked for
    by its number, which no embedding reads."""
    return frozenset(m.group(1) for m in _NAMED_NUMBER.finditer(normalize(question)))


def named_codes(question: str) -> frozenset[str]:
    """The codes ``question`` names ("SKU-4471", "05/TD"; the shape ``asks`` knows a code by), lower case: a clause
    number the question names is another document's when its passage holds none of them."""
    return frozenset(m.group(0).lower() for m in CODE_SHAPE.finditer(normalize(question)))


def clause_numbers(clause: Clause) -> tuple[str, ...]:
    """The clause's own number ("4.2. Quy đổi ..." -> "4.2") and its section heading's ("Điều 4. Điểm thưởng" -> "4")."""
    own = CLAUSE_NUMBER.match(clause.text)
    section = re.match(rf"(?iu)^(?:{SECTION_WORDS}\s+)?(\d+(?:\.\d+)*)", clause.heading.strip())
    found = [own.group(0).strip().strip(".)(") if own else "", section.group(1) if section else ""]
    return tuple(n for n in found if n and n[0].isdigit())


_WORD = re.compile(r"[^\W_][\w'’-]*")


def names_in(text: str) -> list[tuple[int, int]]:
    """(start, end) of each name in ``text``: capitalised words in a row ("Canh Dieu", "Bệnh viện Hạnh An" gives
    "Bệnh" and "Hạnh An"); a single capitalised word opening the text is only a sentence's start."""
    spans: list[list[int]] = []
    last_end = -1
    for m in _WORD.finditer(text):
        if not m.group(0)[0].isupper():
            continue
        if spans and text[last_end:m.start()].strip() == "":
            spans[-1][1] = m.end()
        else:
            spans.append([m.start(), m.end()])
        last_end = m.end()
    return [(a, b) for a, b in spans if " " in text[a:b] or not _opens_sentence(text, a)]


def _opens_sentence(text: str, at: int) -> bool:
    return not text[:at].strip() or text[:at].rstrip()[-1] in ".?!:;\n"


#: A name is shared when at least this share of the turn's passages (with their titles) hold it. Dev (four splits,
#: reference rewrites): 0.8 / 1.0 quote the value in 151 / 152 of 191 turns, 149 without dropping names.
SHARED_NAME_SHARE = 1.0


def without_shared_names(query: str, passages: Sequence[str]) -> str:
    """``query`` without the names every passage holds (they tell no passage, hence no clause, apart),
    when something is left; else ``query`` as it is."""
    if len(passages) < 2:
        return query
    texts = [normalize(p).lower() for p in passages]
    text = normalize(query)
    shared = [(a, b) for a, b in names_in(text)
              if sum(bool(re.search(rf"(?<!\w){re.escape(text[a:b].lower())}(?!\w)", t)) for t in texts)
              >= SHARED_NAME_SHARE * len(texts)]
    if not shared:
        return query
    kept = text
    for a, b in reversed(shared):
        kept = kept[:a] + kept[b:]
    kept = re.sub(r"\s{2,}", " ", kept).replace(" ?", "?").strip()
    return kept if len(re.findall(r"\w+", kept)) >= 3 else query


def number_scores(question: str, clauses: Sequence[Clause], titled: Sequence[str], weight: float) -> list[float]:
    """``weight`` for each clause whose number the question names, in a passage (``titled``: title and text) that
    holds every code the question names; else 0."""
    named = named_numbers(question) if weight else frozenset()
    if not named:
        return [0.0] * len(clauses)
    codes = named_codes(question)
    holds = [all(code in normalize(t).lower() for code in codes) for t in titled]
    return [weight if holds[c.passage] and named.intersection(clause_numbers(c)) else 0.0 for c in clauses]


def slot_scores(question: str, clauses: Sequence[Clause], weight: float) -> list[float]:
    """``weight`` for each clause that carries the kind of fact ``question`` asks for, else 0."""
    if weight == 0:
        return [0.0] * len(clauses)
    kind = asked_for(question)
    return [weight if carries(c.text, kind) else 0.0 for c in clauses]


def rank_clauses(query: str, passages: Sequence[str], titles: Sequence[str],
                 similarity: Callable[[str, list[str]], Sequence[float]],
                 config: ExtractConfig = ExtractConfig(), words: str | None = None) -> tuple[list[Clause], list[float]]:
    """Every clause of ``passages`` with its score: meaning of ``query`` (one batched ``similarity`` call),
    and, read from ``words`` when given (the user's own message when the condenser failed) else from
    ``query``: its words (BM25 over the clauses), the asked-for kind of fact, numbers and counted thing."""
    clauses = split_clauses(passages, config.bold_headings, config.lead_ins, config.skip_issuers)
    if not clauses:
        return [], []
    other = other_language(query, passages) if config.cross_language_boost else [False] * len(passages)
    texts = [scoring_text(c, _title(titles, c)) for c in clauses]
    titled = [f"{titles[i] if i < len(titles) else ''}\n{p}" for i, p in enumerate(passages)]
    meaning = without_shared_names(query, titled) if config.drop_shared_names else query
    scores = combined_scores(similarity(meaning, texts), lexical_scores(words or query, texts), config.lexical_weight)
    n = max(len(passages) - 1, 1)
    prior = [config.passage_weight * (1 - c.passage / n) for c in clauses]
    slots = slot_scores(words or query, clauses, config.slot_weight)
    numbers = question_numbers(words or query) if config.range_weight else []
    in_range = [config.range_weight * band_score(numbers, bands(c.text, f"{_title(titles, c)}. {c.heading}"))
                if numbers else 0.0 for c in clauses]
    noun = counted_noun(words or query) if config.count_weight else None
    counts = [config.count_weight if noun and states_count_of(c.text, noun) else 0.0 for c in clauses]
    crossed = [config.cross_language_boost if other[c.passage] else 0.0 for c in clauses]
    numbered = number_scores(words or query, clauses, titled, config.number_weight)
    return clauses, [s + b + p + r + k + x + n
                     for s, b, p, r, k, x, n in zip(scores, slots, prior, in_range, counts, crossed, numbered)]


def extract_answer(query: str, passages: Sequence[str], titles: Sequence[str], language: str,
                   similarity: Callable[[str, list[str]], Sequence[float]],
                   config: ExtractConfig = ExtractConfig()) -> tuple[str, list[tuple[Clause, float]]]:
    """(answer text, chosen clauses with their fused scores)."""
    clauses, scores = rank_clauses(query, passages, titles, similarity, config)
    chosen = select_clauses(clauses, scores, config, asked_for(query))
    return compose_answer(chosen, titles, language), chosen
