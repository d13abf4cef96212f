import pytest

from app.ingest import main


def test_ingest_cli_reports_and_is_idempotent(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.setenv("TURNRAG_EMBEDDING", "fake")
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "7 added" in out
    assert "refusal gate: best cosine >= " in out and "off-topic questions" in out  # what ingest measured
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 0
    assert "7 unchanged" in capsys.readouterr().out


def test_ingest_cli_bad_file_exit_2_no_traceback(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.setenv("TURNRAG_EMBEDDING", "fake")
    (corpus / "broken.md").write_bytes(b"---\ntitle: [x\n---\nbody")
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "broken.md" in err and "malformed YAML" in err and "Traceback" not in err
    assert not (tmp_path / "i" / "manifest.json").exists()  # nothing written


def test_help_describes_the_corpus_forms(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "front matter" in capsys.readouterr().out


def test_ingest_says_what_retrieval_does_with_replaced_documents(tmp_path, corpus, capsys, monkeypatch):
    from tests.conftest import write_doc

    monkeypatch.setenv("TURNRAG_EMBEDDING", "fake")
    write_doc(corpus, "api-limits-v3", "API rate limits", "2024-09-01",
              "This policy replaces API rate limits (api-limits). The public API allows 800 requests per minute.",
              supersedes="[api-limits]")
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "1 document(s) replaced by a newer one, kept in retrieval" in out and "api-limits <- api-limits-v3" in out
    monkeypatch.setenv("TURNRAG_LEAVE_OUT_REPLACED", "true")
    assert main([str(corpus), "--index", str(tmp_path / "j"), "--quiet"]) == 0
    assert "left out of retrieval unless a question names one" in capsys.readouterr().out
