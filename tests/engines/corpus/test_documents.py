"""Bad input gets one clear message naming the file or line, and nothing is ingested."""

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
    ("empty.md", b"", "has no text"),
    ("only-front.md", b"---\ntitle: x\n---\n", "has no text"),
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
    (tmp_path / "a.md").write_bytes(b"")
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
