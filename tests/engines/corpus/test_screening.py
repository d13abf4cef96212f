"""Files worth leaving out and texts worth a warning, decided from bytes and text alone."""

from engines.corpus.screening import BINARY, EMPTY, screen_bytes, screen_text, size_warnings


def test_nul_bytes_and_empty_files_are_left_out():
    assert screen_bytes(b"\x00" * 4096).reason == BINARY
    assert "4,096 NUL byte" in screen_bytes(b"\x00" * 4096).detail
    assert screen_bytes(b"  \n\t").reason == EMPTY
    assert screen_bytes("Nghỉ phép năm".encode()) is None


def test_mostly_unreadable_text_is_junk_but_vietnamese_is_not():
    assert screen_text("\x01\x02\x03\ufffd" * 50 + "abc").reason == BINARY
    assert screen_text("(cid:12)(cid:7)(cid:44) " * 40).reason == BINARY  # glyphs without a Unicode map
    assert screen_text("Nhân viên thử việc không được hưởng phép năm.\n\tĐiều 2.") is None
    assert screen_text(" \n ").reason == EMPTY


def test_giant_line_and_giant_text_are_warned_not_silent():
    [line] = size_warnings("a" * 20_001)
    assert "20,001 characters without a line break" in line
    assert size_warnings("Đoạn văn.\n" * 2_000) == []  # 20,000 characters in short lines
    [big] = size_warnings("Đoạn văn.\n" * 300, max_text=1_000)
    assert "3,000 characters of text" in big
