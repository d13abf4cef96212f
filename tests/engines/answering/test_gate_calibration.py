"""The refusal gate calibrates itself on each corpus at ingest, with no labels."""

import json
import math

import pytest

from app.compose import build_pipeline, gate_threshold, ingest_path, new_engine, open_index
from app.config import load_settings
from engines.answering.gate_calibration import (
    MAX_WORDS,
    MIN_WORDS,
    OFF_TOPIC_PROBES,
    GateCalibration,
    calibrate,
    sample_sentences,
)
from engines.corpus.store import Manifest
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM
from tests.conftest import write_doc

CHUNKS = [(f"doc-{i}#0", f"Tiêu đề {i}\nCâu thứ nhất của tài liệu số {i} nói về một quy định. "
           f"Câu thứ hai của tài liệu số {i} nêu một thời hạn khác. Ngắn.") for i in range(12)]


class CompressedEmbedding(HashEmbedding):
    """Hashed vectors pulled toward one shared direction: unrelated texts score ~0.8, as with e5,
    where a threshold calibrated for another scale means nothing."""

    def _vector(self, text: str) -> list[float]:
        vec = super()._vector(text)
        vec = [v + (1.5 if i == 0 else 0.0) for i, v in enumerate(vec)]
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec]


def test_sentences_are_a_deterministic_sample_of_the_corpus():
    first = sample_sentences(CHUNKS, n=10, seed="abc")
    assert first == sample_sentences(list(reversed(CHUNKS)), n=10, seed="abc")  # order of the store does not matter
    assert first != sample_sentences(CHUNKS, n=10, seed="other")
    assert len(first) == 10 and len(set(first)) == 10
    texts = " ".join(t for _, t in CHUNKS)
    assert all(s in texts and MIN_WORDS <= len(s.split()) <= MAX_WORDS for s in first)  # "Ngắn." is too short
    assert len(sample_sentences(CHUNKS, n=100, seed="abc")) == 24  # every sentence once, then it stops


def test_one_sentence_per_chunk_before_any_chunk_gives_two():
    picked = sample_sentences(CHUNKS, n=12, seed="s")
    assert sorted(int(s.split("số ")[1].split()[0]) for s in picked) == list(range(12))


def test_the_threshold_is_the_budget_quantile_of_the_pseudo_queries():
    calibration = GateCalibration(tuple(i / 100 for i in range(100)), (0.1, 0.2, 0.9))
    assert calibration.min_vector(0.05) == pytest.approx(0.04)
    assert calibration.min_vector(0.0) == 0.0
    assert calibration.off_topic_refused(0.5) == pytest.approx(2 / 3)
    assert GateCalibration.from_dict(json.loads(json.dumps(calibration.to_dict()))) == calibration
    assert GateCalibration.from_dict({}) is None  # an index ingested before calibration existed
    with pytest.raises(ValueError, match="budget"):
        calibration.min_vector(1.0)


def test_calibrate_scores_pseudo_queries_and_probes_separately():
    scores = {"a": 0.9, "b": 0.7}
    calibration = calibrate(["a", "b"], lambda texts: [scores.get(t, 0.1) for t in texts], probes=["x", "y"])
    assert calibration.pseudo_scores == (0.7, 0.9) and calibration.off_topic_scores == (0.1, 0.1)


class CountingEmbedding(HashEmbedding):
    queries: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.queries += 1
        return super()._get_query_embedding(query)


def test_ingest_records_the_calibration_and_measures_again_only_when_the_corpus_changes(settings, corpus):
    embed = CountingEmbedding()
    ingest_path(settings, corpus, embed_model=embed)
    gate = Manifest.load(settings.index_dir).gate
    assert len(gate["pseudo_scores"]) > 0 and len(gate["off_topic_scores"]) == len(OFF_TOPIC_PROBES)
    measured = embed.queries
    assert measured >= len(OFF_TOPIC_PROBES)

    ingest_path(settings, corpus, embed_model=embed)  # unchanged: nothing to measure
    assert embed.queries == measured and Manifest.load(settings.index_dir).gate == gate

    write_doc(corpus, "extra", "Quy định mới", "2024-07-01",
              "Nhân viên làm việc từ xa phải báo cáo tiến độ cho trưởng phòng vào mỗi sáng thứ Hai hằng tuần.")
    ingest_path(settings, corpus, embed_model=embed)
    assert embed.queries > measured and Manifest.load(settings.index_dir).gate != gate


