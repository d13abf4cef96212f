"""Query transformations (multi-query, HyDE, decomposition, step-back, translation, original) and
when they fire.

Each transform turns the (condensed) question into extra retrieval queries; the engine retrieves
each and fuses everything with the first pass by reciprocal rank, so the original query always
keeps its say. All but ``original`` cost one LLM call, which is why :class:`ActivationRules`
decides per turn whether they run (the seed's rule: short queries, a weak first pass) and the
turn record says which ran and why. ``translate`` has its own rule: it runs when the corpus holds
passages in the other language (Vietnamese and English), whose words neither BM25 nor a small
multilingual embedder match well from a question in the first.

The parsing and the rules are pure functions; :class:`QueryExpander` is the thin LLM adapter.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from llama_index.core.llms import LLM
from llama_index.core.prompts import PromptTemplate

from engines.errors import ConfigError
from engines.text import content_words, detect_language, normalize

logger = logging.getLogger(__name__)

TRANSFORMS = ("original", "multiquery", "hyde", "decompose", "stepback", "translate")
#: Transforms that need an LLM call (``original`` re-uses the user's own words).
LLM_TRANSFORMS = frozenset({"multiquery", "hyde", "decompose", "stepback", "translate"})
#: ``translate`` runs when at least this share of the corpus's passages is in the other language.
MIN_OTHER_LANGUAGE_SHARE = 0.05
_LANGUAGE_NAMES = {"vi": "Vietnamese", "en": "English"}

MULTI_QUERY_PROMPT = PromptTemplate(
    "Write {n} different search queries that would find documents answering the question below.\n"
    "Use other words and the official terms such documents would use. Same language as the question.\n"
    "One query per line, no numbering, no explanations.\n\n"
    "Question: {question}\nQueries:\n"
)
HYDE_PROMPT = PromptTemplate(
    "Write a short passage (3-4 sentences) from an internal policy or product document that answers\n"
    "the question below. Write it as the document would, in the same language as the question.\n"
    "Invent plausible details if you do not know them. Only the passage.\n\n"
    "Question: {question}\nPassage:\n"
)
DECOMPOSE_PROMPT = PromptTemplate(
    "The question below asks about several things. Split it into at most {n} simple questions,\n"
    "each one complete on its own, in the same language as the question.\n"
    "One question per line, no numbering, no explanations.\n\n"
    "Question: {question}\nSub-questions:\n"
)
STEP_BACK_PROMPT = PromptTemplate(
    "Write one more general question about the rule, policy or concept behind the specific question\n"
    "below, in the same language. Only the general question.\n\n"
    "Example: Customer A borrows 2 billion to buy a 2.5 billion flat: will it be approved?\n"
    "General: What is the maximum loan-to-value ratio for home loans?\n\n"
    "Question: {question}\nGeneral:\n"
)

TRANSLATE_PROMPT = PromptTemplate(
    "Translate the search query below into {language}. Keep names, product and form codes, numbers and\n"
    "dates exactly as they are. Only the translation, on one line.\n\n"
    "Query: {question}\nTranslation:\n"
)

_COMPARE_CUES = re.compile(
    r"\b(so sánh|khác nhau|khác gì|giống nhau|compare|comparison|difference between|differ|versus|vs\.?)\b",
    re.IGNORECASE,
)
_LIST_PREFIX = re.compile(r"^\s*(?:[-*•]|\d+[.)]|query\s*\d*:|q\d+:)\s*", re.IGNORECASE)


# ---------------------------------------------------------------------------------- pure core


def parse_lines(text: str, *, limit: int, exclude: Sequence[str] = ()) -> list[str]:
    """LLM output → distinct queries: bullets/numbers stripped, blanks, repeats and ``exclude`` dropped."""
    seen = {normalize(e).casefold() for e in exclude}
    queries: list[str] = []
    for line in text.splitlines():
        query = _LIST_PREFIX.sub("", line).strip().strip('"').strip()
        key = normalize(query).casefold()
        if len(query) < 3 or key in seen:
            continue
        seen.add(key)
        queries.append(query)
        if len(queries) >= limit:
            break
    return queries


def is_multi_part(question: str) -> bool:
    """A comparison, or several questions in one message: the only case decomposition pays for."""
    if _COMPARE_CUES.search(question):
        return True
    return question.count("?") >= 2


def other_language(query: str, languages: Mapping[str, float], min_share: float = MIN_OTHER_LANGUAGE_SHARE) -> str | None:
    """The corpus language, other than the query's, that holds at least ``min_share`` of its passages."""
    mine = detect_language(query)
    others = [(share, lang) for lang, share in languages.items() if lang != mine and lang in _LANGUAGE_NAMES]
    best = max(others, default=None)
    return best[1] if best is not None and best[0] >= min_share else None


