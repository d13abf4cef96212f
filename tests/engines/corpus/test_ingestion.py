"""Ingestion: idempotent, replaces changed documents, prunes, survives being killed midway."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from app.compose import ingest_path, open_pipeline
from app.config import load_settings
from engines.corpus.store import fetch_chunks, get_collection, iter_chunks, load_bm25, open_chroma
from engines.errors import IndexUnavailable
from tests.conftest import write_doc


def stored(settings):
    collection = get_collection(open_chroma(settings.index_dir), settings.collection, create=False)
    return collection, list(iter_chunks(collection))


def test_fetch_chunks_by_id_with_or_without_vectors(settings, corpus):
    ingest_path(settings, corpus)
    collection, chunks = stored(settings)
    ids = [chunks[1]["id"], "no-such-chunk", chunks[0]["id"]]
    full = fetch_chunks(collection, ids)
    texts = fetch_chunks(collection, ids, include_embeddings=False)
    assert {c["id"] for c in full} == {chunks[0]["id"], chunks[1]["id"]}  # an unknown id is skipped
    assert all(len(c["embedding"]) > 0 for c in full)
    assert [(c["id"], c["text"]) for c in texts] == [(c["id"], c["text"]) for c in full]
    assert all("embedding" not in c for c in texts)


def test_reingest_skips_unchanged_and_replaces_changed(settings, corpus):
    first = ingest_path(settings, corpus)
    assert len(first.added) == 7 and first.total_chunks == 7
    again = ingest_path(settings, corpus)
    assert not again.changed and len(again.unchanged) == 7 and again.chunks_written == 0

    write_doc(corpus, "card-sku-4471", "Thẻ tín dụng Vàng", "2024-06-01",
              "Thẻ tín dụng mã SKU-4471 có phí thường niên 300.000 đồng từ tháng 6.")
    third = ingest_path(settings, corpus)
    assert third.updated == ["card-sku-4471"] and third.chunks_written == 1
    _, chunks = stored(settings)
    texts = [c["text"] for c in chunks if c["metadata"]["doc_id"] == "card-sku-4471"]
    assert texts == ["Thẻ tín dụng mã SKU-4471 có phí thường niên 300.000 đồng từ tháng 6."]
    bm25 = load_bm25(settings.index_dir)
    assert bm25.num_docs == 7
    top = bm25.retrieve("SKU-4471 300.000")[0]
    assert top.node.metadata["doc_id"] == "card-sku-4471" and "300.000" in top.node.text


def test_every_chunk_keeps_document_metadata(settings, corpus):
    write_doc(corpus, "policy-x", "Chính sách X", "2023-11-15", "Nội dung. " * 400, department="nhan-su",
              active="false", owner="Phòng Nhân sự")
    ingest_path(settings, corpus)
    _, chunks = stored(settings)
    policy = [c["metadata"] for c in chunks if c["metadata"]["doc_id"] == "policy-x"]
    assert len(policy) > 1  # long enough to be split
    for meta in policy:
        assert meta["title"] == "Chính sách X" and meta["date"] == "2023-11-15"
        assert meta["department"] == "nhan-su" and meta["active"] is False and meta["owner"] == "Phòng Nhân sự"


def test_prune_removes_documents_gone_from_the_source(settings, corpus):
    ingest_path(settings, corpus)
    (corpus / "api-limits.md").unlink()
    kept = ingest_path(settings, corpus)
    assert kept.removed == [] and kept.total_chunks == 7  # without --prune nothing is deleted
    pruned = ingest_path(settings, corpus, prune=True)
    assert pruned.removed == ["api-limits"] and pruned.total_chunks == 6
    assert all(n.node.metadata["doc_id"] != "api-limits" for n in load_bm25(settings.index_dir).retrieve("API requests per minute"))


def test_index_built_with_another_embedding_model_is_refused(settings, corpus, tmp_path):
    ingest_path(settings, corpus)
    other = settings.model_copy(update={"embedding": "minilm"})
    with pytest.raises(IndexUnavailable, match="built with embedding model 'hash-256'"):
        open_pipeline(other)
    with pytest.raises(IndexUnavailable, match="built with embedding model"):
        ingest_path(other, corpus)


def test_missing_index_gives_a_clear_error(tmp_path):
    settings = load_settings(index_dir=tmp_path / "nothing", embedding="fake", llm="fake", log_dir=None)
    with pytest.raises(IndexUnavailable, match="python -m app.ingest"):
        open_pipeline(settings)


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from app.config import load_settings
    from app.compose import ingest_path
    from engines.models.fakes import HashEmbedding

    class SlowHash(HashEmbedding):
        def _get_text_embeddings(self, texts):
            time.sleep(0.15)
            return [self._vector(t) for t in texts]

    settings = load_settings(index_dir=sys.argv[1], embedding="fake", llm="fake", log_dir=None)
    progress = Path(sys.argv[3])
    def on_progress(done, total):
        progress.write_text(f"{done} {total}")
    ingest_path(settings, sys.argv[2], embed_model=SlowHash(), on_progress=on_progress)
""")


