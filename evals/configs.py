"""Named query configurations: what the engine is asked for each evaluation row.

A configuration pairs session options (the choices a :class:`~engines.session.Session` may make:
condense window, transforms, router) with a pure function from a row to the message and explicit
chat history to send. Built in:

* ``lastturn``  - the question alone, never rewritten (condense window 0): the baseline.
* ``condense``  - the engine as configured, with the row's history as real chat history.
* ``history``   - earlier user turns and the question concatenated, no LLM (window 0).
* ``reference`` - the row's reference ``rewrite`` (rows without one are skipped): an upper
  bound for rewriting with this retriever.

Composed names add query transforms and routing to a base, e.g. ``condense+multiquery``,
``condense+hyde+cond`` (``cond`` = conditional activation instead of always), ``condense+router``
(semantic router), ``condense+llmrouter``, ``lastturn+original``. Other strategies register under
their own name with :func:`register_config`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole

from engines.errors import ConfigError
from engines.session import Session
from evals.dataset import EvalRow

if TYPE_CHECKING:
    from engines.pipeline import Pipeline

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
    engine_options: Mapping[str, Any] = field(default_factory=dict)  # condense_window, transforms, activation, router
    audit: bool = False  # its queries are rewrites worth reading beside the question

    def new_session(self, pipeline: "Pipeline") -> Session:
        """A fresh session with this configuration's choices, writing no turn log (evaluation keeps
        its own records)."""
        options = dict(self.engine_options)
        unknown = set(options) - {"condense_window", "transforms", "activation", "router"}
        if unknown:
            raise ConfigError(f"configuration {self.name!r}: unknown session options {sorted(unknown)}")
        session = Session(pipeline, log_turns=False)
        if "condense_window" in options:
            session.set_condense_window(options["condense_window"])
        if "transforms" in options or "activation" in options:
            session.set_expander(pipeline.choices.expander(options.get("transforms"), options.get("activation")))
        if "router" in options:
            session.set_router(pipeline.choices.router(options["router"]))
        return session


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


MODIFIERS = ("original", "multiquery", "hyde", "decompose", "stepback", "translate", "router", "llmrouter", "cond")


def compose_config(name: str) -> QueryConfig:
    """``base+modifier+...``: a built-in base with transforms, a router or conditional activation."""
    base_name, *mods = name.split("+")
    base = _REGISTRY.get(base_name)
    unknown = [m for m in mods if m not in MODIFIERS]
    if base is None or not mods or unknown or len(set(mods)) != len(mods):
        raise ConfigError(f"unknown configuration {name!r}; available: {', '.join(_REGISTRY)}, or a base plus "
                          f"modifiers joined by '+' ({', '.join(MODIFIERS)}), e.g. condense+multiquery")
    transforms = tuple(m for m in mods if m not in ("router", "llmrouter", "cond"))
    router = "llm" if "llmrouter" in mods else "semantic" if "router" in mods else "off"
    options = {**dict(base.engine_options), "transforms": transforms, "router": router,
               "activation": "conditional" if "cond" in mods else "always"}
    return QueryConfig(name, f"{base.description}; {', '.join(mods)}", base.build, options, audit=base.audit)


def get_config(name: str) -> QueryConfig:
    if name in _REGISTRY:
        return _REGISTRY[name]
    return compose_config(name)


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
