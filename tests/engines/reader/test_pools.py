"""Mined pools: the retriever's own confusions, labelled from the writer's evidence, as training groups."""

import random

from engines.reader.examples import load_training_set
from engines.reader.pools import (
    AMBIGUOUS,
    ANSWERS,
    TEMPTING,
    UNRELATED,
    label_passage,
    label_pool,
    pool_groups,
    read_pools,
    write_pools,
)
from tests.engines.reader.test_pairs import training_set  # noqa: F401  (fixture)

ANSWER_TEXT = "Bảng giá phòng 2025\nPhòng đơn có giá 900.000 đồng/đêm vào ngày thường."
OLDER = "Bảng giá phòng 2024\nPhòng đơn có giá 800.000 đồng/đêm vào ngày thường."
WEEKEND = "Bảng giá phòng 2025\nCuối tuần, mọi hạng phòng cộng thêm 20% giá."
ELSEWHERE = "Nội quy hồ bơi\nHồ bơi mở cửa từ 6 giờ đến 21 giờ."
VALUE_ONLY = "Bản tin\nGiá 900.000 đồng được nhắc trong bản tin."


def _pool(n_unrelated=0):
    return [("zz-rates-2024", OLDER), ("zz-pool", ELSEWHERE), ("zz-rates-2025", ANSWER_TEXT),
            ("zz-rates-2025", WEEKEND), ("zz-news", VALUE_ONLY)] + [("zz-x", f"Khác {i}.") for i in range(n_unrelated)]


def test_a_pooled_passage_is_labelled_from_the_evidence_and_the_tempting_quotes(training_set):  # noqa: F811
    turn = load_training_set(training_set).turns[0]
    labels = [label_passage(turn, d, p) for d, p in _pool()]
    assert labels == [TEMPTING, UNRELATED, ANSWERS, TEMPTING, AMBIGUOUS]


def test_pools_survive_a_round_trip_and_a_set_without_pools_reads_empty(training_set, tmp_path):  # noqa: F811
    turn = load_training_set(training_set).turns[0]
    path = tmp_path / "zz.jsonl"
    write_pools(path, [label_pool(turn, _pool())])
    pools = read_pools(path)
    assert list(pools) == [("zz-c1", 1)]
    assert [p.label for p in pools[("zz-c1", 1)].passages][:3] == [TEMPTING, UNRELATED, ANSWERS]
    assert not path.with_suffix(".tmp").exists()
    assert read_pools(tmp_path / "missing.jsonl") == {}


def test_a_pool_group_puts_an_answer_against_the_best_ranked_non_answers(training_set):  # noqa: F811
    ts = load_training_set(training_set)
    answerable, unanswerable = ts.turns
    pools = {(t.conv_id, t.turn): label_pool(t, _pool(n_unrelated=10)) for t in (answerable, unanswerable)}
    groups = pool_groups(ts, pools, random.Random(0), group_size=6, hardest=3)
    first, second = groups
    assert first.labels == (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert first.passages[0] == ANSWER_TEXT
    assert first.passages[1:4] == (OLDER, ELSEWHERE, WEEKEND)  # the pool's best-ranked, in order
    assert VALUE_ONLY not in first.passages  # ambiguous: never a negative
    assert second.labels == (0.0,) * 6  # unanswerable: negatives only (pointwise loss)
    assert ANSWER_TEXT in second.passages  # for that turn nothing answers
    assert first.source.endswith("/pool")


def test_a_turn_whose_pool_missed_its_answer_gets_no_pool_group(training_set):  # noqa: F811
    ts = load_training_set(training_set)
    answerable = ts.turns[0]
    pools = {(answerable.conv_id, 1): label_pool(answerable, [("zz-pool", ELSEWHERE), ("zz-rates-2024", OLDER)])}
    assert pool_groups(ts, pools, random.Random(0)) == []
