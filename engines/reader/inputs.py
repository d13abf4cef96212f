"""What the reader reads: one definition of its two inputs, shared by training and the product.

The first input is the conversation, question first (so truncation cuts history, never the ask):
the standalone rewrite when there is one, the user's own words, then the previous user question and
the start of its answer. A terse follow-up ("Còn khách đoàn thì sao?") is then judged in context
even when the rewrite failed. The second input is a passage or a clause with its document's title.
"""

from __future__ import annotations

from collections.abc import Sequence

SEPARATOR = " | "
#: Characters of the previous answer the reader sees: enough to know what was being talked about.
PREVIOUS_ANSWER_CHARS = 160


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def conversation_text(question: str, rewrite: str | None = None,
                      history: Sequence[tuple[str, str]] = ()) -> str:
    """The reader's first input. ``history``: (role, text) messages, oldest first, roles "user" /
    "assistant"; only the last exchange is read."""
    parts = []
    if rewrite and not _same(rewrite, question):
        parts.append(rewrite.strip())
    parts.append(question.strip())
    previous_user = next((text for role, text in reversed(history) if role == "user"), None)
    if previous_user is not None:
        parts.append(previous_user.strip())
        last = history[-1]
        if last[0] == "assistant" and last[1].strip():
            parts.append(last[1].strip()[:PREVIOUS_ANSWER_CHARS])
    return SEPARATOR.join(p for p in parts if p)


def passage_text(text: str, title: str = "") -> str:
    """The reader's second input: the title, then the text (once, if the text starts with it)."""
    title, text = title.strip(), text.strip()
    return f"{title}\n{text}" if title and not text.startswith(title) else text
