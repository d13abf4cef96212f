"""The OpenAI chat-completions request as clients send it, and errors in the shape they parse.

Clients differ: several send ``content`` as a list of parts (``[{"type": "text", "text": ...}]``),
gateways add ``stream_options``, ``user``, ``seed``. Text parts are joined; anything else is named
in a 400. Parameters are checked against OpenAI's ranges, and every failure is
``{"error": {"message", "type", "param", "code"}}``, which the official clients turn into
``BadRequestError`` with those fields.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field

#: The most ``max_tokens`` a request may ask for (the packaged model's window is far smaller).
MAX_TOKENS = 131_072
TEXT_PART_TYPES = frozenset({"text", "input_text"})


class ProtocolError(Exception):
    """A request OpenAI would refuse: status, message, type, the parameter and a code."""

    def __init__(self, status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code


def error_body(message: str, kind: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | list[dict[str, Any]] | None = ""

    def text(self, where: str) -> str:
        """The message's text: a string, or its text parts joined by a newline."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        texts = []
        for i, part in enumerate(self.content):
            kind = part.get("type")
            if kind not in TEXT_PART_TYPES or not isinstance(part.get("text"), str):
                raise ProtocolError(400, f"{where}.content[{i}]: only text parts are read here (got type {kind!r}); "
                                    "send the text as {\"type\": \"text\", \"text\": \"...\"}",
                                    param=f"{where}.content", code="unsupported_content_type")
            texts.append(part["text"])
        return "\n".join(texts)


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """What the endpoint reads; OpenAI's other fields (``user``, ``seed``, ``logit_bias``...) are
    accepted and ignored, as a retrieval service does not sample freely."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[Message] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    max_completion_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    n: int | None = Field(None, ge=1, le=1, description="one answer per turn")
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    stop: str | list[str] | None = None
    filters: dict[str, Any] | None = None  # narrows the key's filter (turnrag extension)

    def texts(self) -> list[tuple[str, str]]:
        """(role, text) of every message, content parts joined."""
        return [(m.role, m.text(f"messages[{i}]")) for i, m in enumerate(self.messages)]


_CODES = {
    "greater_than_equal": "below_min_value", "greater_than": "below_min_value",
    "less_than_equal": "above_max_value", "less_than": "above_max_value",
    "missing": "missing_required_parameter", "json_invalid": "invalid_json", "too_short": "too_short",
}


def validation_error(exc: RequestValidationError) -> ProtocolError:
    """A pydantic failure as OpenAI reports one: 400, the parameter's path, a code."""
    first = exc.errors()[0] if exc.errors() else {}
    path = [str(p) for p in first.get("loc", ()) if p != "body"]
    param = ".".join(path) or None
    kind = str(first.get("type", ""))
    code = _CODES.get(kind, "invalid_type" if kind.endswith(("_type", "_parsing")) else "invalid_value")
    given = f" (got {first['input']!r})" if "input" in first and not isinstance(first["input"], (dict, list)) else ""
    return ProtocolError(400, f"invalid request: {param or 'body'}: {first.get('msg', 'malformed')}{given}",
                         param=param, code=code)
