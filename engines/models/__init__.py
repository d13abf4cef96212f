"""Models: the registry of embedders and LLMs (``registry``), the packaged local model
(``gguf``, ``llama_server``), the e5 adapter (``e5``) and test doubles (``fakes``).

Importing this package loads no model and no optional package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Models:
    """The models one pipeline uses: the embedder, the answer LLM and the condense LLM (often the
    same object), the second embedder for English chunks (``engines.retrieval.companion``; None: none) and
    the cross-encoder of the rerank step (``engines.models.cross_encoder``; None: no rerank).
    Only the composition root decides which concrete classes they are."""

    embed_model: Any
    llm: Any
    condense_llm: Any
    companion_embed_model: Any = None
    reranker: Any = None
