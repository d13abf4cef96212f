"""Which road a standalone question takes: a pure rule over signals, and the signals themselves."""

from __future__ import annotations

import dataclasses

import pytest

from engines.conversation.router import DOCS
from engines.models.fakes import HashEmbedding
from engines.sql.road import SQL, RoadRouter, RoadSignals, decide_road, find_cues, find_terms, swap_value

TERMS = {"khách hàng", "khoản vay", "chi nhánh", "dư nợ", "nhân viên", "lãi suất", "loan", "loans", "branch",
         "customer", "customers"}


def test_a_question_naming_nothing_in_the_schema_stays_with_the_documents() -> None:
    assert decide_road(RoadSignals(sql_similarity=0.9, docs_similarity=0.7, cues=("tổng",)))[0] == DOCS


def test_naming_the_schema_and_asking_for_an_aggregate_takes_the_data_road() -> None:
    signals = RoadSignals(sql_similarity=0.80, docs_similarity=0.81, schema_terms=("khách hàng",), cues=("tổng",))
    assert decide_road(signals)[0] == SQL
    # the documents clearly closer: a policy question that happens to say "cao nhất"
    assert decide_road(RoadSignals(sql_similarity=0.70, docs_similarity=0.80, schema_terms=("lãi suất",),
                                   cues=("cao nhất",)))[0] == DOCS


def test_naming_the_schema_without_a_cue_needs_the_data_exemplars_ahead() -> None:
    ahead = RoadSignals(sql_similarity=0.90, docs_similarity=0.80, schema_terms=("khoản vay",))
    barely = RoadSignals(sql_similarity=0.82, docs_similarity=0.80, schema_terms=("khoản vay",))  # under the margin
    behind = RoadSignals(sql_similarity=0.80, docs_similarity=0.85, schema_terms=("khoản vay",))
    assert decide_road(ahead)[0] == SQL and decide_road(behind)[0] == DOCS and decide_road(barely)[0] == DOCS


def test_a_terse_follow_up_of_a_data_question_stays_on_the_data_road() -> None:
    follow = RoadSignals(sql_similarity=0.78, docs_similarity=0.80, terse=True, previous=SQL)
    assert decide_road(follow) == (SQL, "a short follow-up of a data question")
    assert decide_road(RoadSignals(sql_similarity=0.78, docs_similarity=0.80, terse=True, previous=DOCS))[0] == DOCS
    assert decide_road(RoadSignals(sql_similarity=0.60, docs_similarity=0.80, terse=True, previous=SQL))[0] == DOCS
    # naming a value of the data ("Còn Đà Nẵng?" reads like any follow-up to an embedder) doubles the slack
    near = RoadSignals(sql_similarity=0.72, docs_similarity=0.80, terse=True, previous=SQL)
    assert decide_road(near)[0] == DOCS
    assert decide_road(dataclasses.replace(near, values=("đà nẵng",)))[0] == SQL
    assert decide_road(RoadSignals(sql_similarity=0.60, docs_similarity=0.80, terse=True, previous=SQL,
                                   values=("vay mua ô tô",)))[0] == DOCS  # "Điều kiện vay mua ô tô là gì?"


def test_a_request_to_change_the_data_takes_the_data_road_to_be_refused_there() -> None:
    change = RoadSignals(sql_similarity=0.5, docs_similarity=0.9, schema_terms=("khoản vay",), asks_change=True)
    assert decide_road(change)[0] == SQL
    # naming no table ("Xoá hết các đơn bị huỷ"): still refused there, never answered "done" elsewhere
    assert decide_road(RoadSignals(sql_similarity=0.5, docs_similarity=0.9, asks_change=True))[0] == SQL
    # but a question about how to change something ("Quy trình cập nhật địa chỉ thế nào?") is for the documents
    assert decide_road(RoadSignals(sql_similarity=0.5, docs_similarity=0.9, asks_change=True, asked=True))[0] == DOCS


def test_terms_are_whole_words_in_either_unicode_form() -> None:
    decomposed = "Co bao nhie\u0302u kha\u0301ch ha\u0300ng?"  # "khách hàng" typed in NFD
    assert find_terms(decomposed, TERMS) == ("khách hàng",)
    assert set(find_terms("How many loans per branch?", TERMS)) == {"loans", "branch"}
    assert find_terms("The loaner's desk", TERMS) == ()


