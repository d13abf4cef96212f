"""PDF, DOCX and HTML made by real tools (tests/fixtures/documents, make_fixtures.py) come out as the
Markdown the pipeline reads: Vietnamese intact, tables as rows, headings and lists, title and date."""

import unicodedata
from pathlib import Path

import pytest

from engines.corpus.converted import convert_document
from engines.corpus.screening import NO_TEXT_LAYER, UNREADABLE, NotIngestible
from engines.errors import DocumentError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "documents"


def page_of(converted, phrase):
    """The page number anchored at or before where ``phrase`` starts."""
    at = converted.text.index(phrase)
    return max((a for a in converted.anchors if a[1] == "page" and a[0] <= at), key=lambda a: a[0])[2]


def test_chromium_pdf_keeps_diacritics_table_rows_headings_and_pages():
    pdf = convert_document(FIXTURES / "quy-che-nghi-phep.pdf")
    assert pdf.text == unicodedata.normalize("NFC", pdf.text)
    assert "kể cả nhân viên làm việc tại chi nhánh Đà Nẵng và Cần Thơ." in pdf.text  # one line again
    assert "## Điều 2. Số ngày nghỉ phép" in pdf.text and "\n1. Nhân viên chính thức được nghỉ 12 ngày" in pdf.text
    assert "| Từ 5 đến dưới 10 năm | 13 ngày |" in pdf.text
    assert pdf.text.index("Điều 1.") < pdf.text.index("Điều 2.") < pdf.text.index("Điều 3.")  # reading order
    assert page_of(pdf, "Điều 2. Số ngày") == 1 and page_of(pdf, "| Từ 10 năm trở lên | 14 ngày |") == 2
    assert pdf.title == "Quy chế nghỉ phép năm 2024"
    assert pdf.date == "2024-03-15"  # written in its opening lines, not the day it was printed


def test_pandoc_docx_keeps_heading_numbered_list_and_table():
    docx = convert_document(FIXTURES / "huong-dan-vay.docx")
    assert "## Điều 1. Hồ sơ cần nộp" in docx.text
    assert "1. Giấy đề nghị vay vốn theo mẫu 05/TD.\n2. Căn cước công dân" in docx.text
    assert "| 12 tháng đầu | 8,5%/năm |" in docx.text
    assert docx.title == "Hướng dẫn hồ sơ vay mua nhà" and docx.date == "2024-05-20"
    assert (docx.text.index("## Điều 2."), "section", "Điều 2. Lãi suất ưu đãi") in docx.anchors


def test_html_page_drops_navigation_and_reads_title_and_date_meta():
    page = convert_document(FIXTURES / "quy-che-nghi-phep.html")
    assert "Trang chủ" not in page.text  # <nav>
    assert page.text.startswith("# Quy chế nghỉ phép năm 2024")
    assert "- Ngày lễ, Tết không tính vào số ngày phép năm." in page.text
    assert "| Dưới 5 năm | 12 ngày |" in page.text
    assert page.title == "Quy chế nghỉ phép năm 2024" and page.date == "2024-03-15"


def test_html_title_falls_back_to_first_heading_and_site_suffix_is_dropped(tmp_path):
    bare = tmp_path / "bare.html"
    bare.write_text("<html><body><h2>Biểu phí thẻ</h2><p>Phí thường niên 200.000 đồng.</p></body></html>",
                    encoding="utf-8")
    assert convert_document(bare).title == "Biểu phí thẻ" and convert_document(bare).date == ""
    site = tmp_path / "site.html"
    site.write_text("<html><head><title>Biểu phí thẻ | Ngân hàng ABC</title></head>"
                    "<body><h1>Biểu phí thẻ</h1><p>Phí.</p></body></html>", encoding="utf-8")
    assert convert_document(site).title == "Biểu phí thẻ"


def test_scanned_pdf_without_text_layer_is_not_ingestible():
    with pytest.raises(NotIngestible) as info:
        convert_document(FIXTURES / "ban-scan.pdf")
    assert info.value.reason == NO_TEXT_LAYER and "OCR" in info.value.detail


def test_damaged_pdf_and_docx_are_unreadable(tmp_path):
    for name in ("broken.pdf", "broken.docx"):
        (tmp_path / name).write_bytes(b"this is not a real file")
        with pytest.raises(NotIngestible) as info:
            convert_document(tmp_path / name)
        assert info.value.reason == UNREADABLE


def test_impossible_date_meta_names_file_field_and_value(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<html><head><meta name='date' content='2024-02-30'></head><body><p>Nội dung.</p></body></html>",
                    encoding="utf-8")
    with pytest.raises(DocumentError) as info:
        convert_document(page)
    message = str(info.value)
    assert str(page) in message and "<meta name='date'>" in message and "'2024-02-30'" in message
    assert "YYYY-MM-DD" in message


def test_pdf_partly_scanned_warns_about_pages_without_text(tmp_path):
    pdfium = pytest.importorskip("pypdfium2")  # installed with pdfplumber
    merged = pdfium.PdfDocument.new()
    for name in ("quy-che-nghi-phep.pdf", "ban-scan.pdf"):
        merged.import_pages(pdfium.PdfDocument(FIXTURES / name))
    mixed = tmp_path / "mixed.pdf"
    merged.save(mixed)
    converted = convert_document(mixed)
    assert "Điều 3." in converted.text
    assert converted.warnings and "page(s) 3 of 3 have no text layer" in converted.warnings[0]


