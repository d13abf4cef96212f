"""Read a corpus into plain ``SourceDocument`` records, validating everything before any write.

Two source forms: a folder of documents (.md/.txt with optional YAML front matter; .pdf, .docx and
.html converted to Markdown by ``converted``), or a BEIR-style .jsonl corpus (``_id``, ``title``,
``text``, other flat fields). Problems are collected for the whole corpus and raised together, each
naming its file or line, so one run shows them all and nothing is written to the index from a
half-valid corpus. A file with nothing worth indexing (an unsupported type, a scan, junk, an empty
file) is not a problem: it is left out and named with its reason in :attr:`Corpus.skipped`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from engines.corpus.anchors import Anchor
from engines.corpus.converted import CONVERTED_SUFFIXES, convert_document
from engines.corpus.screening import UNSUPPORTED, NotIngestible, Skipped, screen_bytes, screen_text, size_warnings
from engines.errors import DocumentError
from engines.io import read_jsonl
from engines.text import normalize

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + CONVERTED_SUFFIXES
_SUPPORTED_NAMES = ".md, .txt, .pdf, .docx, .html"
#: Fields every chunk carries, with defaults when the source leaves them out.
CORE_FIELDS = ("doc_id", "title", "date", "department", "active")
FlatValue = str | int | float | bool


@dataclass(frozen=True)
class SourceDocument:
    """One document as read from the source, before chunking."""

    doc_id: str
    text: str
    metadata: dict[str, FlatValue] = field(default_factory=dict)
    #: Where pages and sections begin in ``text`` (engines.corpus.anchors): each chunk names its own.
    anchors: tuple[Anchor, ...] = ()

    @property
    def content_hash(self) -> str:
        """Hash of text, metadata and anchors: a change in any re-ingests the document. (A document
        without anchors hashes as before they existed, so existing indexes stay current.)"""
        content: dict[str, Any] = {"text": self.text, "metadata": self.metadata}
        if self.anchors:
            content["anchors"] = [list(a) for a in self.anchors]
        payload = json.dumps(content, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


class Corpus(list[SourceDocument]):
    """The documents to ingest (a list, as callers have always had), plus the files left out with
    their reason and the warnings about files that went in but will chunk badly."""

    def __init__(self, docs: Iterable[SourceDocument] = (), skipped: Iterable[Skipped] = (),
                 warnings: Iterable[str] = ()) -> None:
        super().__init__(docs)
        self.skipped: list[Skipped] = list(skipped)
        self.warnings: list[str] = list(warnings)


def load_corpus(path: Path | str) -> Corpus:
    """Load a folder, one document or a .jsonl corpus; raise one DocumentError listing every problem."""
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"{path}: no such file or folder. Give a folder of documents ({_SUPPORTED_NAMES}) "
                            "or a .jsonl corpus.")
    if path.is_dir():
        corpus, problems = _load_folder(path)
    elif path.suffix == ".jsonl":
        docs, problems = _load_jsonl(path)
        corpus = Corpus(docs)
    elif path.suffix.lower() in SUPPORTED_SUFFIXES:
        corpus, problems = _load_files([path], path.parent)
    else:
        raise DocumentError(f"{path}: unsupported file type '{path.suffix}'. Use {_SUPPORTED_NAMES} "
                            "or a .jsonl corpus.")
    problems.extend(_duplicate_ids(corpus))
    if problems:
        raise DocumentError(
            f"{len(problems)} problem(s) in {path}; nothing was ingested:\n  " + "\n  ".join(problems)
        )
    if not corpus:
        left_out = "".join(f"\n  {s}" for s in corpus.skipped)
        raise DocumentError(f"{path}: no documents to ingest ({_SUPPORTED_NAMES} or a .jsonl corpus)."
                            + (f" Left out:{left_out}" if left_out else ""))
    return corpus


def corpus_hash(docs: Iterable[SourceDocument]) -> str:
    digest = hashlib.sha256()
    for doc in sorted(docs, key=lambda d: d.doc_id):
        digest.update(f"{doc.doc_id}:{doc.content_hash}\n".encode())
    return digest.hexdigest()[:16]


def _load_folder(folder: Path) -> tuple[Corpus, list[str]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    return _load_files(files, folder)


def _load_files(files: list[Path], root: Path) -> tuple[Corpus, list[str]]:
    corpus, problems = Corpus(), []
    for file in files:
        where = _relative(file, root)
        if file.suffix.lower() not in SUPPORTED_SUFFIXES:
            corpus.skipped.append(Skipped(where, UNSUPPORTED, _unsupported_detail(file)))
            continue
        try:
            doc, notes = read_document(file, root)
        except NotIngestible as exc:
            corpus.skipped.append(Skipped(where, exc.reason, exc.detail))
            continue
        except DocumentError as exc:
            problems.append(str(exc))
            continue
        corpus.append(doc)
        corpus.warnings.extend(f"{where}: {note}" for note in notes)
    for item in corpus.skipped:
        logger.info("left out %s", item)
    return corpus, problems


def read_document(file: Path, root: Path | None = None) -> tuple[SourceDocument, list[str]]:
    """Read one supported file, with warnings about it (a giant line, pages without text). Raises
    NotIngestible for a file to leave out, DocumentError for one to fix."""
    if file.suffix.lower() in CONVERTED_SUFFIXES:
        converted = convert_document(file)
        metadata = {"title": converted.title, "source": _relative(file, root)}
        if converted.date:
            metadata["date"] = converted.date
        doc = _with_defaults(file.stem, converted.text, _flat_metadata(metadata, where=str(file)),
                             anchors=converted.anchors)
        notes = converted.warnings
    else:
        doc = parse_text_document(file, root, skip_junk=True)
        notes = []
    return doc, notes + size_warnings(doc.text)


def _unsupported_detail(file: Path) -> str:
    if file.suffix.lower() == ".jsonl":
        return "a .jsonl corpus is ingested on its own: give its path instead of the folder's."
    kind = f"'{file.suffix}'" if file.suffix else "a file without an extension"
    return f"{kind} is not read. Save it as one of {_SUPPORTED_NAMES} to include it."


def _relative(file: Path, root: Path | None) -> str:
    return str(file.relative_to(root)) if root and file.is_relative_to(root) else str(file)


def parse_text_document(file: Path, root: Path | None = None, *, skip_junk: bool = False) -> SourceDocument:
    """Parse one .md/.txt file with optional YAML front matter. ``skip_junk``: an empty, binary or
    junk file raises NotIngestible (to be left out) rather than DocumentError."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{file}: cannot be read ({exc.strerror}). Check its permissions.") from exc
    if skip_junk and (junk := screen_bytes(raw)) is not None:
        raise junk
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
            front = yaml.load(content[4:end], Loader=_FrontMatterLoader) or {}
        except yaml.YAMLError as exc:
            line = getattr(getattr(exc, "problem_mark", None), "line", None)
            where = f"{file}:{line + 2}" if line is not None else str(file)
            raise DocumentError(f"{where}: malformed YAML front matter ({getattr(exc, 'problem', exc)}).") from exc
        if not isinstance(front, dict):
            raise DocumentError(f"{file}:2: front matter must be 'key: value' lines, got {type(front).__name__}.")
        body = content[end + 4:].lstrip("\n")
    if skip_junk and (junk := screen_text(body, source="its text")) is not None:
        raise junk
    if not body.strip():
        raise DocumentError(f"{file}: the document has no text. Add content or remove the file.")
    stem = file.stem
    relative = _relative(file, root)
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


