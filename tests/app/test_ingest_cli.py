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


def test_ingest_cli_lists_files_not_ingested_with_reasons_and_warnings(tmp_path, corpus, capsys, monkeypatch):
    import shutil
    from pathlib import Path

    monkeypatch.setenv("TURNRAG_EMBEDDING", "fake")
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
    shutil.copy(fixtures / "quy-che-nghi-phep.pdf", corpus)
    shutil.copy(fixtures / "ban-scan.pdf", corpus)
    (corpus / "nul.txt").write_bytes(b"\x00" * 512)
    (corpus / "dump.txt").write_text("x" * 25_000, encoding="utf-8")
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "9 added" in out  # the 7 Markdown files, the PDF and the dump
    assert "2 file(s) not ingested (nothing was written for them):" in out
    assert "  ban-scan.pdf: no text layer — " in out and "OCR" in out
    assert "  nul.txt: binary or junk — 512 NUL byte(s)" in out
    assert "warning: dump.txt: a line of 25,000 characters without a line break" in out


def test_ingest_cli_impossible_date_is_one_line_naming_file_and_field(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.setenv("TURNRAG_EMBEDDING", "fake")
    (corpus / "feb.md").write_text("---\ntitle: Phép\ndate: 2024-02-30\n---\nNội dung.\n", encoding="utf-8")
    assert main([str(corpus), "--index", str(tmp_path / "i"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "feb.md:3: field 'date' is '2024-02-30'" in err and "Traceback" not in err
    assert not (tmp_path / "i" / "manifest.json").exists()


def test_help_names_the_formats_and_skip_reasons(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert ".pdf" in out and ".docx" in out and ".html" in out and "no text layer" in out