def test_an_index_from_before_calibration_gets_one_on_the_next_ingest(settings, corpus):
    ingest_path(settings, corpus)
    manifest = Manifest.load(settings.index_dir)
    manifest.gate = {}
    manifest.save(settings.index_dir)
    report = ingest_path(settings, corpus)
    assert not report.changed and Manifest.load(settings.index_dir).gate["pseudo_scores"]


def test_the_explicit_threshold_wins_then_the_corpus_then_the_model(settings, corpus):
    ingest_path(settings, corpus)
    manifest = Manifest.load(settings.index_dir)
    measured = GateCalibration.from_dict(manifest.gate)
    unset = load_settings(**{**settings.model_dump(), "refusal_min_vector": None})
    assert gate_threshold(settings, manifest) == 0.25
    assert gate_threshold(unset, manifest) == measured.min_vector(unset.refusal_budget)
    assert gate_threshold(unset.model_copy(update={"refusal_budget": 0.5}), manifest) == measured.min_vector(0.5)
    model = unset.calibrated("refusal_min_vector")
    assert gate_threshold(unset.model_copy(update={"refusal_calibration": "model"}), manifest) == model
    assert gate_threshold(unset, Manifest(**{**manifest.__dict__, "gate": {}})) == model


def test_auto_takes_the_registered_value_where_one_was_measured(settings, corpus):
    ingest_path(settings, corpus)
    manifest = Manifest.load(settings.index_dir)
    measured = GateCalibration.from_dict(manifest.gate).min_vector(0.05)
    uncalibrated = load_settings(**{**settings.model_dump(), "refusal_min_vector": None})  # the fake embedder
    assert uncalibrated.refusal_calibration == "auto" and gate_threshold(uncalibrated, manifest) == measured
    e5 = uncalibrated.model_copy(update={"embedding": "e5-small"})
    assert gate_threshold(e5, manifest) == 0.83  # labelled calibration exists for e5-small
    assert gate_threshold(e5.model_copy(update={"refusal_calibration": "corpus"}), manifest) == measured


def _answer(pipeline, question):
    engine = new_engine(pipeline)
    response = engine.chat(question, chat_history=[])
    return engine.last_record, response.response


def test_an_off_topic_question_is_refused_on_an_embedder_nobody_calibrated(settings, corpus):
    """Unrelated texts score ~0.8 here; the registry's guess for an unknown model (0.3) lets everything
    through, the corpus's own calibration refuses the off-topic question and answers the corpus's."""
    embed = CompressedEmbedding()
    ingest_path(settings, corpus, embed_model=embed)
    index = open_index(settings)
    models = Models(embed_model=embed, llm=ScriptedLLM(), condense_llm=ScriptedLLM())
    base = {**settings.model_dump(), "refusal_min_vector": None, "answer_mode": "extract"}
    corpus_gate = build_pipeline(load_settings(**base), models, index)  # auto: the fake embedder has no calibration
    model_gate = build_pipeline(load_settings(**{**base, "refusal_calibration": "model"}), models, index)
    off_topic = "Which wax should I use on a surfboard in cold water?"
    on_topic = "Thẻ tín dụng mã SKU-4471 có phí thường niên bao nhiêu?"
    assert _answer(corpus_gate, off_topic)[0].refusal_reason == "no_relevant_documents"
    assert _answer(model_gate, off_topic)[0].refusal_reason is None  # the feature switched off: answered
    record, text = _answer(corpus_gate, on_topic)
    assert record.refusal_reason is None and "200.000" in text