def test_bao_nhieu_counts_as_a_cue_only_before_a_schema_term() -> None:
    assert any(c.endswith("bao nhiêu khách hàng") for c in find_cues("Có bao nhiêu khách hàng ở Huế?", TERMS))
    assert find_cues("Nhân viên thử việc được nghỉ phép bao nhiêu ngày?", TERMS) == ()
    assert find_cues("Chi nhánh nào có tổng dư nợ cao nhất?", TERMS)[:2] == ("tổng", "cao nhất")
    assert find_cues("Chi nhánh nào có nhiều khách hàng nhất?", TERMS)[0] == "nhiều khách hàng nhất"
    # "bao nhiêu" / "how many" reach a term two words on; "số" only right before it
    assert find_cues("Năm nay có bao nhiêu đơn bị khách hàng rút lại?", TERMS) == ("có bao nhiêu đơn bị khách hàng",)
    assert find_cues("How many overdue loans are there?", TERMS) == ("how many", "how many overdue loans")
    assert find_cues("Số ngày nghỉ của nhân viên là bao nhiêu?", TERMS) == ()
    assert find_cues("Bao nhiêu tiền thì được miễn phí, hỏi cho khách hàng?", TERMS) == ()
    assert find_cues("Bao nhiêu tuổi thì khách hàng được mở tài khoản?", TERMS) == ()  # a unit, then a joint
    assert find_cues("Mất bao nhiêu ngày để khách hàng nhận được thẻ?", TERMS) == ()


def test_one_record_named_by_its_number_or_code_is_a_cue_and_a_mere_number_is_not() -> None:
    assert find_cues("Khoản vay số 250 đang ở trạng thái gì?", TERMS) == ("khoản vay số 250",)
    assert find_cues("What is the status of loan #77?", TERMS) == ("loan #77",)
    assert find_cues("Chi nhánh HN01 mở cửa năm nào?", TERMS) == ("chi nhánh HN01",)
    assert find_cues("Khách hàng 60 tuổi có được vay không?", TERMS) == ()


def test_an_aggregate_asked_right_after_a_data_turn_stays_on_the_data_road() -> None:
    share = RoadSignals(sql_similarity=0.81, docs_similarity=0.80, cues=("bao nhiêu phần trăm",), previous=SQL)
    assert decide_road(share)[0] == SQL
    # "How many days of annual leave do new staff get?" after a data turn: the documents lead, so it goes there
    assert decide_road(dataclasses.replace(share, sql_similarity=0.79))[0] == DOCS
    assert decide_road(dataclasses.replace(share, previous=DOCS))[0] == DOCS  # nothing in the schema, after documents
    assert decide_road(dataclasses.replace(share, cues=()))[0] == DOCS


@pytest.fixture
def router() -> RoadRouter:
    return RoadRouter(HashEmbedding(), TERMS, values={"huế", "hà nội", "đà nẵng"})


def test_the_router_reads_the_condensed_question_and_the_users_own_words(router: RoadRouter) -> None:
    data = router.decide("Có bao nhiêu khách hàng ở Đà Nẵng?", question="Còn ở Đà Nẵng thì sao?", previous=SQL)
    assert data.road == SQL and data.signals.terse and data.signals.schema_terms == ("khách hàng",)
    docs = router.decide("Điều kiện vay mua nhà là gì?", question="Điều kiện vay mua nhà là gì?")
    assert docs.road == DOCS and docs.to_dict()["reason"] == "names nothing in the schema"


class SameVector(HashEmbedding):
    """Every text the same vector: the exemplars say nothing, the words decide."""

    def _vector(self, text: str) -> list[float]:
        return [1.0] + [0.0] * (self.dim - 1)


def test_the_previous_road_is_judged_from_the_earlier_standalone_questions() -> None:
    router = RoadRouter(SameVector(), TERMS, values={"huế", "hà nội"})
    earlier = [("Còn Huế?", "Còn Huế?"), ("Có bao nhiêu khách hàng ở Hà Nội?", "Có bao nhiêu khách hàng ở Hà Nội?")]
    assert router.previous_road(earlier) == SQL  # a terse turn after a data turn was a data turn too
    assert router.previous_road([("Điều kiện vay mua nhà là gì?", "Điều kiện vay mua nhà là gì?")]) == DOCS
    assert router.previous_road([]) == ""


def test_a_follow_up_swaps_a_value_of_the_same_column_into_the_previous_question() -> None:
    columns = {"hà nội": frozenset({"branches.city"}), "đà nẵng": frozenset({"branches.city"}),
               "quá hạn": frozenset({"loans.status"}), "vay mua ô tô": frozenset({"loans.product"})}
    previous = "Có bao nhiêu khoản vay quá hạn ở Hà Nội?"
    assert swap_value(previous, "Còn ở Đà Nẵng thì sao?", columns) == "Có bao nhiêu khoản vay quá hạn ở Đà Nẵng?"
    assert swap_value(previous, "Còn vay mua ô tô thì sao?", columns) is None  # no value of that column before
    assert swap_value(previous, "Còn Hà Nội?", columns) is None  # the same value: nothing to swap
