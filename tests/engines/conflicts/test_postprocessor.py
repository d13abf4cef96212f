"""The LlamaIndex adapter: stored vectors reused, new node objects, reports in both languages."""

import copy

from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engines.conflicts.postprocessor import ConflictPostprocessor
from engines.models.fakes import HashEmbedding
from engines.retrieval.fusion import FusedNode

TITLES = {"api": "Public API rate limits", "rw": "Quy định làm việc từ xa", "card": "Thẻ tín dụng"}


def node(node_id, text, date, embedding, doc_id=None):
    meta = {"doc_id": doc_id or node_id, "title": TITLES[node_id.split("-")[0].split("#")[0]], "date": date}
    return FusedNode(node=TextNode(id_=node_id, text=text, metadata=meta, embedding=embedding), score=0.03,
                     raw_scores={"vector": 0.9})


def seed_nodes():
    return [
        node("api-v1", "The public API rate limit is 100 requests per minute.", "2022-03-01", [1.0, 0.10, 0.0]),
        node("rw-06", "Nhân viên làm việc tại văn phòng tối thiểu 3 ngày/tuần.", "2023-06-01", [0.0, 1.0, 0.10]),
        node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0]),
        node("rw-11", "Quy định làm việc tại văn phòng 3 ngày/tuần không còn áp dụng; nhân viên được làm việc "
                      "từ xa hoàn toàn.", "2023-11-15", [0.0, 1.0, 0.12]),
        node("card", "Thẻ SKU-4471 có phí thường niên 200.000 đồng.", "2024-01-01", [0.0, 0.0, 1.0]),
    ]


class NoEmbedding(HashEmbedding):
    def _get_text_embeddings(self, texts):
        raise AssertionError("stored vectors must be reused")


def test_two_clusters_resolved_independently_with_stored_vectors():
    nodes = seed_nodes()
    before = copy.deepcopy(nodes)
    outcome = ConflictPostprocessor(embed_model=NoEmbedding()).postprocess_with_report(nodes, QueryBundle("q"), "vi")
    assert [n.node.node_id for n in outcome.nodes] == ["api-v2", "rw-11", "card"]
    assert all(a is not b for a in outcome.nodes for b in nodes)  # new objects
    assert outcome.nodes[0].raw_scores == {"vector": 0.9}  # fused scores survive the copy
    assert [n.model_dump() for n in nodes] == [n.model_dump() for n in before]  # inputs untouched
    report = outcome.report
    assert {d["doc_id"] for d in report["dropped"]} == {"api-v1", "rw-06"}
    assert sorted(p["kind"] for p in report["pairs"]) == ["negation", "numeric"]
    assert "Đã bỏ qua [api-v1] (2022-03-01)" in report["summary"] and "[api-v2] (2023-09-01)" in report["summary"]
    assert outcome.answer_suffix == ""  # resolved by date: nothing to warn about in the answer


def test_missing_vectors_are_embedded_in_one_batch():
    calls = []

    class Counting(HashEmbedding):
        def _get_text_embeddings(self, texts):
            calls.append(len(texts))
            return [self._vector(t) for t in texts]

    nodes = [NodeWithScore(node=TextNode(id_=n.node.node_id, text=n.node.text, metadata=n.node.metadata), score=1.0)
             for n in seed_nodes()]
    ConflictPostprocessor(embed_model=Counting(), similarity_threshold=0.0).postprocess_with_report(nodes, None, "en")
    assert calls == [5]


def test_same_date_is_unresolved_and_the_answer_says_so():
    nodes = seed_nodes()[:3]
    nodes[2].node.metadata["date"] = "2022-03-01"
    outcome = ConflictPostprocessor().postprocess_with_report(nodes, QueryBundle("rate limit"), "en")
    assert {n.node.node_id for n in outcome.nodes} == {"api-v1", "rw-06", "api-v2"}
    assert "The sources disagree" in outcome.answer_suffix and "100 requests per minute" in outcome.answer_suffix
    assert outcome.prompt_notes and "State both values" in outcome.prompt_notes[0]


def test_detect_only_mode_keeps_everything():
    outcome = ConflictPostprocessor(resolve_conflicts=False).postprocess_with_report(seed_nodes(), None, "en")
    assert len(outcome.nodes) == 5 and outcome.report["n_conflicts"] == 2 and outcome.report["dropped"] == []
    assert "not resolved" in outcome.report["summary"]


