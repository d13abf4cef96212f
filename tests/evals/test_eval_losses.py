"""Where an answer lost its expected value: each stage on a hand-made turn, the summary's buckets, and the
report/variants tables that show it."""

from __future__ import annotations

import json

from evals.dataset import parse_rows
from evals.losses import STAGES, holds_all, loss_summary, lost_at, node_ids, with_losses
from evals.metrics import score_rows
from evals.runner import RowResult

#: Invented chunks: the current fee is in c-new, an old one in c-old, nothing relevant in c-other.
CHUNKS = {
    "c-new": "Phí thẻ QX-17 là 150.000 đồng/năm kể từ 01/07/2025.",
    "c-old": "Phí thẻ QX-17 là 120.000 đồng/năm.",
    "c-other": "Chi nhánh Phú Thịnh Vượng mở cửa lúc 8:00.",
}


def make_row(turn: int = 1, type_: str = "standalone", must: tuple[str, ...] = ("150.000 đồng",), **extra):
    data = {"conv_id": f"c-{turn}-{type_}-{extra.pop('tag', '')}", "turn": turn,
            "history": [] if turn == 1 else [["user", "q"], ["assistant", "a"]],
            "question": "Phí thẻ QX-17 bao nhiêu?", "type": type_, "gold_doc_ids": ["d-new"],
            "must_contain": list(must), **extra}
    return parse_rows([json.dumps(data, ensure_ascii=False)])[0]


def turn(row, *, retrieved=(), context=(), answer="", refused=False, index=0) -> RowResult:
    raw = RowResult("cfg", index, row, message=row.question, query=row.question, retrieved_doc_ids=("d-new",),
                    retrieved_node_ids=tuple(retrieved), context_node_ids=tuple(context), refused=refused,
                    answer=answer)
    return score_rows([raw], 5, retrieval_only=False)[0]


def test_each_stage_on_a_hand_made_turn():
    row = make_row()
    assert lost_at(turn(row, retrieved=["c-new"], context=["c-new"], answer="Phí là 150.000 đồng/năm."),
                   CHUNKS) == "answered"
    assert lost_at(turn(row, retrieved=["c-new"], refused=True, answer="Không tìm thấy."), CHUNKS) == "refused"
    assert lost_at(turn(row, retrieved=["c-old", "c-other"], context=["c-old", "c-other"], answer="120.000 đồng"),
                   CHUNKS) == "not retrieved"
    # retrieved, then the conflict check kept only the other chunks
    assert lost_at(turn(row, retrieved=["c-new", "c-other"], context=["c-other"], answer="8:00"),
                   CHUNKS) == "set aside"
    assert lost_at(turn(row, retrieved=["c-new", "c-other"], context=["c-new", "c-other"], answer="mở cửa lúc 8:00"),
                   CHUNKS) == "not quoted"


def test_two_values_are_lost_where_the_first_goes_missing():
    row = make_row(must=("150.000 đồng", "8:00"))
    # both values retrieved; the conflict check drops the chunk with the time: lost there, not at the quote
    result = turn(row, retrieved=["c-new", "c-other"], context=["c-new"], answer="150.000 đồng")
    assert lost_at(result, CHUNKS) == "set aside"
    assert holds_all([CHUNKS["c-new"], CHUNKS["c-other"]], ["150.000 đồng", "8:00"])
    assert not holds_all([CHUNKS["c-new"]], ["150.000 đồng", "8:00"])


def test_a_number_inside_a_longer_number_is_not_the_value():
    row = make_row(must=("50.000 đồng",))
    # "150.000 đồng" must not count as holding "50.000 đồng" (the answer check's own matching)
    assert lost_at(turn(row, retrieved=["c-new"], context=["c-new"], answer="x"), CHUNKS) == "not retrieved"


def test_rows_with_nothing_to_check_have_no_stage():
    unanswerable = make_row(type_="unanswerable", must=(), gold_doc_ids=[])
    assert lost_at(turn(unanswerable, answer="Không có thông tin."), CHUNKS) is None
    no_values = make_row(must=())
    assert lost_at(turn(no_values, retrieved=["c-new"], answer="x"), CHUNKS) is None
    retrieval_only = score_rows([RowResult("cfg", 0, make_row(), retrieved_doc_ids=("d-new",))], 5,
                                retrieval_only=True)[0]
    assert lost_at(retrieval_only, CHUNKS) is None


def test_summary_counts_every_checked_row_once_per_bucket():
    results = with_losses([
        turn(make_row(tag="a"), retrieved=["c-new"], context=["c-new"], answer="150.000 đồng", index=0),
        turn(make_row(2, "non_standalone", tag="b"), retrieved=["c-old"], context=["c-old"], answer="-", index=1),
        turn(make_row(3, "standalone", tag="c"), retrieved=["c-new"], context=["c-new"], answer="-", index=2),
        turn(make_row(type_="unanswerable", must=(), gold_doc_ids=[], tag="d"), answer="-", index=3),
    ], CHUNKS)
    assert [r.lost_at for r in results] == ["answered", "not retrieved", "not quoted", None]
    summary = loss_summary(results)
    assert set(summary["all"]) == set(STAGES)
    assert summary["all"] == {"answered": 1, "refused": 0, "not retrieved": 1, "set aside": 0, "not quoted": 1}
    assert summary["turn1"]["answered"] == 1 and sum(summary["turn1"].values()) == 1
    assert summary["turn2+"] == {"answered": 0, "refused": 0, "not retrieved": 1, "set aside": 0, "not quoted": 1}
    assert summary["non_standalone/turn2+"]["not retrieved"] == 1
    assert summary["standalone/turn2+"]["not quoted"] == 1
    assert results[0].to_dict()["lost_at"] == "answered"


def test_node_ids_lists_each_chunk_once_in_order():
    results = [turn(make_row(), retrieved=["c-new", "c-old"], context=["c-new"]),
               turn(make_row(tag="x"), retrieved=["c-other", "c-new"], context=["c-other"])]
    assert node_ids(results) == ["c-new", "c-old", "c-other"]
