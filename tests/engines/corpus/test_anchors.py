"""Each chunk names the page it starts on and the heading above it."""

from engines.corpus.anchors import chunk_anchors, heading_anchors

TEXT = "Lời mở đầu.\n\n## Điều 1. Phạm vi\n\nÁp dụng cho nhân viên.\n\n## Điều 2. Phép năm\n\n12 ngày phép."


def test_headings_become_section_anchors():
    assert [a[2] for a in heading_anchors(TEXT)] == ["Điều 1. Phạm vi", "Điều 2. Phép năm"]
    assert heading_anchors("#hashtag không phải tiêu đề") == []
    bold = "**Điều 5. Hiệu lực**\n\nCâu có **chữ đậm** ở giữa.\n**Lưu ý:**"
    assert [a[2] for a in heading_anchors(bold)] == ["Điều 5. Hiệu lực", "Lưu ý:"]  # a bold line titles a section


def test_chunks_take_the_page_and_section_in_force_where_they_start():
    page_two = TEXT.index("## Điều 2")
    anchors = [(0, "page", 1), (page_two, "page", 2), *heading_anchors(TEXT)]
    chunks = ["Lời mở đầu.", "## Điều 1. Phạm vi\n\nÁp dụng", "cho nhân viên.", "## Điều 2. Phép năm\n\n12 ngày phép."]
    assert chunk_anchors(TEXT, chunks, anchors) == [
        {"page": 1}, {"page": 1, "section": "Điều 1. Phạm vi"}, {"page": 1, "section": "Điều 1. Phạm vi"},
        {"page": 2, "section": "Điều 2. Phép năm"}]


def test_overlapping_chunks_are_found_in_order():
    text = "Điều 1. A b c.\n\n## Mục\n\nĐiều 1. A b c."  # the same words twice: the second chunk is the later one
    [first, second] = chunk_anchors(text, ["Điều 1. A b c.", "Điều 1. A b c."], heading_anchors(text))
    assert first == {} and second == {"section": "Mục"}