def test_chunks_of_one_document_never_conflict():
    a = node("rw#0", "Trước đây làm việc tại văn phòng 3 ngày/tuần.", "2023-11-15", [1.0, 0.0], doc_id="rw")
    b = node("rw#1", "Quy định 3 ngày/tuần không còn áp dụng.", "2023-11-15", [1.0, 0.01], doc_id="rw")
    outcome = ConflictPostprocessor().postprocess_with_report([a, b], None, "vi")
    assert len(outcome.nodes) == 2 and outcome.report["n_conflicts"] == 0


def test_below_the_similarity_gate_nothing_fires():
    nodes = seed_nodes()
    nodes[2] = node("api-v2", nodes[2].node.text, "2023-09-01", [0.0, 0.0, 1.0])
    outcome = ConflictPostprocessor().postprocess_with_report(nodes[:3], None, "en")
    assert outcome.report["n_conflicts"] == 0


def test_plain_postprocess_interface():
    kept = ConflictPostprocessor().postprocess_nodes(seed_nodes(), query_bundle=QueryBundle("giới hạn API?"))
    assert [n.node.node_id for n in kept] == ["api-v2", "rw-11", "card"]


def test_document_titles_name_the_subject():
    def leave(node_id, title, days):
        meta = {"doc_id": node_id, "title": title, "date": "2024-01-15"}
        return NodeWithScore(node=TextNode(id_=node_id, text=f"Mỗi năm người lao động được nghỉ phép {days} ngày.",
                                           metadata=meta, embedding=[1.0, 0.0]), score=1.0)

    probation = leave("p", "Nghỉ phép năm của nhân viên thử việc", 6)
    seasonal = leave("s", "Nghỉ phép năm của nhân viên hợp đồng thời vụ", 9)
    outcome = ConflictPostprocessor().postprocess_with_report([probation, seasonal], None, "vi")
    assert outcome.report["n_conflicts"] == 0  # probation vs seasonal staff: two subjects, two rules
    same_subject = leave("s2", "Nghỉ phép năm của nhân viên thử việc", 9)
    outcome = ConflictPostprocessor().postprocess_with_report([probation, same_subject], None, "vi")
    assert outcome.report["n_conflicts"] == 1 and "⚠" in outcome.answer_suffix  # same date: unresolved, said aloud


def test_stored_vectors_are_looked_up_before_embedding():
    nodes = [NodeWithScore(node=TextNode(id_=n.node.node_id, text=n.node.text, metadata=n.node.metadata), score=1.0)
             for n in seed_nodes()]
    stored = {n.node.node_id: n.node.embedding for n in seed_nodes()}
    asked = []

    def lookup(ids):
        asked.append(list(ids))
        return {i: stored[i] for i in ids}

    outcome = ConflictPostprocessor(embed_model=NoEmbedding(), vector_lookup=lookup).postprocess_with_report(nodes, None, "en")
    assert len(asked) == 1 and len(asked[0]) == 5  # one lookup for all, no model call
    assert [n.node.node_id for n in outcome.nodes] == ["api-v2", "rw-11", "card"]


def test_stored_vectors_are_looked_up_once_per_chunk_text():
    stored = {n.node.node_id: n.node.embedding for n in seed_nodes()}
    asked = []

    def lookup(ids):
        asked.append(sorted(ids))
        return {i: stored[i] for i in ids}

    def bare(nodes):
        return [NodeWithScore(node=TextNode(id_=n.node.node_id, text=n.node.text, metadata=n.node.metadata), score=1.0)
                for n in nodes]

    post = ConflictPostprocessor(embed_model=NoEmbedding(), vector_lookup=lookup)
    first = post.postprocess_with_report(bare(seed_nodes()), None, "en")
    again = post.postprocess_with_report(bare(seed_nodes()), None, "en")  # the next turn retrieves the same chunks
    edited = bare(seed_nodes())
    edited[4].node.text = "Thẻ SKU-4471 có phí thường niên 250.000 đồng."  # re-ingested with new text
    post.postprocess_with_report(edited, None, "en")
    assert asked == [sorted(stored), ["card"]]  # no second round trip for what was looked up
    assert [n.node.node_id for n in again.nodes] == [n.node.node_id for n in first.nodes]