@dataclass(frozen=True)
class _ImpossibleDate:
    """A front-matter value YAML reads as a date but the calendar has no such day (2024-02-30):
    kept as it was written, so the field it sits in can be named rather than a traceback raised."""

    text: str
    line: int  # 1-based, in the file
    reason: str


class _FrontMatterLoader(yaml.SafeLoader):
    """YAML's safe loader, except that an impossible date becomes an :class:`_ImpossibleDate`."""

    def construct_yaml_timestamp(self, node: yaml.Node) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:
            return _ImpossibleDate(str(node.value), node.start_mark.line + 2, str(exc))


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _FrontMatterLoader.construct_yaml_timestamp)


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
        if isinstance(value, _ImpossibleDate):
            raise DocumentError(f"{where}:{value.line}: field '{key}' is {value.text!r}, which is not a day of the "
                                f"calendar ({value.reason}). Write the real date as YYYY-MM-DD.")
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
            shape = re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(flat["date"])[:10])
            problem = f"not a day of the calendar ({exc})" if shape else "not a date"
            raise DocumentError(f"{where}: field 'date' is {flat['date']!r}, {problem}; "
                                "write it as YYYY-MM-DD.") from exc
        flat["date"] = str(flat["date"])[:10]
    if "active" in flat and not isinstance(flat["active"], bool):
        text = str(flat["active"]).strip().lower()
        if text not in ("true", "false", "yes", "no", "1", "0"):
            raise DocumentError(f"{where}: field 'active' is {flat['active']!r}; use true or false.")
        flat["active"] = text in ("true", "yes", "1")
    return flat


def _with_defaults(doc_id: str, text: str, metadata: dict[str, FlatValue],
                   anchors: tuple[Anchor, ...] = ()) -> SourceDocument:
    metadata = dict(metadata)
    metadata.pop("doc_id", None)
    metadata["doc_id"] = doc_id
    metadata.setdefault("title", doc_id)
    metadata.setdefault("date", "")
    metadata.setdefault("department", "")
    metadata.setdefault("active", True)
    return SourceDocument(doc_id=doc_id, text=text, metadata=metadata, anchors=anchors)


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
