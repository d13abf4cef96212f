"""What every step of a turn shares: the turn's state going in, a frozen output coming out.

A turn is ``route ─▶ condense ─▶ retrieve ─▶ gate ─▶ (rerank) ─▶ assemble ─▶ answer ─▶ check``. Each step
reads a :class:`TurnState` and returns a frozen :class:`StepOutput` subclass that says

* what it found (its own fields),
* what it cost (``llm_calls``; the pipeline adds the step's wall time to ``timings_ms``),
* how the turn changes (:meth:`StepOutput.apply` returns a *new* state), and
* what the turn record shows of it (:meth:`StepOutput.record_fields`).

Nothing is mutated: a state is replaced, never edited, so a step can be run and tested alone.
A step that decides the answer early (a route away, a refusal) sets :attr:`TurnState.draft`;
later steps see it and stand aside (:meth:`Step.applies`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.schema import NodeWithScore

from engines.retrieval.filters import NO_FILTER, MetadataFilter


@dataclass(frozen=True)
class Draft:
    """What the user will see: known ``text`` (a quote, a refusal, a decline) or ``messages`` for
    the answer LLM to write. ``refusal_reason`` set means the turn is refused."""

    text: str | None = None
    messages: tuple[ChatMessage, ...] = ()
    suffix: str = ""  # appended to what is written (the sources-disagree note)
    refusal_reason: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal_reason is not None

    @property
    def needs_llm(self) -> bool:
        return bool(self.messages)


@dataclass(frozen=True)
class TurnOptions:
    """A session's choices for its turns: the access filter, query transforms, router, the
    condense window (None: the pipeline's) and the tables the database road may read."""

    filter: MetadataFilter = NO_FILTER
    expander: Any = None  # engines.retrieval.transforms.QueryExpander | None
    router: Any = None  # engines.conversation.router.SemanticRouter | LLMRouter | None
    condense_window: int | None = None
    sql_tables: frozenset[str] | None = None  # the tables the SQL road may read (an API key's); None: all configured


@dataclass(frozen=True)
class TurnState:
    """One question on its way through the steps."""

    question: str
    language: str
    history: tuple[ChatMessage, ...] = ()
    rewrites: tuple[tuple[str, str], ...] = ()  # (question, query) of the session's earlier turns, newest first
    previous_sql: str = ""  # the statement that answered the session's previous turn on the data road
    options: TurnOptions = TurnOptions()
    query: str = ""
    nodes: tuple[NodeWithScore, ...] = ()  # the context, best first
    first_pass: tuple[NodeWithScore, ...] = ()  # the condensed query's own retrieval (what the gate judges)
    relevant_ids: frozenset[str] = frozenset()  # nodes relevant on their own raw scores (cited as sources)
    notes: tuple[str, ...] = ()  # for the answer prompt (e.g. an unresolved conflict)
    suffix: str = ""  # for the answer text (e.g. the sources-disagree line)
    draft: Draft | None = None
    outputs: tuple[tuple[str, "StepOutput"], ...] = ()

    def output(self, name: str) -> "StepOutput | None":
        """The output of the step called ``name`` in this turn, if it ran."""
        return next((out for step, out in self.outputs if step == name), None)

    def with_output(self, name: str, output: "StepOutput") -> "TurnState":
        return replace(output.apply(self), outputs=(*self.outputs, (name, output)))


@dataclass(frozen=True)
class StepOutput:
    """Base of every step's result."""

    llm_calls: int = 0
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def apply(self, state: TurnState) -> TurnState:
        """The state after this step; the default changes nothing."""
        return state

    def record_fields(self) -> dict[str, Any]:
        """TurnRecord fields this step sets."""
        return {}


@runtime_checkable
class Step(Protocol):
    """A step: a ``name`` (its timing key and its place in the registry) and ``run``."""

    name: ClassVar[str]

    def applies(self, state: TurnState) -> bool: ...

    def run(self, state: TurnState) -> StepOutput: ...


class BaseStep:
    """Default :meth:`applies`: only while no earlier step has decided the answer."""

    name: ClassVar[str] = "step"

    def applies(self, state: TurnState) -> bool:
        return state.draft is None

    def run(self, state: TurnState) -> StepOutput:  # pragma: no cover - abstract
        raise NotImplementedError