def test_chunks_of_the_newest_document_win_together():
    old = node("api-v1", "The public API rate limit is 100 requests per minute.", "2022-03-01", [1.0, 0.10, 0.0])
    new_a = node("api-v2#0", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0],
                 doc_id="api-v2")
    new_b = node("api-v2#1", "Since v2.0 the public API rate limit is 500 requests per minute per key.", "2023-09-01",
                 [1.0, 0.11, 0.0], doc_id="api-v2")
    outcome = ConflictPostprocessor().postprocess_with_report([old, new_a, new_b], None, "en")
    assert [n.node.node_id for n in outcome.nodes] == ["api-v2#0", "api-v2#1"]  # not an "unresolved" tie
    assert outcome.answer_suffix == ""


def test_two_chunks_of_one_superseded_document_are_named_once():
    old_a = node("rw-06#0", "Nhân viên làm việc tại văn phòng tối thiểu 3 ngày/tuần.", "2023-06-01", [0.0, 1.0, 0.10],
                 doc_id="rw-06")
    old_b = node("rw-06#1", "Các ngày bắt buộc có mặt: thứ Ba và thứ Năm, tối thiểu 3 ngày/tuần.", "2023-06-01",
                 [0.0, 1.0, 0.11], doc_id="rw-06")
    new = node("rw-11", "Quy định làm việc tại văn phòng 3 ngày/tuần không còn áp dụng; nhân viên được làm việc "
                        "từ xa hoàn toàn.", "2023-11-15", [0.0, 1.0, 0.12])
    outcome = ConflictPostprocessor().postprocess_with_report([old_a, old_b, new], None, "vi")
    assert [n.node.node_id for n in outcome.nodes] == ["rw-11"]
    assert outcome.report["summary"].count("Đã bỏ qua [rw-06]") == 1


def test_a_declared_replacement_wins_on_the_same_date_and_the_note_says_so():
    """Two versions issued the same day: only the stored ``supersedes`` field can order them."""
    old = node("api-v1", "The public API rate limit is 100 requests per minute.", "2023-09-01", [1.0, 0.10, 0.0])
    new = node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0])
    undeclared = ConflictPostprocessor().postprocess_with_report([old, new], None, "en")
    assert [n.node.node_id for n in undeclared.nodes] == ["api-v1", "api-v2"]  # same date: both, flagged
    assert undeclared.report["clusters"][0]["resolution"] == "unresolved"
    new.node.metadata["supersedes"] = "api-v1,api-v0"  # as engines.corpus.documents stores the list
    outcome = ConflictPostprocessor().postprocess_with_report([old, new], None, "en")
    assert [n.node.node_id for n in outcome.nodes] == ["api-v2"]
    assert outcome.report["clusters"][0]["basis"] == "supersedes"
    assert "[api-v2] (2023-09-01) declares that it replaces it" in outcome.report["summary"]


def test_the_superseded_passage_reaches_the_answer_without_its_stale_sentence():
    old = node("api-v1", "The public API rate limit is 100 requests per minute. Keys are issued by the platform "
                         "team within two working days of a request.", "2022-03-01", [1.0, 0.10, 0.0])
    new = node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0])
    outcome = ConflictPostprocessor(partial_supersession=True).postprocess_with_report([old, new], None, "en")
    texts = {n.node.node_id: n.node.get_content() for n in outcome.nodes}
    assert "100 requests" not in texts["api-v1"] and "two working days" in texts["api-v1"]
    assert old.node.get_content().startswith("The public API rate limit is 100")  # the input is not changed
    assert "Set aside the sentences of [api-v1] (2022-03-01)" in outcome.report["summary"]
    whole = ConflictPostprocessor().postprocess_with_report([old, new], None, "en")  # the default: whole passages
    assert [n.node.node_id for n in whole.nodes] == ["api-v2"]