def test_pdf_table_without_vertical_rules_and_fallback_font_heading():
    """pandoc's HTML printed by Chromium: a table ruled only above and below, and headings whose
    Vietnamese letters the serif font lacks (drawn in a fallback font, their boxes set higher)."""
    pdf = convert_document(FIXTURES / "sources" / "huong-dan-vay.pdf")
    assert "| Từ tháng thứ 13 | Lãi suất cơ sở cộng biên độ 3,5% |" in pdf.text
    assert "\n## Điều 1. Hồ sơ cần nộp\n" in pdf.text and "ướ ẫ" not in pdf.text
    assert "- Khách hàng trả nợ trước hạn chịu phí 2% số tiền trả trước." in pdf.text  # a disc drawn as a path
    assert "Tài liệu này hướng dẫn khách hàng chuẩn bị hồ sơ vay mua nhà ở tại Ngân hàng." in pdf.text  # prose, no table


def test_decomposed_and_legacy_encoded_vietnamese_comes_out_nfc(tmp_path):
    """macOS copy-paste writes NFD; old Vietnamese pages are Windows-1258, which composes tones by
    combining marks. Both must match what a user types (NFC)."""
    sentence = "Nhân viên thử việc được nghỉ phép năm."
    nfd = tmp_path / "nfd.html"
    nfd.write_text(f"<html><body><p>{unicodedata.normalize('NFD', sentence)}</p></body></html>", encoding="utf-8")
    legacy = tmp_path / "legacy.html"
    legacy.write_bytes(b"<html><head><meta charset='windows-1258'></head><body><p>" + cp1258(sentence) + b"</p></body></html>")
    for page in (nfd, legacy):
        assert sentence in convert_document(page).text


TONES = "\u0300\u0301\u0303\u0309\u0323"  # grave, acute, tilde, hook, dot below: combining marks in Windows-1258


def cp1258(text: str) -> bytes:
    """Text as Windows-1258 writes Vietnamese: letters with their shape (â, ư, ơ…) precomposed, tones combining."""
    out = b""
    for ch in text:
        parts = unicodedata.normalize("NFD", ch)
        base = unicodedata.normalize("NFC", "".join(c for c in parts if c not in TONES))
        out += (base + "".join(c for c in parts if c in TONES)).encode("cp1258")
    return out


def test_pdf_bold_titles_at_body_size_name_their_section(tmp_path):
    """Word-style regulations mark "Điều 5. ..." by weight, not size: printed to PDF by Chromium here."""
    import shutil
    import subprocess

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    page = tmp_path / "bold.html"
    page.write_text("<html><meta charset='utf-8'><body style='font: 12pt \"DejaVu Serif\"'>"
                    "<p><b>Điều 5. Hiệu lực thi hành</b></p><p>Quy chế có hiệu lực kể từ ngày ký ban hành.</p>"
                    "<p>Câu có <b>vài chữ đậm</b> ở giữa vẫn là thân bài.</p></body></html>", encoding="utf-8")
    pdf = tmp_path / "bold.pdf"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", page.as_uri()], check=True, capture_output=True, timeout=120)
    converted = convert_document(pdf)
    assert "**Điều 5. Hiệu lực thi hành**\n\nQuy chế có hiệu lực" in converted.text
    assert "\nCâu có vài chữ đậm ở giữa vẫn là thân bài." in converted.text
    assert [a[2] for a in converted.anchors if a[1] == "section"] == ["Điều 5. Hiệu lực thi hành"]


def test_running_headers_and_footers_are_dropped_but_alike_content_is_not():
    from engines.corpus.pdf import drop_running_lines

    pages = ["Quy chế – Trang 1/3\n\nĐiều 1.\n\n| Tổng | 12 |", "Quy chế – Trang 2/3\n\nĐiều 2.\n\n| Tổng | 14 |",
             "Quy chế – Trang 3/3\n\nĐiều 3."]
    assert drop_running_lines(pages) == ["Điều 1.\n\n| Tổng | 12 |", "Điều 2.\n\n| Tổng | 14 |", "Điều 3."]
    assert drop_running_lines(["Một trang\n\n1"]) == ["Một trang\n\n1"]  # one page repeats nothing


def test_chromium_print_header_and_footer_stay_out_of_the_text(tmp_path):
    import shutil
    import subprocess

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    pdf = tmp_path / "with-header.pdf"  # Chromium's default: date and title above, file URL and "1/2" below
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--print-to-pdf={pdf}",
                    (FIXTURES / "quy-che-nghi-phep.html").as_uri()], check=True, capture_output=True, timeout=120)
    converted = convert_document(pdf)
    assert "file://" not in converted.text and "1/2" not in converted.text
    assert converted.text.count("Quy chế nghỉ phép năm 2024") == 1  # the heading, not the header's title
    assert converted.text.endswith("- Phép chưa nghỉ hết được chuyển sang quý I năm sau.")


def test_framed_boxes_in_one_column_are_paragraphs_not_a_table(tmp_path):
    import shutil
    import subprocess

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    page = tmp_path / "framed.html"
    page.write_text("<html><meta charset='utf-8'><body style='font: 12pt \"DejaVu Sans\"'>"
                    "<table border=1 style='border-collapse: collapse'><tr><td>Lưu ý</td></tr>"
                    "<tr><td>Hồ sơ nộp trước ngày 15 hằng tháng.</td></tr></table></body></html>", encoding="utf-8")
    pdf = tmp_path / "framed.pdf"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", page.as_uri()], check=True, capture_output=True, timeout=120)
    assert convert_document(pdf).text == "Lưu ý\n\nHồ sơ nộp trước ngày 15 hằng tháng."
