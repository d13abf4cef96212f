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