def test_values_mode_trims_a_changed_value_but_sets_an_abolished_rule_aside_whole():
    old_api = node("api-v1", "The public API rate limit is 100 requests per minute. Keys are issued by the platform "
                             "team within two working days of a request.", "2022-03-01", [1.0, 0.10, 0.0])
    new_api = node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0])
    old_rw = node("rw-06", "Nhân viên làm việc tại văn phòng tối thiểu 3 ngày/tuần. Thứ Ba và thứ Năm là ngày "
                           "bắt buộc có mặt tại văn phòng của mọi phòng ban.", "2023-06-01", [0.0, 1.0, 0.10])
    new_rw = node("rw-11", "Quy định làm việc tại văn phòng 3 ngày/tuần không còn áp dụng; nhân viên được làm việc "
                           "từ xa hoàn toàn.", "2023-11-15", [0.0, 1.0, 0.12])
    values = ConflictPostprocessor(partial_supersession="values").postprocess_with_report(
        [old_api, new_api, old_rw, new_rw], None, "vi")
    texts = {n.node.node_id: n.node.get_content() for n in values.nodes}
    assert "two working days" in texts["api-v1"] and "100 requests" not in texts["api-v1"]  # a value changed
    assert "rw-06" not in texts  # abolished: its value-less sentence ("Thứ Ba và thứ Năm ...") goes with it
    everywhere = ConflictPostprocessor(partial_supersession="all").postprocess_with_report(
        [old_api, new_api, old_rw, new_rw], None, "vi")
    assert "rw-06" in {n.node.node_id for n in everywhere.nodes}  # what 'values' guards against
    declared = copy.deepcopy(new_api)
    declared.node.metadata["supersedes"] = "api-v1"
    replaced = ConflictPostprocessor(partial_supersession="values").postprocess_with_report([old_api, declared], None, "en")
    assert [n.node.node_id for n in replaced.nodes] == ["api-v2"]  # a declared replacement replaces it whole


def test_a_replaced_documents_passages_are_set_aside_when_its_replacement_is_retrieved():
    """No value pair between them: the old guide's other clause only falls because the newer guide,
    which the index knows replaces it, is retrieved too; without the newer guide it stays."""
    old = node("card#0", "Hồ sơ gồm giấy đề nghị mẫu TD-01 và bản sao căn cước.", "2022-01-01", [0.0, 0.0, 1.0],
               doc_id="card-guide-2022")
    new = node("card#1", "Khách hàng nộp hồ sơ qua ứng dụng trong vòng 90 ngày.", "2024-01-01", [0.0, 1.0, 0.0],
               doc_id="card-guide-2024")
    other = node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.0, 0.0])
    replaced = {"card-guide-2022": {"card-guide-2024": "supersedes: card-guide-2022"}}
    check = ConflictPostprocessor(embed_model=NoEmbedding(), replaced_by=lambda: replaced)
    outcome = check.postprocess_with_report([old, new, other], QueryBundle("q"), "vi")
    assert [n.node.node_id for n in outcome.nodes] == ["card#1", "api-v2"]
    assert [d["doc_id"] for d in outcome.report["dropped"]] == ["card-guide-2022"]
    assert "[card-guide-2024] (2024-01-01) ghi rõ là thay thế" in outcome.report["summary"]
    alone = check.postprocess_with_report([old, other], QueryBundle("q"), "vi")
    assert [n.node.node_id for n in alone.nodes] == ["card#0", "api-v2"]
    unaware = ConflictPostprocessor(embed_model=NoEmbedding()).postprocess_with_report([old, new, other], QueryBundle("q"), "vi")
    assert len(unaware.nodes) == 3


def test_a_document_set_aside_in_part_is_not_said_to_be_set_aside_whole():
    """One chunk of a document loses a conflict while another chunk of it is kept (and may be quoted):
    the note says a passage of it was set aside, never the document."""
    stale = node("api-v1#0", "The public API rate limit is 100 requests per minute.", "2022-03-01", [1.0, 0.10, 0.0],
                 doc_id="api-v1")
    other = node("api-v1#1", "Nhân viên được cấp thẻ SKU-4471 miễn phí.", "2022-03-01", [0.0, 0.0, 1.0],
                 doc_id="api-v1")
    new = node("api-v2", "The public API rate limit is 500 requests per minute.", "2023-09-01", [1.0, 0.12, 0.0])
    outcome = ConflictPostprocessor().postprocess_with_report([stale, other, new], None, "en")
    assert [n.node.node_id for n in outcome.nodes] == ["api-v1#1", "api-v2"]
    assert "Set aside one passage of [api-v1] (2022-03-01)" in outcome.report["summary"]
    assert "its other passages are still used" in outcome.report["summary"]
    alone = ConflictPostprocessor().postprocess_with_report([stale, new], None, "en")
    assert "Set aside [api-v1] (2022-03-01)" in alone.report["summary"]  # nothing of it kept: the whole
