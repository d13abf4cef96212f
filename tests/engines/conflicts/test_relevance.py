"""Only conflicts about the question are resolved: a compared claim must be among its focus clauses."""

from llama_index.core.schema import QueryBundle

from engines.conflicts.claims import analyze
from engines.conflicts.graph import ConflictPair
from engines.conflicts.postprocessor import ConflictPostprocessor
from engines.conflicts.relevance import about_question, compared_values, split_by_question
from tests.engines.conflicts.test_postprocessor import NoEmbedding, node

OLD = analyze("old", "Phí chuyển đổi gói là 20.000 đồng/lần. Gói X cho 2 GB mỗi ngày.", source="old")
NEW = analyze("new", "Phí chuyển đổi gói là 30.000 đồng/lần. Gói X cho 2 GB mỗi ngày.", source="new")
NUMERIC = ConflictPair("old", "new", "numeric", ("20.000 đồng/lần vs 30.000 đồng/lần",), 0.9)
ABOLISHED = analyze("abol", "Phụ cấp ăn trưa cho nhân viên văn phòng được bãi bỏ từ tháng 7.", source="abol")
LUNCH = analyze("lunch", "Nhân viên văn phòng được phụ cấp ăn trưa 730.000 đồng mỗi tháng.", source="lunch")
OTHER = analyze("other", "Nhân viên kho được phụ cấp độc hại theo ca làm việc.", source="other")
PASSAGES = {p.id: p for p in (OLD, NEW, ABOLISHED, LUNCH, OTHER)}


def test_values_are_read_from_each_side_of_the_evidence():
    assert compared_values(NUMERIC) == ({"20.000 đồng/lần"}, {"30.000 đồng/lần"})


def test_a_numeric_conflict_counts_when_a_focus_clause_of_either_side_carries_its_value():
    assert about_question(NUMERIC, PASSAGES, [("new", "Phí chuyển đổi gói là 30.000 đồng/lần.")])
    assert about_question(NUMERIC, PASSAGES, [("old", "Phí chuyển đổi gói là 20.000 đồng/lần.")])
    # the focus is another claim of the same passages: the fee is not what was asked
    assert not about_question(NUMERIC, PASSAGES, [("new", "Gói X cho 2 GB mỗi ngày."), ("old", "Gói X cho 2 GB mỗi ngày.")])
    # the value must come from its own side: 30.000 quoted from the old passage says nothing
    assert not about_question(NUMERIC, PASSAGES, [("old", "Một câu khác nêu 30.000 đồng/lần.")])


def test_an_abolition_counts_when_the_question_is_about_the_cue_or_what_it_abolishes():
    pair = ConflictPair("abol", "lunch", "negation", ("bãi bỏ",), 0.9)
    assert about_question(pair, PASSAGES, [("abol", "Phụ cấp ăn trưa cho nhân viên văn phòng được bãi bỏ từ tháng 7.")])
    assert about_question(pair, PASSAGES, [("lunch", "Nhân viên văn phòng được phụ cấp ăn trưa 730.000 đồng mỗi tháng.")])
    unrelated = ConflictPair("abol", "other", "negation", ("bãi bỏ",), 0.9)
    assert not about_question(unrelated, PASSAGES, [("other", "Nhân viên kho được phụ cấp độc hại theo ca làm việc.")])


def test_kinds_it_cannot_read_always_count():
    assert about_question(ConflictPair("old", "new", "llm", ("LLM: cannot both be true",), 0.9), PASSAGES, [])


def test_split_keeps_input_order():
    pair = ConflictPair("abol", "other", "negation", ("bãi bỏ",), 0.9)
    about, aside = split_by_question([pair, NUMERIC], list(PASSAGES.values()), [("new", "Phí là 30.000 đồng/lần.")])
    assert about == [NUMERIC] and aside == [pair]


def test_the_postprocessor_keeps_both_sides_of_a_conflict_the_question_is_not_about():
    nodes = [node("api-v1", "The public API rate limit is 100 requests per minute. Support answers within 2 days.",
                  "2022-03-01", [1.0, 0.10, 0.0]),
             node("api-v2", "The public API rate limit is 500 requests per minute. Support answers within 2 days.",
                  "2023-09-01", [1.0, 0.12, 0.0])]
    seen = []

    def focus(query, given):
        seen.append((query, [n.node.node_id for n in given]))
        return [("api-v2", "Support answers within 2 days.")]

    outcome = ConflictPostprocessor(embed_model=NoEmbedding(), question_focus=focus).postprocess_with_report(
        nodes, QueryBundle("How fast does support answer?"), "en")
    assert [n.node.node_id for n in outcome.nodes] == ["api-v1", "api-v2"]
    assert seen == [("How fast does support answer?", ["api-v1", "api-v2"])]
    assert outcome.report["dropped"] == [] and outcome.report["clusters"] == []
    assert [p["evidence"] for p in outcome.report["unrelated"]] == [["100 requests per minute vs 500 requests per minute"]]
    # asked about the limit, the older limit is set aside as before
    about = ConflictPostprocessor(embed_model=NoEmbedding(), question_focus=lambda q, n: [
        ("api-v2", "The public API rate limit is 500 requests per minute.")]).postprocess_with_report(
        nodes, QueryBundle("What is the rate limit?"), "en")
    assert [n.node.node_id for n in about.nodes] == ["api-v2"] and about.report["unrelated"] == []
