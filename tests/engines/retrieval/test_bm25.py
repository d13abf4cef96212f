import unicodedata

import pytest
from llama_index.core.schema import TextNode

from engines.retrieval.bm25 import TokenizerSettings, VietEnBM25Retriever, tokenize


def ids(results):
    return [r.node.node_id for r in results]


@pytest.mark.parametrize("code", ["4.2", "sku-4471", "05/td", "8,5%", "1.500.000"])
def test_codes_stay_whole(code):
    text = "Điều 4.2: thẻ SKU-4471, mẫu 05/TD, lãi suất 8,5%/năm, phí 1.500.000 đồng."
    assert code in tokenize(text)


def test_compound_codes_also_emit_parts_but_numbers_do_not():
    tokens = tokenize("SKU-4471 và điều 4.2")
    assert {"sku", "4471"} <= set(tokens)
    assert "4" not in tokens and "2" not in tokens


def test_nfc_and_nfd_give_the_same_tokens():
    nfc = "Hà Nội được nghỉ"
    nfd = unicodedata.normalize("NFD", nfc)
    assert tokenize(nfd) == tokenize(nfc) == ["hà", "nội", "được", "nghỉ"]


def test_no_english_stemming_and_one_letter_words_kept():
    tokens = tokenize("Nhân viên ở chi nhánh; policies and requests")
    assert "ở" in tokens
    assert "policies" in tokens and "requests" in tokens  # a stemmer would give "polici"/"request"


def _nodes():
    texts = {
        "a": "Thẻ tín dụng SKU-4471 có phí thường niên 200.000 đồng.",
        "b": "Thẻ tín dụng SKU-4417 có phí thường niên 500.000 đồng.",
        "c": "Điều 4.2 quy định quy đổi ngày phép chưa nghỉ thành tiền.",
        "d": "Điều 4.3 quy định nghỉ ốm.",
        "e": "Nhân viên ở Hà Nội được hỗ trợ gửi xe.",
    }
    return [TextNode(id_=k, text=v) for k, v in texts.items()]


@pytest.mark.parametrize("query, expected", [
    ("SKU-4471 phí bao nhiêu?", "a"),
    ("sku-4417", "b"),
    ("điều 4.2 nói gì?", "c"),
    ("nhân viên ở Hà Nội", "e"),
])
def test_exact_code_query_ranks_the_right_chunk_first(query, expected):
    retriever = VietEnBM25Retriever(_nodes(), similarity_top_k=5)
    assert ids(retriever.retrieve(query))[0] == expected


def test_no_zero_score_filler():
    retriever = VietEnBM25Retriever(_nodes(), similarity_top_k=5)
    results = retriever.retrieve("SKU-4471")
    assert all(r.score > 0 for r in results)
    assert retriever.retrieve("xyzzy qwerty") == []


def test_reload_restores_tokenizer_settings(tmp_path):
    settings = TokenizerSettings(stopwords=("có",))
    original = VietEnBM25Retriever(_nodes(), tokenizer_settings=settings, similarity_top_k=5)
    original.persist(str(tmp_path / "bm25"))
    reloaded = VietEnBM25Retriever.from_persist_dir(str(tmp_path / "bm25"), similarity_top_k=5)
    assert reloaded.tokenizer_settings == settings
    for query in ("SKU-4471", "điều 4.2", "ở Hà Nội"):
        before = [(r.node.node_id, round(r.score, 6)) for r in original.retrieve(query)]
        after = [(r.node.node_id, round(r.score, 6)) for r in reloaded.retrieve(query)]
        assert after == before and after


def test_reload_without_settings_file_is_refused(tmp_path):
    VietEnBM25Retriever(_nodes()).persist(str(tmp_path / "bm25"))
    (tmp_path / "bm25" / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="re-run"):
        VietEnBM25Retriever.from_persist_dir(str(tmp_path / "bm25"))
