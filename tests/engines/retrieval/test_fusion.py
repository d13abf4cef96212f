import copy

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from ranx import Run, fuse

from engines.models.fakes import ScriptedLLM
from engines.retrieval.fusion import FusedNode, HybridFusionRetriever, reciprocal_rank_fusion


def test_rrf_matches_ranx():
    rankings = [["a", "b", "c", "d"], ["c", "a", "e"]]
    ours = reciprocal_rank_fusion(rankings, k=60)
    runs = [Run({"q": {d: float(len(r) - i) for i, d in enumerate(r)}}) for r in rankings]
    theirs = fuse(runs, method="rrf", params={"k": 60}).to_dict()["q"]
    assert [d for d, _ in ours] == sorted(theirs, key=lambda d: -theirs[d])
    for doc, score in ours:
        assert score == pytest.approx(theirs[doc])


def test_weights_change_the_order():
    rankings = [["a", "b"], ["b", "a"]]
    assert reciprocal_rank_fusion(rankings, [2.0, 1.0])[0][0] == "a"
    assert reciprocal_rank_fusion(rankings, [1.0, 2.0])[0][0] == "b"


def test_ties_keep_first_appearance_and_duplicates_count_once():
    assert [d for d, _ in reciprocal_rank_fusion([["a", "b"], ["b", "a"]])] == ["a", "b"]
    assert reciprocal_rank_fusion([["a", "a"]]) == reciprocal_rank_fusion([["a"]])


@pytest.mark.parametrize("rankings", [[], [[]], [[], ["a"]]])
def test_empty_inputs(rankings):
    assert [d for d, _ in reciprocal_rank_fusion(rankings)] == [d for r in rankings for d in r]


@pytest.mark.parametrize("weights", [[-1.0, 1.0], [0.0, 0.0], [1.0]])
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"], ["b"]], weights)


class ListRetriever(BaseRetriever):
    def __init__(self, results):
        super().__init__()
        self.results = results

    def _retrieve(self, query_bundle: QueryBundle):
        return self.results


def _nws(node_id, score, embedding=None):
    return NodeWithScore(node=TextNode(id_=node_id, text=f"text {node_id}", embedding=embedding), score=score)


def test_hybrid_keeps_raw_scores_and_does_not_mutate_inputs():
    vector = [_nws("a", 0.91, [1.0, 0.0]), _nws("b", 0.85, [0.0, 1.0])]
    bm25 = [_nws("b", 7.5), _nws("c", 3.0)]
    snapshot = copy.deepcopy([vector, bm25])
    retriever = HybridFusionRetriever({"vector": ListRetriever(vector), "bm25": ListRetriever(bm25)},
                                      llm=ScriptedLLM(), similarity_top_k=3)
    results = retriever.retrieve("q")
    assert [r.node.node_id for r in results] == ["b", "a", "c"]
    assert all(isinstance(r, FusedNode) for r in results)
    assert results[0].raw_scores == {"vector": 0.85, "bm25": 7.5}
    assert results[0].ranks == {"vector": 2, "bm25": 1}
    assert results[0].node.embedding == [0.0, 1.0]  # the vector side's node, with its stored vector
    assert [[(n.node.node_id, n.score) for n in lst] for lst in [vector, bm25]] == \
           [[(n.node.node_id, n.score) for n in lst] for lst in snapshot]


async def _aretrieve(retriever):
    return await retriever.aretrieve("q")


def test_async_path_gives_the_same_result():
    import asyncio

    vector = [_nws("a", 0.9), _nws("b", 0.8)]
    bm25 = [_nws("b", 2.0)]
    retriever = HybridFusionRetriever({"vector": ListRetriever(vector), "bm25": ListRetriever(bm25)},
                                      llm=ScriptedLLM(), weights={"vector": 1.0, "bm25": 0.5})
    sync = [(r.node.node_id, r.score, r.raw_scores) for r in retriever.retrieve("q")]
    asyn = [(r.node.node_id, r.score, r.raw_scores) for r in asyncio.run(_aretrieve(retriever))]
    assert sync == asyn


def test_unknown_weight_name_is_refused():
    with pytest.raises(ValueError, match="unknown retrievers"):
        HybridFusionRetriever({"vector": ListRetriever([])}, llm=ScriptedLLM(), weights={"bm52": 1.0})


def test_corpus_support_is_the_best_allowed_chunk_cosine_per_vector(pipeline):
    from engines.retrieval.filters import MetadataFilter

    embed = pipeline.models.embed_model
    retriever = pipeline.retriever()
    probation = embed.get_query_embedding("Nhân viên thử việc không được hưởng phép năm trong thời gian thử việc.")
    gold = embed.get_query_embedding("Giá vàng SJC hôm nay")
    support = retriever.corpus_support([probation, gold])
    assert len(support) == 2 and support[0] > support[1]  # one call, one score per candidate
    # a filter that rules the document out lowers its support: only what retrieval may return counts
    elsewhere = pipeline.retrieval.retriever(MetadataFilter.parse({"doc_id": ["leave-seasonal"]}))
    assert elsewhere.corpus_support([probation])[0] < support[0]
    bm25_only = pipeline.retriever(use_vector=False)
    assert bm25_only.corpus_support([probation]) is None  # no vector side: no support signal


def _text(node_id, text, score):
    return NodeWithScore(node=TextNode(id_=node_id, text=text), score=score)


def test_the_other_languages_passages_rank_as_if_scored_a_boost_higher():
    """An English question scores English passages that do not answer above a Vietnamese one that does,
    and BM25 finds only English ones; with the boost the Vietnamese passage reaches the top k."""
    vector = [_text("en1", "Opening hours of the front desk are 8:00 to 17:00.", 0.86),
              _text("en2", "Parking costs 5,000 VND per visit for motorbikes.", 0.85),
              _text("vi1", "Phí làm thẻ người nhà được miễn từ ngày 01/05/2025.", 0.83)]
    bm25 = [_text("en2", "Parking costs 5,000 VND per visit for motorbikes.", 4.0)]

    def retriever(boost):
        return HybridFusionRetriever({"vector": ListRetriever(vector), "bm25": ListRetriever(bm25)},
                                     llm=ScriptedLLM([]), similarity_top_k=2, cross_language_boost=boost)

    question = "How much is the relatives' card fee?"
    assert "vi1" not in [n.node.node_id for n in retriever(0.0).retrieve(question)]
    top = retriever(0.04).retrieve(question)
    assert "vi1" in [n.node.node_id for n in top]
    assert {n.node.node_id: n.raw_scores["vector"] for n in top}["vi1"] == 0.83  # the gate still reads the cosine
    # a Vietnamese question: the English passages are the other language and rise above a Vietnamese one
    mixed = [_text("vi2", "Phí gửi xe máy là 5.000 đồng mỗi lượt tại tầng hầm.", 0.88), *vector]
    vi_first = HybridFusionRetriever({"vector": ListRetriever(mixed)}, llm=ScriptedLLM([]), cross_language_boost=0.04)
    assert [n.node.node_id for n in vi_first.run(QueryBundle("Phí gửi xe máy là bao nhiêu?"))[0][1]][:2] == ["en1", "en2"]
    assert [n.node.node_id for n in retriever(0.04).run(QueryBundle(question))[0][1]] == ["vi1", "en1", "en2"]