def word_count(text: str) -> int:
    return len(normalize(text).split())


@dataclass(frozen=True)
class ActivationRules:
    """When the LLM transforms run. ``always`` for measurement; ``conditional`` by default.

    conditional: a transform fires when the query is short (fewer than ``short_query_words``
    words) or the first pass looks weak (best raw vector cosine below ``low_score``).
    Decomposition additionally needs a multi-part question in every mode.
    """

    mode: str = "conditional"
    short_query_words: int = 8
    low_score: float | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("always", "conditional"):
            raise ConfigError(f"transform activation {self.mode!r}: use 'always' or 'conditional'")

    def reasons(self, query: str, best_vector_score: float | None) -> list[str]:
        """Why the expensive transforms should run for this query; empty = they should not."""
        if self.mode == "always":
            return ["always"]
        reasons = []
        words = word_count(query)
        if words < self.short_query_words:
            reasons.append(f"short query ({words} < {self.short_query_words} words)")
        if self.low_score is not None and best_vector_score is not None and best_vector_score < self.low_score:
            reasons.append(f"weak first pass (cosine {best_vector_score:.3f} < {self.low_score})")
        return reasons


@dataclass(frozen=True)
class ExtraQuery:
    """One more retrieval run: ``vector_only`` for HyDE (BM25 on invented words helps nobody)."""

    text: str
    transform: str
    vector_only: bool = False


@dataclass
class Expansion:
    queries: list[ExtraQuery] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    llm_calls: int = 0


def validate_transforms(names: Sequence[str]) -> tuple[str, ...]:
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        raise ConfigError(f"unknown query transform(s) {unknown}; available: {', '.join(TRANSFORMS)}")
    return tuple(dict.fromkeys(names))


# ---------------------------------------------------------------------------------- LLM adapter


