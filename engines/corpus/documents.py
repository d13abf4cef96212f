"""Read a corpus into plain ``SourceDocument`` records, validating everything before any write.

Two source forms: a folder of .md/.txt files with optional YAML front matter, or a BEIR-style
.jsonl corpus (``_id``, ``title``, ``text``, other flat fields). Problems are collected for the
whole corpus and raised together, each naming its file or line, so one run shows them all and
nothing is written to the index from a half-valid corpus.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from engines.errors import DocumentError
from engines.io import read_jsonl
from engines.text import normalize

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
#: Fields every chunk carries, with defaults when the source leaves them out.
CORE_FIELDS = ("doc_id", "title", "date", "department", "active")
FlatValue = str | int | float | bool


@dataclass(frozen=True)
class SourceDocument:
    """One document as read from the source, before chunking."""

    doc_id: str
    text: str
    metadata: dict[str, FlatValue] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Hash of text and metadata: a change in either re-ingests the document."""
        payload = json.dumps({"text": self.text, "metadata": self.metadata}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def load_corpus(path: Path | str) -> list[SourceDocument]:
    """Load a folder or a .jsonl corpus; raise one DocumentError listing every problem."""
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"{path}: no such file or folder. Give a folder of .md/.txt files or a .jsonl corpus.")
    if path.is_dir():
        docs, problems = _load_folder(path)
    elif path.suffix == ".jsonl":
        docs, problems = _load_jsonl(path)
    elif path.suffix in TEXT_SUFFIXES:
        docs, problems = _load_files([path], path.parent)
    else:
        raise DocumentError(f"{path}: unsupported file type '{path.suffix}'. Use .md, .txt or a .jsonl corpus.")
    problems.extend(_duplicate_ids(docs))
    if problems:
        raise DocumentError(
            f"{len(problems)} problem(s) in {path}; nothing was ingested:\n  " + "\n  ".join(problems)
        )
    if not docs:
        raise DocumentError(f"{path}: no .md, .txt or .jsonl documents found.")
    return docs


def corpus_hash(docs: Iterable[SourceDocument]) -> str:
    digest = hashlib.sha256()
    for doc in sorted(docs, key=lambda d: d.doc_id):
        digest.update(f"{doc.doc_id}:{doc.content_hash}\n".encode())
    return digest.hexdigest()[:16]


