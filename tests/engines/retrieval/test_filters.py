"""Metadata filters: parsing with errors that name the field, and no leak on either retriever."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from app.compose import build_models, ingest_path, open_pipeline
from app.config import load_settings
from engines.errors import ConfigError
from engines.models.fakes import HashEmbedding, ScriptedLLM
from engines.retrieval.filters import MetadataFilter
from tests.conftest import engine_over, write_doc

DEPARTMENTS = ("tin-dung", "nhan-su", "cong-nghe", "the")
DATES = ("2022-05-01", "2023-03-01", "2023-11-15", "2024-01-01", "2024-07-01", "")
WORDS = "phí lãi suất nghỉ phép hợp đồng thẻ vay mua nhà API giới hạn quy định điều 4.2 SKU-4471 mẫu 05/TD".split()


def test_parse_accepts_scalars_lists_dates_and_inactive() -> None:
    flt = MetadataFilter.parse({"department": ["tin-dung", "the"], "date_from": "2024-01-01", "inactive": "on"})
    assert flt.matches({"department": "the", "date": "2024-03-01", "active": False})
    assert not flt.matches({"department": "nhan-su", "date": "2024-03-01"})
    assert not flt.matches({"department": "the", "date": "2023-12-31"})
    assert not flt.matches({"department": "the", "date": ""})  # a date range excludes undated documents


def test_inactive_documents_are_excluded_unless_asked_for() -> None:
    assert not MetadataFilter().matches({"active": False})
    assert MetadataFilter().matches({"active": True})
    assert MetadataFilter.parse({"active": False}).matches({"active": False})
    assert not MetadataFilter.parse({"active": False}).matches({"active": True})


@pytest.mark.parametrize("spec, named", [
    ({"date_from": "01/02/2024"}, "filters.date_from"),
    ({"department": {"nested": 1}}, "filters.department"),
    ({"inactive": "maybe"}, "filters.inactive"),
    ({"date_from": "2024-05-01", "date_to": "2024-01-01"}, "after"),
])
def test_bad_filters_name_the_field(spec: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        MetadataFilter.parse(spec)


def test_repl_syntax_and_merging() -> None:
    session = MetadataFilter.parse_assignments("department=tin-dung|the date_from=2023-01-01")
    narrowed = session.merged(MetadataFilter.parse({"department": "the", "date_to": "2024-06-30"}))
    assert dict(narrowed.equals) == {"department": ("the",)}
    assert (narrowed.date_from, narrowed.date_to) == ("2023-01-01", "2024-06-30")
    with pytest.raises(ConfigError, match="field=value"):
        MetadataFilter.parse_assignments("tin-dung")


def test_chroma_where_carries_the_equality_conditions() -> None:
    where = MetadataFilter.parse({"department": ["a", "b"]}).chroma_where()
    assert where == {"$and": [{"active": {"$ne": False}}, {"department": {"$in": ["a", "b"]}}]}
    assert MetadataFilter(include_inactive=True).chroma_where() is None


# ------------------------------------------------------------------ leak test on a real index


@pytest.fixture(scope="module")
def mixed_pipeline(tmp_path_factory: pytest.TempPathFactory):
    """80 documents over 4 departments, dates and active flags, sharing vocabulary on purpose."""
    root = tmp_path_factory.mktemp("filters")
    corpus = root / "corpus"
    corpus.mkdir()
    rng = random.Random(7)
    for i in range(80):
        body = " ".join(rng.choice(WORDS) for _ in range(30))
        write_doc(corpus, f"doc-{i:02d}", f"Tài liệu {i}", DATES[i % len(DATES)] or "2024-02-02", body,
                  department=DEPARTMENTS[i % len(DEPARTMENTS)], active=str(i % 7 != 0).lower())
    # undated documents: front matter without a date
    for i in range(80, 86):
        (corpus / f"doc-{i}.md").write_text(
            f"---\ndoc_id: doc-{i}\ntitle: Không ngày {i}\ndepartment: {DEPARTMENTS[i % 4]}\n---\n"
            + " ".join(rng.choice(WORDS) for _ in range(30)) + "\n", encoding="utf-8")
    settings = load_settings(index_dir=root / "index", embedding="fake", llm="fake", log_dir=None,
                             refusal_min_vector=-1.0, top_k=10, candidate_k=40, conflicts=False)
    ingest_path(settings, corpus, embed_model=HashEmbedding())
    return open_pipeline(settings, build_models(settings, llm=ScriptedLLM(), embed_model=HashEmbedding()))


filters_strategy = st.fixed_dictionaries(
    {},
    optional={
        "department": st.one_of(st.sampled_from(DEPARTMENTS), st.lists(st.sampled_from(DEPARTMENTS), min_size=1, max_size=3)),
        "date_from": st.sampled_from([d for d in DATES if d]),
        "date_to": st.sampled_from([d for d in DATES if d]),
        "include_inactive": st.booleans(),
    },
).filter(lambda f: not (f.get("date_from") and f.get("date_to") and f["date_from"] > f["date_to"]))


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=filters_strategy, top_k=st.integers(1, 40), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
def test_no_chunk_outside_the_filter_ever_comes_back(mixed_pipeline, spec, top_k, words) -> None:
    flt = mixed_pipeline.choices.filter(spec)
    query = " ".join(words)
    retriever = mixed_pipeline.retriever(filters=spec, top_k=min(top_k, 40))
    for name, nodes in retriever.run(_bundle(query)):
        for nws in nodes:
            assert flt.matches(nws.node.metadata), f"{name} leaked {nws.node.metadata} through {spec}"
    for nws in retriever.retrieve(query):
        assert flt.matches(nws.node.metadata)
    # BM25 alone with a top-k larger than the matching set: no score-0 filler from outside
    bm25 = mixed_pipeline.index.bm25.with_top_k(top_k).with_filter(flt)
    assert all(flt.matches(n.node.metadata) for n in bm25.retrieve(query))


def test_a_filtered_engine_never_shows_other_departments(mixed_pipeline) -> None:
    engine = engine_over(mixed_pipeline)
    engine.session.set_filter(mixed_pipeline.choices.filter({"department": "the"}))
    record = engine.session.run_until("assemble", "phí thẻ SKU-4471 lãi suất")
    assert record.candidates and all(c.doc_id for c in record.candidates)
    departments = {mixed_pipeline.index.collection.get(ids=[c.node_id])["metadatas"][0]["department"] for c in record.candidates}
    assert departments == {"the"}
    assert record.filters["department"] == "the"
    # a session filter set later applies from the next turn on
    engine.session.set_filter(mixed_pipeline.choices.filter({"department": "nhan-su"}))
    record = engine.session.run_until("assemble", "nghỉ phép hợp đồng")
    assert {mixed_pipeline.index.collection.get(ids=[c.node_id])["metadatas"][0]["department"] for c in record.candidates} == {"nhan-su"}


def test_inactive_documents_are_out_by_default_and_back_when_allowed(mixed_pipeline) -> None:
    default = mixed_pipeline.retriever(top_k=40).retrieve("phí lãi suất nghỉ phép")
    assert default and all(n.node.metadata.get("active", True) for n in default)
    allowed = mixed_pipeline.retriever(top_k=40, filters={"include_inactive": True}).retrieve("phí lãi suất nghỉ phép")
    assert any(n.node.metadata.get("active") is False for n in allowed)


def _bundle(text: str):
    from llama_index.core.schema import QueryBundle

    return QueryBundle(text)


def test_unfiltered_and_filtered_agree_when_the_filter_allows_everything(mixed_pipeline) -> None:
    assert mixed_pipeline.choices.filter({"include_inactive": True}).is_empty
    masked = mixed_pipeline.index.bm25.with_top_k(10).with_filter(MetadataFilter.parse({"department": list(DEPARTMENTS),
                                                                                   "include_inactive": True}))
    plain = mixed_pipeline.index.bm25.with_top_k(10)
    query = "lãi suất SKU-4471"
    got, expected = masked.retrieve(query), plain.retrieve(query)
    assert [round(n.score, 5) for n in got] == [round(n.score, 5) for n in expected]


def test_filters_that_exclude_each_other_return_nothing_on_both_sides(mixed_pipeline) -> None:
    session = MetadataFilter.parse({"department": "the"})
    disjoint = session.merged(MetadataFilter.parse({"department": "tin-dung"}))
    assert disjoint.matches_nothing
    retriever = mixed_pipeline.retrieval.retriever(disjoint)
    assert retriever.retrieve("phí lãi suất") == []


def test_mostly_superseded_index_still_fills_top_k_with_active_chunks(tmp_path) -> None:
    """The default filter's fast path (no Chroma `where`) falls back to the exact query when the
    over-fetched chunks are mostly superseded."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(12):
        write_doc(corpus, f"d{i:02d}", f"Phí thẻ {i}", "2024-01-01", f"Phí thường niên thẻ loại {i} là {i}00.000 đồng.",
                  active=str(i >= 9).lower())  # only d09..d11 are active
    settings = load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None,
                             refusal_min_vector=-1.0, top_k=3, candidate_k=3, conflicts=False)
    ingest_path(settings, corpus, embed_model=HashEmbedding())
    pipeline = open_pipeline(settings, build_models(settings, llm=ScriptedLLM(), embed_model=HashEmbedding()))
    nodes = pipeline.retriever(use_bm25=False).retrieve("Phí thường niên thẻ loại 1")
    assert sorted(n.node.metadata["doc_id"] for n in nodes) == ["d09", "d10", "d11"]


def test_a_filter_that_matches_nothing_still_describes_itself() -> None:
    disjoint = MetadataFilter.parse({"department": "the"}).merged(MetadataFilter.parse({"department": "tin-dung"}))
    assert disjoint.matches_nothing and disjoint.to_spec() == {"department": []}
