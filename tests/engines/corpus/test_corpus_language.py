"""BM25's weight in the fusion follows the corpus's main language, recorded at ingest."""

from app.compose import build_pipeline, ingest_path, open_index
from app.config import load_settings
from engines.corpus.store import Manifest
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM
from engines.retrieval.hybrid import BM25_WEIGHT_BY_LANGUAGE, bm25_weight_for
from engines.text import detect_language, language_shares, passage_language
from tests.conftest import write_doc


def test_a_vietnamese_name_does_not_make_english_prose_vietnamese():
    assert passage_language("Nhân viên thử việc không được hưởng phép năm.") == "vi"
    assert passage_language("The report was written by Nguyễn Văn An for the board in 2021, "
                            "covering revenue, costs and the outlook for the next three years.") == "en"
    assert language_shares(["Phép năm 12 ngày.", "Annual leave is 12 days.", "Leave rules."]) == {"en": 0.6667,
                                                                                                "vi": 0.3333}
    assert language_shares([]) == {}


def test_weight_by_main_language_and_vietnamese_when_unknown():
    assert bm25_weight_for({"en": 0.9, "vi": 0.1}) == BM25_WEIGHT_BY_LANGUAGE["en"] == 0.5
    assert bm25_weight_for({"vi": 0.7, "en": 0.3}) == bm25_weight_for({}) == 1.0  # old index: today's weight


def _pipeline(settings, **overrides):
    models = Models(embed_model=HashEmbedding(), llm=ScriptedLLM(), condense_llm=ScriptedLLM())
    return build_pipeline(load_settings(**{**settings.model_dump(), **overrides}), models, open_index(settings))


def test_an_english_corpus_gets_the_english_weight_unless_one_is_set(settings, tmp_path):
    folder = tmp_path / "english"
    folder.mkdir()
    for i, topic in enumerate(["travel expenses", "remote work", "password rotation"]):
        write_doc(folder, f"doc-{i}", topic.title(), "2024-01-01", f"The policy on {topic} applies to all staff "
                  "and is reviewed every year by the operations team.")
    ingest_path(settings, folder)
    assert Manifest.load(settings.index_dir).languages == {"en": 1.0}
    assert _pipeline(settings, bm25_weight=None).retrieval.config.bm25_weight == 0.5
    assert _pipeline(settings, bm25_weight=1.0).retrieval.config.bm25_weight == 1.0


def test_the_bundled_kind_of_corpus_keeps_full_bm25(settings, corpus):
    ingest_path(settings, corpus)
    languages = Manifest.load(settings.index_dir).languages
    assert languages["vi"] > 0.5
    assert _pipeline(settings, bm25_weight=None).retrieval.config.bm25_weight == 1.0


def test_a_question_in_english_that_names_a_vietnamese_place_is_english():
    # the answer, its refusal and the condense prompt follow the question's language
    assert detect_language("Is the Hà Đông campus open on Sundays?") == "en"
    assert detect_language("Is the Chi cục Thuế office open on Saturdays?") == "en"
    # unmarked Vietnamese syllables that are also English words ("do", "in", "can", "to") are no frame
    assert detect_language("Hóa đơn do ai in?") == "vi"
    assert detect_language("Chi phí in thẻ ATM do ai chịu?") == "vi"
    # Vietnamese questions stay Vietnamese, with English words or without
    assert detect_language("Còn gói Bạc?") == "vi"
    assert detect_language("Gói SP299 có bao nhiêu data mỗi tháng?") == "vi"
    assert detect_language("Tôi muốn hỏi về app của công ty: có hỗ trợ iOS không?") == "vi"
    assert detect_language("What is the annual leave?") == "en"
