"""What a session may choose from: the access filter, routers and query transforms, and their defaults.

Built once by the composition root and held by the pipeline; a session narrows them per turn
(:class:`~engines.steps.base.TurnOptions`), never widens them. It lives below both the pipeline
and the session so that neither has to know the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.errors import ConfigError
from engines.retrieval.filters import MetadataFilter
from engines.retrieval.transforms import ExpansionConfig, QueryExpander
from engines.steps.base import TurnOptions

ROUTER_KINDS = ("semantic", "llm", "off")


@dataclass(frozen=True)
class Choices:
    """The filters, routers and transforms a session may use, and their defaults."""

    base_filter: MetadataFilter = field(default_factory=MetadataFilter)
    routers: Mapping[str, Any] = field(default_factory=dict)  # kind -> router ("off" -> None)
    default_router: str = "off"
    expansion: ExpansionConfig | None = None

    def filter(self, extra: MetadataFilter | Mapping[str, Any] | None = None) -> MetadataFilter:
        """The configured filter, narrowed by ``extra`` (fields narrow: the stricter wins; letting
        superseded documents in is a choice either side may make)."""
        base = self.base_filter
        if extra is None:
            return base
        extra = extra if isinstance(extra, MetadataFilter) else MetadataFilter.parse(extra)
        return base.merged(extra).with_inactive(base.include_inactive or extra.include_inactive)

    def router(self, kind: str | None = None) -> Any:
        kind = kind or self.default_router
        if kind not in ROUTER_KINDS:
            raise ConfigError(f"router {kind!r}: use {', '.join(ROUTER_KINDS)}")
        return None if kind == "off" else self.routers.get(kind)

    def expander(self, transforms: Sequence[str] | None = None, activation: str | None = None) -> QueryExpander | None:
        if self.expansion is None:
            return None
        return self.expansion.expander(transforms, activation)

    def defaults(self) -> TurnOptions:
        return TurnOptions(filter=self.filter(), expander=self.expander(), router=self.router())