class QueryExpander:
    """Generates the extra queries of the enabled transforms for one turn."""

    def __init__(self, llm: LLM, transforms: Sequence[str], rules: ActivationRules = ActivationRules(),
                 n_variants: int = 3, max_subquestions: int = 3, languages: Mapping[str, float] | None = None) -> None:
        self._llm = llm
        self.transforms = validate_transforms(transforms)
        self.rules = rules
        self._n_variants = n_variants
        self._max_sub = max_subquestions
        self._languages = dict(languages or {})  # the corpus's share of passages per language (the manifest's)

    @property
    def is_active(self) -> bool:
        return bool(self.transforms)

    def expand(self, query: str, question: str, best_vector_score: float | None) -> Expansion:
        """Extra queries for ``query`` (the condensed question); ``question`` is what the user typed."""
        out = Expansion()
        if "original" in self.transforms:
            if content_words(question) and set(content_words(question)) != set(content_words(query)):
                out.queries.append(ExtraQuery(question, "original"))
                out.trace.append("original: the user's own words beside the rewrite")
        expensive = [t for t in self.transforms if t in LLM_TRANSFORMS]
        if not expensive:
            return out
        general = self.rules.reasons(query, best_vector_score)
        for name in expensive:
            if name == "decompose" and not is_multi_part(query):
                continue
            reasons = general
            if name == "translate":
                target = other_language(query, self._languages)
                if target is None:
                    known = "no language shares in the index manifest" if not self._languages else (
                        f"under {MIN_OTHER_LANGUAGE_SHARE:.0%} of the corpus in the other language")
                    out.trace.append(f"translate: skipped ({known})")
                    continue
                reasons = [f"{self._languages[target]:.0%} of the corpus in {_LANGUAGE_NAMES[target]}"]
            if not reasons:
                out.trace.append(f"{name}: skipped (query long enough and first pass strong)")
                continue
            try:
                produced = getattr(self, f"_{name}")(query)
            except Exception as exc:  # a failing transform must not fail the turn
                logger.warning("transform %s failed: %s", name, exc)
                out.trace.append(f"{name}: failed ({type(exc).__name__})")
                out.llm_calls += 1
                continue
            out.llm_calls += 1
            out.queries.extend(produced)
            out.trace.append(f"{name}: {len(produced)} quer{'y' if len(produced) == 1 else 'ies'} ({'; '.join(reasons)})")
        return out

    def _multiquery(self, query: str) -> list[ExtraQuery]:
        raw = self._llm.predict(MULTI_QUERY_PROMPT, question=query, n=str(self._n_variants))
        return [ExtraQuery(q, "multiquery") for q in parse_lines(raw, limit=self._n_variants, exclude=[query])]

    def _hyde(self, query: str) -> list[ExtraQuery]:
        passage = self._llm.predict(HYDE_PROMPT, question=query).strip()
        return [ExtraQuery(passage, "hyde", vector_only=True)] if len(passage) >= 20 else []

    def _decompose(self, query: str) -> list[ExtraQuery]:
        raw = self._llm.predict(DECOMPOSE_PROMPT, question=query, n=str(self._max_sub))
        subs = parse_lines(raw, limit=self._max_sub, exclude=[query])
        return [ExtraQuery(q, "decompose") for q in subs] if len(subs) >= 2 else []

    def _translate(self, query: str) -> list[ExtraQuery]:
        target = other_language(query, self._languages)
        if target is None:
            return []
        raw = self._llm.predict(TRANSLATE_PROMPT, question=query, language=_LANGUAGE_NAMES[target])
        lines = parse_lines(raw, limit=1, exclude=[query])
        # a reply still in the query's language is no translation (small models echo or answer); one in
        # the target language may keep a name of the other ("Chi cục Thuế Đống Đa"), so test the source
        source = detect_language(query)
        return [ExtraQuery(q, "translate") for q in lines if detect_language(q) != source]

    def _stepback(self, query: str) -> list[ExtraQuery]:
        raw = self._llm.predict(STEP_BACK_PROMPT, question=query)
        return [ExtraQuery(q, "stepback") for q in parse_lines(raw, limit=1, exclude=[query])]


@dataclass(frozen=True)
class ExpansionConfig:
    """How a session's query expander is built: the LLM, the default transforms and activation."""

    llm: LLM
    transforms: tuple[str, ...] = ()
    activation: str = "conditional"
    short_query_words: int = 8
    low_score: float | None = None
    n_variants: int = 3
    languages: tuple[tuple[str, float], ...] = ()  # the corpus's share of passages per language

    def expander(self, transforms: Sequence[str] | None = None, activation: str | None = None) -> QueryExpander | None:
        """The expander for ``transforms`` (default: the configured ones); None when there are none."""
        names = self.transforms if transforms is None else tuple(transforms)
        rules = ActivationRules(activation or self.activation, self.short_query_words, self.low_score)
        expander = QueryExpander(self.llm, names, rules, n_variants=self.n_variants, languages=dict(self.languages))
        return expander if expander.is_active else None
