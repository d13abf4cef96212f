"""Bad input gets one clear message naming the file or line, and nothing is ingested."""

import hashlib
import json

import pytest

from engines.corpus.documents import load_corpus, parse_text_document
from engines.errors import DocumentError


def test_front_matter_fields_become_metadata(tmp_path):
    path = tmp_path / "leave-x.md"
    path.write_text("---\ntitle: Phép X\ndate: 2024-01-15\nactive: false\nowner: HR\n---\nNội dung.\n", encoding="utf-8")
    doc = parse_text_document(path, tmp_path)
    assert doc.doc_id == "leave-x"  # defaults to the file stem
    assert doc.metadata["title"] == "Phép X" and doc.metadata["date"] == "2024-01-15"
    assert doc.metadata["active"] is False and doc.metadata["owner"] == "HR" and doc.metadata["department"] == ""
    assert doc.text == "Nội dung.\n"


def test_plain_text_without_front_matter(tmp_path):
    (tmp_path / "note.txt").write_text("Chỉ có nội dung.", encoding="utf-8")
    [doc] = load_corpus(tmp_path)
    assert doc.doc_id == "note" and doc.metadata["title"] == "note" and doc.metadata["active"] is True


@pytest.mark.parametrize("name, content, message", [
    ("latin1.md", "Nghỉ phép".encode("cp1258", errors="replace") + b"\xff\xfe", "not UTF-8"),
    ("unclosed.md", b"---\ntitle: x\nNo closing line", "never closed"),
    ("bad-yaml.md", b"---\ntitle: [unclosed\n---\nbody", "malformed YAML"),
    ("bad-date.md", b"---\ndate: 15/11/2023\n---\nbody", "YYYY-MM-DD"),
    ("nested.md", b"---\ntags:\n  a: 1\n---\nbody", "must be flat"),
])
def test_bad_files_are_named_with_the_problem(tmp_path, name, content, message):
    (tmp_path / "good.md").write_text("Tốt.", encoding="utf-8")
    (tmp_path / name).write_bytes(content)
    with pytest.raises(DocumentError) as err:
        load_corpus(tmp_path)
    assert name in str(err.value) and message in str(err.value) and "nothing was ingested" in str(err.value)


def test_all_problems_are_listed_at_once(tmp_path):
    (tmp_path / "a.md").write_bytes(b"---\ndate: 15/11/2023\n---\nbody")
    (tmp_path / "b.md").write_bytes(b"\xff\xfe")
    with pytest.raises(DocumentError, match="2 problem"):
        load_corpus(tmp_path)


def test_jsonl_corpus_and_its_errors_name_the_line(tmp_path):
    good = tmp_path / "c.jsonl"
    good.write_text('{"_id": "d1", "title": "T", "text": "Văn bản.", "lang": "vi"}\n\n{"_id": "d2", "text": "Hai."}\n', encoding="utf-8")
    docs = load_corpus(good)
    assert [d.doc_id for d in docs] == ["d1", "d2"] and docs[0].metadata["lang"] == "vi"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": \n{"text": "no id"}\n', encoding="utf-8")
    with pytest.raises(DocumentError) as err:
        load_corpus(bad)
    assert f"{bad}:2: not valid JSON" in str(err.value) and f"{bad}:3: missing '_id'" in str(err.value)


def test_duplicate_doc_ids_are_refused(tmp_path):
    (tmp_path / "a.md").write_text("---\ndoc_id: same\n---\nA", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\ndoc_id: same\n---\nB", encoding="utf-8")
    with pytest.raises(DocumentError, match="doc_id 'same' is also used"):
        load_corpus(tmp_path)


def test_missing_path(tmp_path):
    with pytest.raises(DocumentError, match="no such file or folder"):
        load_corpus(tmp_path / "nope")


def test_supersedes_lists_document_ids(tmp_path):
    from engines.corpus.documents import load_corpus

    (tmp_path / "new.md").write_text("---\ndoc_id: new\nsupersedes: [old-a, old-b]\n---\nBody text here.\n", encoding="utf-8")
    (tmp_path / "one.md").write_text("---\nsupersedes: old-c\n---\nBody text here.\n", encoding="utf-8")
    docs = {d.doc_id: d for d in load_corpus(tmp_path)}
    assert docs["new"].metadata["supersedes"] == "old-a,old-b" and docs["one"].metadata["supersedes"] == "old-c"
    (tmp_path / "bad.md").write_text("---\nsupersedes: [{a: 1}]\n---\nBody text here.\n", encoding="utf-8")
    import pytest

    from engines.errors import DocumentError
    with pytest.raises(DocumentError, match="bad.md.*supersedes.*document ids"):
        load_corpus(tmp_path)


def test_impossible_front_matter_date_names_file_line_field_and_value(tmp_path):
    (tmp_path / "good.md").write_text("Tốt.", encoding="utf-8")
    (tmp_path / "feb.md").write_text("---\ntitle: Phép\ndate: 2024-02-30\n---\nNội dung.\n", encoding="utf-8")
    with pytest.raises(DocumentError) as err:
        load_corpus(tmp_path)
    message = str(err.value)
    assert f"{tmp_path / 'feb.md'}:3: field 'date' is '2024-02-30'" in message
    assert "not a day of the calendar" in message and "YYYY-MM-DD" in message and "nothing was ingested" in message


def test_files_not_ingested_are_named_with_their_reason(tmp_path):
    (tmp_path / "good.md").write_text("# Phép năm\n\nNhân viên được nghỉ 12 ngày.", encoding="utf-8")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "only-front.md").write_bytes(b"---\ntitle: x\n---\n")
    (tmp_path / "nul.txt").write_bytes(b"\x00" * 2048)
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "giant.txt").write_text("Dòng rất dài " * 3_000, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert sorted(d.doc_id for d in corpus) == ["giant", "good"]
    reasons = {s.path: s.reason for s in corpus.skipped}
    assert reasons == {"empty.md": "empty", "only-front.md": "empty", "nul.txt": "binary or junk",
                       "photo.png": "unsupported type"}
    assert "photo.png: unsupported type — '.png' is not read" in [str(s) for s in corpus.skipped][3]
    [warning] = corpus.warnings
    assert warning.startswith("giant.txt: a line of 39,000 characters without a line break")


def test_a_folder_with_nothing_to_ingest_says_why(tmp_path):
    (tmp_path / "nul.txt").write_bytes(b"\x00\x00")
    with pytest.raises(DocumentError) as err:
        load_corpus(tmp_path)
    assert "no documents to ingest" in str(err.value) and "nul.txt: binary or junk" in str(err.value)


def test_md_without_front_matter_is_read_as_before(tmp_path):
    """Markdown and text files keep their doc_id, title and hash: existing indexes stay current."""
    (tmp_path / "note.md").write_text("# Tiêu đề\n\nNội dung.", encoding="utf-8")
    [doc] = load_corpus(tmp_path)
    assert doc.metadata["title"] == "note" and doc.anchors == ()
    before = json.dumps({"text": doc.text, "metadata": doc.metadata}, sort_keys=True, ensure_ascii=False)
    assert doc.content_hash == hashlib.sha256(before.encode("utf-8")).hexdigest()[:16]  # the hash before anchors
