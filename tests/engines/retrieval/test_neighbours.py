"""Neighbouring chunks of the best passages join the candidates; retrieval's own list stays first."""

from llama_index.core.schema import NodeWithScore, TextNode

from engines.retrieval.neighbours import NeighbourChunks, neighbour_ids

STORE = {
    f"fees#{n}": {"id": f"fees#{n}", "text": text, "metadata": {"doc_id": "fees", "title": "Biểu phí"},
                  "embedding": [0.1 * n, 1.0]}
    for n, text in enumerate(["Điều 1. Phạm vi áp dụng.", "Điều 2. Hồ sơ gồm giấy đề nghị mẫu P-01.",
                              "Điều 3. Phí cấp lại thẻ: 50.000 đồng/lần.", "Điều 4. Hiệu lực từ 01/01/2025."])
}


def fetch(ids):
    return [STORE[i] for i in ids if i in STORE]


def retrieved(*ids):
    return [NodeWithScore(node=TextNode(id_=i, text=STORE.get(i, {"text": "x"})["text"], metadata={"doc_id": "fees"}),
                          score=1.0) for i in ids]


def test_neighbour_ids_skip_what_is_there_and_what_has_no_number():
    assert neighbour_ids(["fees#2", "fees#3", "other#0", "note"], 3) == ["fees#1", "fees#4", "other#1"]
    assert neighbour_ids(["fees#0"], 1) == ["fees#1"]
    assert neighbour_ids(["fees#2"], 0) == []


def test_the_chunk_after_the_best_passage_becomes_a_candidate():
    nodes = retrieved("fees#1")
    out = NeighbourChunks(top_n=1, fetch=fetch).postprocess_nodes(nodes)
    assert [n.node.node_id for n in out] == ["fees#1", "fees#0", "fees#2"]
    assert "50.000" in out[2].node.get_content() and out[2].node.embedding == [0.2, 1.0]  # stored vector kept
    assert out[0] is not nodes[0]  # new objects
    assert [n.node.node_id for n in NeighbourChunks(top_n=0, fetch=fetch).postprocess_nodes(nodes)] == ["fees#1"]
    assert [n.node.node_id for n in NeighbourChunks(top_n=1, fetch=fetch).postprocess_nodes(retrieved("fees#3"))] \
        == ["fees#3", "fees#2"]  # fees#4 does not exist
