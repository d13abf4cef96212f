"""Named query configurations: what the engine is asked for each evaluation row.

A configuration pairs engine options (passed to ``Pipeline.new_engine``) with a pure function
from a row to the message and explicit chat history to send. Built in:

* ``lastturn``  - the question alone, never rewritten (condense window 0): the baseline.
* ``condense``  - the engine as configured, with the row's history as real chat history.
* ``history``   - earlier user turns and the question concatenated, no LLM (window 0).
* ``reference`` - the row's reference ``rewrite`` (rows without one are skipped): an upper
  bound for rewriting with this retriever.

Later strategies register under their own name, e.g. multi-query::

    register_config(QueryConfig("multiquery", "condense + 3 generated queries",
                                build=condensed, engine_options={"num_queries": 3}, audit=True))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.errors import ConfigError
from evals.dataset import EvalRow

if TYPE_CHECKING:
    from app.factory import Pipeline
    from engines.chat import ConversationalRAGEngine

_ROLES = {"user": MessageRole.USER, "assistant": MessageRole.ASSISTANT, "bot": MessageRole.ASSISTANT}


@dataclass(frozen=True)
class TurnInput:
    """The message to send and the explicit history; ``skip_reason`` set means "not scored"."""

    message: str
    chat_history: tuple[ChatMessage, ...] = ()
    skip_reason: str | None = None

    @classmethod
    def skip(cls, reason: str) -> "TurnInput":
        return cls("", (), reason)


@dataclass(frozen=True)
class QueryConfig:
    """A named way of turning a row into an engine call."""

    name: str
    description: str
    build: Callable[[EvalRow], TurnInput]
    engine_options: Mapping[str, Any] = field(default_factory=dict)
    audit: bool = False  # its queries are rewrites worth reading beside the question

    def new_engine(self, pipeline: "Pipeline") -> "ConversationalRAGEngine":
        """A fresh engine that writes no turn log (evaluation keeps its own records)."""
        return pipeline.new_engine(record_log=False, **dict(self.engine_options))


def to_chat_messages(history: Iterable[Sequence[str]]) -> list[ChatMessage]:
    """``[role, text]`` pairs as LlamaIndex messages ("bot" is the assistant)."""
    messages = []
    for role, text in history:
        if role not in _ROLES:
            raise ValueError(f"unknown history role {role!r}; use user, assistant or bot")
        messages.append(ChatMessage(role=_ROLES[role], content=text))
    return messages


# ---------------------------------------------------------------------------------- builders


def question_only(row: EvalRow) -> TurnInput:
    return TurnInput(row.question)


def condensed(row: EvalRow) -> TurnInput:
    return TurnInput(row.question, tuple(to_chat_messages(row.history)))


def concatenated(row: EvalRow) -> TurnInput:
    """Earlier user turns, then the question: the no-LLM way to carry context."""
    return TurnInput(" ".join([*row.previous_user_turns(), row.question]))


def reference_rewrite(row: EvalRow) -> TurnInput:
    return TurnInput(row.rewrite) if row.rewrite else TurnInput.skip("no reference rewrite")


BUILTIN: tuple[QueryConfig, ...] = (
    QueryConfig("lastturn", "the question alone, no rewrite", question_only, {"condense_window": 0}),
    QueryConfig("condense", "the engine's condense step over the real chat history", condensed, audit=True),
    QueryConfig("history", "earlier user turns + question concatenated, no LLM", concatenated, {"condense_window": 0}),
    QueryConfig("reference", "the dataset's reference rewrite (rows without one skipped)", reference_rewrite,
                {"condense_window": 0}),
)

_REGISTRY: dict[str, QueryConfig] = {c.name: c for c in BUILTIN}
DEFAULT_CONFIGS = ("lastturn", "condense", "history")


def register_config(config: QueryConfig, *, replace: bool = False) -> None:
    """Make a configuration available by name (to ``--configs`` and ``run_evaluation``)."""
    if not config.name or "," in config.name:
        raise ValueError(f"configuration names must be non-empty and contain no comma, got {config.name!r}")
    if config.name in _REGISTRY and not replace:
        raise ValueError(f"configuration {config.name!r} is already registered; pass replace=True")
    _REGISTRY[config.name] = config


def available_configs() -> list[str]:
    return list(_REGISTRY)


def get_config(name: str) -> QueryConfig:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown configuration {name!r}; available: {', '.join(_REGISTRY)}") from None


def resolve_configs(names: Iterable[str | QueryConfig]) -> list[QueryConfig]:
    """Configurations by name (or as given), in order; duplicates and unknown names are errors."""
    configs = [n if isinstance(n, QueryConfig) else get_config(n.strip()) for n in names]
    if not configs:
        raise ConfigError(f"no configuration given; available: {', '.join(_REGISTRY)}")
    seen = [c.name for c in configs]
    duplicates = sorted({n for n in seen if seen.count(n) > 1})
    if duplicates:
        raise ConfigError(f"configuration listed twice: {', '.join(duplicates)}")
    return configs