def _many_docs(folder: Path, version: str, n: int = 40) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        body = f"Tài liệu số {i} phiên bản {version}. " + " ".join(f"Điều {i}.{k} quy định nội dung {version} mục {k}." for k in range(60))
        write_doc(folder, f"doc-{i:03d}", f"Tài liệu {i}", "2024-01-01", body)


def _kill_midway(index: Path, corpus: Path, progress: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(index), str(corpus), str(progress)], env=env)
    deadline = time.time() + 120
    while time.time() < deadline:
        if progress.exists():
            done, total = map(int, progress.read_text().split() or [0, 1])
            if total and 0.3 * total <= done < total:
                break
        if child.poll() is not None:
            pytest.fail("the ingest finished before it could be killed; make the corpus bigger")
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()


def _assert_consistent(settings, expected_version: str, n: int = 40) -> None:
    collection, chunks = stored(settings)
    ids = [c["id"] for c in chunks]
    assert len(ids) == len(set(ids)), "duplicated chunks"
    per_doc = Counter(c["metadata"]["doc_id"] for c in chunks)
    assert sorted(per_doc) == [f"doc-{i:03d}" for i in range(n)], "a document was lost"
    for chunk in chunks:
        assert f"phiên bản {expected_version}" in chunk["text"] or f"nội dung {expected_version}" in chunk["text"]
        assert per_doc[chunk["metadata"]["doc_id"]] == chunk["metadata"]["n_chunks"]
    assert load_bm25(settings.index_dir).num_docs == collection.count()


@pytest.mark.parametrize("first_run_complete", [False, True])
def test_killed_ingest_leaves_a_consistent_index_after_rerun(tmp_path, first_run_complete):
    settings = load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None)
    corpus = tmp_path / "corpus"
    _many_docs(corpus, "v1")
    if first_run_complete:
        ingest_path(settings, corpus)
        _many_docs(corpus, "v2")  # every document changes, then the update is killed
    _kill_midway(settings.index_dir, corpus, tmp_path / "progress")
    rerun = ingest_path(settings, corpus)
    assert rerun.unchanged or rerun.repaired or first_run_complete  # work done before the kill is kept
    _assert_consistent(settings, "v2" if first_run_complete else "v1")
    again = ingest_path(settings, corpus)
    assert not again.changed


def test_a_second_ingest_into_the_same_index_is_refused_while_one_runs(settings, corpus):
    from engines.corpus.ingestion import writer_lock

    ingest_path(settings, corpus)
    before = get_collection(open_chroma(settings.index_dir), settings.collection).count()
    with writer_lock(settings.index_dir):  # another ingest holds the index
        with pytest.raises(IndexUnavailable, match=rf"being written by another ingest \(pid {os.getpid()}"):
            ingest_path(settings, corpus, prune=True)
    assert get_collection(open_chroma(settings.index_dir), settings.collection).count() == before
    assert ingest_path(settings, corpus).unchanged  # released: the next run goes ahead
