"""Abolition cues fire on phrases, never on question particles or look-alike words."""

from __future__ import annotations

import unicodedata

import pytest

from engines.conflicts.negation import (
    CUE_PHRASES,
    Cue,
    find_abolition_cues,
    has_abolition_cue,
)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("Quy định làm việc tại văn phòng không còn áp dụng nữa.", "không còn áp dụng"),
        ("Quy định này không còn được áp dụng.", "không còn áp dụng"),
        ("Quyết định cũ không còn hiệu lực.", "không còn hiệu lực"),
        ("Chương trình không còn khả dụng.", "không còn"),
        ("Nhân viên không bao giờ được chia sẻ mật khẩu.", "không bao giờ"),
        ("Khoản phụ cấp này đã bị bãi bỏ.", "bãi bỏ"),
        ("Chính sách đã được hủy bỏ.", "hủy bỏ"),
        ("Chính sách đã được huỷ bỏ.", "hủy bỏ"),  # old-style tone placement
        ("Dịch vụ ngừng hoạt động từ tháng 11.", "ngừng"),
        ("Ngân hàng ngưng áp dụng biểu phí cũ.", "ngưng"),
        ("Thông tư 05 hết hiệu lực.", "hết hiệu lực"),
        ("Quy chế được thay thế bởi Quy chế 2024.", "được thay thế bởi"),
        ("Quy chế bị thay thế bằng văn bản mới.", "được thay thế bởi"),
        ("Văn bản này thay thế cho Quyết định 12.", "thay thế cho"),
        ("KHÔNG CÒN ÁP DỤNG", "không còn áp dụng"),
        ("The office requirement no longer applies.", "no longer"),
        ("The Basic plan was discontinued.", "discontinued"),
        ("The licence is revoked.", "revoked"),
        ("This endpoint is deprecated.", "deprecated"),
        ("Never share your password.", "never"),
        ("The 2022 guide is superseded.", "superseded"),
        ("The fee was abolished in 2023.", "abolished"),
        ("Version 1.2 was replaced by version 2.0.", "replaced by"),
        ("The offer is withdrawn.", "is withdrawn"),
        ("The offer has been withdrawn.", "is withdrawn"),
        ("The rule was rescinded.", "rescinded"),
    ],
)
def test_cue_fires(text: str, phrase: str) -> None:
    cues = find_abolition_cues(text)
    assert [c.phrase for c in cues] == [phrase]
    assert has_abolition_cue(text)


@pytest.mark.parametrize(
    "text",
    [
        "Nhân viên có được nghỉ không?",
        "Chính sách này còn áp dụng không?",
        "Đã nộp chưa?",
        "Hồ sơ đã được duyệt chưa?",
        "Chất lượng không khí trong văn phòng tốt.",
        "Không gian làm việc mở.",
        "Không chỉ lương mà còn thưởng đều tăng.",
        "Không những thế, công ty còn hỗ trợ ăn trưa.",
        "Không ít nhân viên chọn làm việc từ xa.",
        "Công ty chưa từng áp dụng chính sách này.",
        "Công ty chưa bao giờ thu phí này.",
        "Công ty phát triển không ngừng.",
        "Người lao động được hưởng trợ cấp ngừng việc.",
        "Hơi nước ngưng tụ trên kính.",
        "Không còn nghi ngờ gì, đây là quy định đúng.",
        "Có được nghỉ không\nCòn lương thì tính sao?",
        "Not only salaries but also bonuses rose.",
        "Leave requests must be filed no longer than 30 days in advance.",
        "The company has never charged this fee.",
        "Nevertheless, the policy applies.",
        "The printer was replaced last week.",
        "",
    ],
)
def test_cue_does_not_fire(text: str) -> None:
    assert find_abolition_cues(text) == []
    assert not has_abolition_cue(text)


def test_longest_phrase_wins_and_span_points_into_text() -> None:
    text = "Yêu cầu này không còn áp dụng."
    (cue,) = find_abolition_cues(text)
    assert cue == Cue("không còn áp dụng", (12, 29))
    assert text[cue.span[0]:cue.span[1]] == "không còn áp dụng"


def test_several_cues_in_order() -> None:
    text = "Quy chế cũ bị bãi bỏ; API v1 is deprecated and no longer supported."
    assert [c.phrase for c in find_abolition_cues(text)] == ["bãi bỏ", "deprecated", "no longer"]


def test_decomposed_unicode_is_normalised() -> None:
    nfd = unicodedata.normalize("NFD", "Quy định không còn áp dụng.")
    assert [c.phrase for c in find_abolition_cues(nfd)] == ["không còn áp dụng"]


def test_word_boundaries() -> None:
    assert find_abolition_cues("neverland") == []
    assert find_abolition_cues("undeprecated") == []


def test_every_listed_phrase_is_canonical_lowercase() -> None:
    assert all(p == p.lower() for p in CUE_PHRASES)
    assert {"không còn áp dụng", "no longer", "hủy bỏ", "replaced by"} <= set(CUE_PHRASES)
