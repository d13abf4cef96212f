"""Errors a user can act on. Each message names the file, line or setting and what to do.

The CLI edge (app/) catches :class:`TurnragError` and prints the message without a traceback;
anything else is a bug and keeps its traceback.
"""


class TurnragError(Exception):
    """Base for failures caused by input, configuration or environment, not by our code."""


class ConfigError(TurnragError):
    """A setting has a bad value or a required one is missing."""


class DocumentError(TurnragError):
    """A source document or corpus line cannot be read."""


class IndexUnavailable(TurnragError):
    """The index on disk is missing, incomplete or built with another model."""


class ModelUnavailable(TurnragError):
    """An LLM or embedding model cannot be loaded or reached."""


def is_unreachable(exc: BaseException) -> bool:
    """A server that is down or too slow: a refused connection or a timeout, as the standard
    library, httpx, the openai client and chromadb name them."""
    name = type(exc).__name__
    return isinstance(exc, (ConnectionError, TimeoutError)) or "Connect" in name or "Timeout" in name