def _load_folder(folder: Path) -> tuple[list[SourceDocument], list[str]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    return _load_files(files, folder)


def _load_files(files: list[Path], root: Path) -> tuple[list[SourceDocument], list[str]]:
    docs, problems = [], []
    for file in files:
        try:
            docs.append(parse_text_document(file, root))
        except DocumentError as exc:
            problems.append(str(exc))
    return docs, problems


def parse_text_document(file: Path, root: Path | None = None) -> SourceDocument:
    """Parse one .md/.txt file with optional YAML front matter."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{file}: cannot be read ({exc.strerror}). Check its permissions.") from exc
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{file}: not UTF-8 (byte {exc.start}). Re-save it as UTF-8 "
            "(e.g. `iconv -f WINDOWS-1258 -t UTF-8`)."
        ) from exc
    content = normalize(content.replace("\r\n", "\n"))
    front: dict[str, Any] = {}
    body = content
    if content.startswith("---\n"):
        end = content.find("\n---", 4)
        if end == -1:
            raise DocumentError(f"{file}:1: front matter opened with '---' is never closed by a '---' line.")
        try:
            front = yaml.safe_load(content[4:end]) or {}
        except yaml.YAMLError as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", None)
            where = f"{file}:{line + 2}" if line is not None else str(file)
            raise DocumentError(f"{where}: malformed YAML front matter ({getattr(exc, 'problem', exc)}).") from exc
        if not isinstance(front, dict):
            raise DocumentError(f"{file}:2: front matter must be 'key: value' lines, got {type(front).__name__}.")
        body = content[end + 4:].lstrip("\n")
    if not body.strip():
        raise DocumentError(f"{file}: the document has no text. Add content or remove the file.")
    stem = file.stem
    relative = str(file.relative_to(root)) if root and file.is_relative_to(root) else str(file)
    metadata = _flat_metadata(front, where=str(file))
    metadata.setdefault("source", relative)
    return _with_defaults(str(front.get("doc_id") or stem), body, metadata)


def _load_jsonl(file: Path) -> tuple[list[SourceDocument], list[str]]:
    docs: list[SourceDocument] = []
    problems: list[str] = []
    try:
        lines = list(read_jsonl(file))
    except DocumentError as exc:  # unreadable or not UTF-8: one problem among the corpus's others
        return [], [str(exc)]
    for line in lines:
        where = line.where
        if line.error is not None:
            problems.append(f"{where}: not valid JSON ({line.error.removeprefix('invalid JSON ').strip('()')}).")
            continue
        row = line.value
        if not isinstance(row, dict):
            problems.append(f"{where}: expected a JSON object with '_id' and 'text'.")
            continue
        doc_id = row.get("_id", row.get("doc_id"))
        text = row.get("text")
        if not doc_id:
            problems.append(f"{where}: missing '_id'.")
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: '_id' {doc_id!r} has no 'text'.")
            continue
        extra = {k: v for k, v in row.items() if k not in ("_id", "doc_id", "text")}
        try:
            metadata = _flat_metadata(extra, where=where)
        except DocumentError as exc:
            problems.append(str(exc))
            continue
        docs.append(_with_defaults(str(doc_id), normalize(text), metadata))
    return docs, problems


#: Fields that hold a list of document ids; stored comma-separated (Chroma metadata is flat).
ID_LIST_FIELDS = ("supersedes",)


def split_ids(value: str) -> tuple[str, ...]:
    """A stored id-list field (``supersedes``) back as doc ids."""
    return tuple(i.strip() for i in str(value).split(",") if i.strip())


def _flat_metadata(fields: dict[str, Any], where: str) -> dict[str, FlatValue]:
    """Chroma stores flat scalars only: dates become ISO strings, a list of doc ids (``supersedes``)
    a comma-separated string, other nested values are refused."""
    flat: dict[str, FlatValue] = {}
    for key, value in fields.items():
        if value is None:
            continue
        if key in ID_LIST_FIELDS:
            ids = value if isinstance(value, list) else str(value).split(",")
            if not all(isinstance(i, (str, int)) for i in ids):
                raise DocumentError(f"{where}: field '{key}' must list document ids, e.g. [doc-a, doc-b].")
            value = ",".join(str(i).strip() for i in ids if str(i).strip())
        if isinstance(value, (dt.date, dt.datetime)):
            value = value.isoformat()[:10]
        if isinstance(value, str):
            value = normalize(value)
        if not isinstance(value, (str, int, float, bool)):
            raise DocumentError(
                f"{where}: field '{key}' is a {type(value).__name__}; metadata must be flat "
                "(text, number, true/false or a date)."
            )
        flat[str(key)] = value
    if "date" in flat:
        try:
            dt.date.fromisoformat(str(flat["date"])[:10])
        except ValueError as exc:
            raise DocumentError(f"{where}: field 'date' is {flat['date']!r}; write it as YYYY-MM-DD.") from exc
        flat["date"] = str(flat["date"])[:10]
    if "active" in flat and not isinstance(flat["active"], bool):
        text = str(flat["active"]).strip().lower()
        if text not in ("true", "false", "yes", "no", "1", "0"):
            raise DocumentError(f"{where}: field 'active' is {flat['active']!r}; use true or false.")
        flat["active"] = text in ("true", "yes", "1")
    return flat


def _with_defaults(doc_id: str, text: str, metadata: dict[str, FlatValue]) -> SourceDocument:
    metadata = dict(metadata)
    metadata.pop("doc_id", None)
    metadata["doc_id"] = doc_id
    metadata.setdefault("title", doc_id)
    metadata.setdefault("date", "")
    metadata.setdefault("department", "")
    metadata.setdefault("active", True)
    return SourceDocument(doc_id=doc_id, text=text, metadata=metadata)


def _duplicate_ids(docs: list[SourceDocument]) -> list[str]:
    seen: dict[str, str] = {}
    problems = []
    for doc in docs:
        where = str(doc.metadata.get("source", doc.doc_id))
        if doc.doc_id in seen:
            problems.append(f"{where}: doc_id '{doc.doc_id}' is also used by {seen[doc.doc_id]}; doc_ids must be unique.")
        else:
            seen[doc.doc_id] = where
    return problems
