"""The answer step: a grounded prompt over the kept passages, and a stream filter that turns the
model's explicit "not found" signal into a plain refusal before the user sees any of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.schema import MetadataMode, NodeWithScore

from engines.answering.refusal import NOT_FOUND_MARKER, refusal_message, starts_with_not_found

SYSTEM_PROMPT = """\
You answer questions for employees using ONLY the numbered document excerpts given by the user.
Rules:
- Answer in {language_name}, briefly (1-4 sentences), with the exact numbers, codes and conditions from the excerpts.
- If the excerpts do not contain the answer, reply with exactly: {marker}
- Never invent facts that are not in the excerpts.
- If a note says the sources disagree, state both values and say the sources disagree."""

LANGUAGE_NAMES = {"vi": "Vietnamese (tiếng Việt)", "en": "English"}


def format_context(nodes: list[NodeWithScore], max_chars: int = 6000) -> str:
    """Numbered excerpts with title and date, cut to a character budget (small context windows)."""
    parts, used = [], 0
    for i, nws in enumerate(nodes, start=1):
        meta = nws.node.metadata
        header = f"[{i}] {meta.get('title', '')} (doc_id: {meta.get('doc_id', '')}"
        header += f", date: {meta['date']})" if meta.get("date") else ")"
        body = nws.node.get_content(metadata_mode=MetadataMode.NONE).strip()
        block = f"{header}\n{body}"
        if used + len(block) > max_chars and parts:
            break
        parts.append(block[: max_chars - used] if used + len(block) > max_chars else block)
        used += len(block)
    return "\n\n".join(parts)


def build_messages(question: str, query: str, nodes: list[NodeWithScore], language: str,
                   notes: list[str] | None = None, max_context_chars: int = 6000) -> list[ChatMessage]:
    system = SYSTEM_PROMPT.format(language_name=LANGUAGE_NAMES.get(language, "English"), marker=NOT_FOUND_MARKER)
    user = f"Document excerpts:\n{format_context(nodes, max_context_chars)}\n\n"
    if notes:
        user += "Notes:\n" + "\n".join(f"- {n}" for n in notes) + "\n\n"
    if query != question:
        user += f"Question (with its conversation context): {query}\n"
    user += f"Question: {question}\nAnswer:"
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=user)]


@dataclass
class AnswerFilter:
    """Buffers the first characters of a streamed answer until it is clear whether the model said
    NOT_FOUND; then either passes the stream through or replaces it with a refusal."""

    language: str
    suffix: str = ""
    text: str = ""
    not_found: bool = False
    _buffer: str = ""
    _decided: bool = False
    _emitted: list[str] = field(default_factory=list)

    def feed(self, delta: str) -> str:
        """Return what may be shown now for this delta."""
        if self._decided:
            if self.not_found:
                return ""
            self.text += delta
            return delta
        self._buffer += delta
        probe = self._buffer.lstrip().lstrip("*_`\"'[")
        if len(probe) < len(NOT_FOUND_MARKER) and NOT_FOUND_MARKER.startswith(probe.upper()):
            return ""  # still could be the marker
        self._decided = True
        if starts_with_not_found(self._buffer):
            self.not_found = True
            self.text = refusal_message(self.language)
            return self.text
        self.text = self._buffer
        return self._buffer

    def finish(self) -> str:
        """Flush anything still buffered and the suffix (e.g. the sources-disagree note)."""
        out = ""
        if not self._decided:
            self._decided = True
            if starts_with_not_found(self._buffer) or not self._buffer.strip():
                self.not_found = True
                self.text = refusal_message(self.language)
            else:
                self.text = self._buffer
            out = self.text
        if self.suffix and not self.not_found:
            out += self.suffix
            self.text += self.suffix
        return out
