"""A team's folder as it is: PDF, DOCX and HTML go in with their page or section, the rest is named."""

import shutil
from pathlib import Path

import pytest

from app.compose import ingest_path
from app.config import load_settings
from engines.corpus.store import get_collection, iter_chunks, open_chroma

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "documents"


@pytest.fixture
def team_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "team"
    folder.mkdir()
    shutil.copy(FIXTURES / "quy-che-nghi-phep.pdf", folder)
    shutil.copy(FIXTURES / "huong-dan-vay.docx", folder)
    shutil.copy(FIXTURES / "quy-che-nghi-phep.html", folder / "trang-noi-quy.html")
    shutil.copy(FIXTURES / "ban-scan.pdf", folder)
    (folder / "nul.txt").write_bytes(b"\x00" * 4096)
    (folder / "bang-tinh.xlsx").write_bytes(b"PK\x03\x04")
    (folder / "dump.txt").write_text("Dữ liệu xuất " * 2_000, encoding="utf-8")
    return folder


@pytest.fixture
def small_chunks(tmp_path: Path):
    """Chunks small enough that a two-page PDF spans several."""
    return load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None, chunk_size=80)


def stored_chunks(settings) -> list[dict]:
    return list(iter_chunks(get_collection(open_chroma(settings.index_dir), settings.collection, create=False)))


def test_chunks_name_their_page_or_section_and_skipped_files_get_nothing(small_chunks, team_folder):
    report = ingest_path(small_chunks, team_folder)
    assert sorted(report.added) == ["dump", "huong-dan-vay", "quy-che-nghi-phep", "trang-noi-quy"]
    assert {s.path: s.reason for s in report.skipped} == {
        "ban-scan.pdf": "no text layer", "nul.txt": "binary or junk", "bang-tinh.xlsx": "unsupported type"}
    assert [w.split(":")[0] for w in report.warnings] == ["dump.txt"]

    chunks = stored_chunks(small_chunks)
    assert {c["metadata"]["doc_id"] for c in chunks} == set(report.added)  # nothing for the skipped files
    pdf = [c for c in chunks if c["metadata"]["doc_id"] == "quy-che-nghi-phep"]
    table = next(c for c in pdf if "| Từ 10 năm trở lên | 14 ngày |" in c["text"])
    assert table["metadata"]["page"] == 2 and table["metadata"]["section"] == "Điều 3. Bảng quy đổi thâm niên"
    assert {c["metadata"]["page"] for c in pdf} == {1, 2}
    assert pdf[0]["metadata"]["title"] == "Quy chế nghỉ phép năm 2024" and pdf[0]["metadata"]["date"] == "2024-03-15"
    docx = [c for c in chunks if c["metadata"]["doc_id"] == "huong-dan-vay"]
    rates = next(c for c in docx if "| 12 tháng đầu | 8,5%/năm |" in c["text"])
    assert rates["metadata"]["section"] == "Điều 2. Lãi suất ưu đãi" and "page" not in rates["metadata"]
    assert any("Đà Nẵng và Cần Thơ" in c["text"] for c in chunks if c["metadata"]["doc_id"] == "trang-noi-quy")


def test_reingest_skips_unchanged_documents_of_every_format(small_chunks, team_folder):
    ingest_path(small_chunks, team_folder)
    again = ingest_path(small_chunks, team_folder)
    assert not again.changed and again.chunks_written == 0
    assert sorted(again.unchanged) == ["dump", "huong-dan-vay", "quy-che-nghi-phep", "trang-noi-quy"]
    assert len(again.skipped) == 3  # still named on every run
