"""Conflict detection and cluster-aware recency, on the seed's scenarios and their look-alikes."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt

import numpy as np
import pytest

from engines.conflicts.graph import (
    Cluster,
    ConflictPair,
    Passage,
    Resolution,
    analyze,
    connected_components,
    detect_pairs,
    resolve,
)

D = dt.date


def pair_sim(s: float) -> np.ndarray:
    return np.array([[1.0, s], [s, 1.0]])


def block_sim(n: int, links: dict[tuple[int, int], float], default: float = 0.2) -> np.ndarray:
    sim = np.full((n, n), default)
    np.fill_diagonal(sim, 1.0)
    for (i, j), s in links.items():
        sim[i, j] = sim[j, i] = s
    return sim


# The seed's three scenarios, each in English and Vietnamese: (older, newer), kind, similarity.
SCENARIOS = {
    "financial-en": (
        ("Acme Corp Q4 earnings report: revenue for fiscal year 2023 was $4.2M.", D(2024, 1, 15)),
        ("Audited restatement (April 2024): Acme Corp revenue for fiscal year 2023 is restated "
         "to $6.8M after external auditors reviewed the accounts.", D(2024, 4, 15)),
        "numeric", 0.82,
    ),
    "financial-vi": (
        ("Báo cáo thu nhập quý 4 của Acme Corp: doanh thu năm tài chính 2023 là 4,2 triệu USD.", D(2024, 1, 15)),
        ("Sau kiểm toán độc lập, doanh thu năm tài chính 2023 của Acme Corp được điều chỉnh lên "
         "6,8 triệu USD.", D(2024, 4, 15)),
        "numeric", 0.82,
    ),
    "office-en": (
        ("HR policy (June 2023): employees must work from the office 3 days per week.", D(2023, 6, 1)),
        ("HR policy revision (November 2023): the office attendance requirement no longer applies; "
         "fully remote work is now permitted.", D(2023, 11, 1)),
        "negation", 0.78,
    ),
    "office-vi": (
        ("Chính sách nhân sự tháng 6 năm 2023: nhân viên phải làm việc tại văn phòng 3 ngày mỗi tuần.",
         D(2023, 6, 1)),
        ("Bản sửa đổi chính sách nhân sự tháng 11 năm 2023: yêu cầu làm việc tại văn phòng không còn "
         "áp dụng; nhân viên được phép làm việc từ xa hoàn toàn.", D(2023, 11, 1)),
        "negation", 0.78,
    ),
    "api-en": (
        ("API reference v1.2: the rate limit is 100 requests per minute.", D(2022, 3, 1)),
        ("API reference v2.0: after the infrastructure upgrade, the rate limit is 500 requests "
         "per minute.", D(2023, 9, 1)),
        "numeric", 0.74,
    ),
    "api-vi": (
        ("Tài liệu API phiên bản 1.2: giới hạn tốc độ là 100 yêu cầu mỗi phút.", D(2022, 3, 1)),
        ("Tài liệu API phiên bản 2.0: sau khi nâng cấp hạ tầng, giới hạn tốc độ được nâng lên "
         "500 yêu cầu/phút.", D(2023, 9, 1)),
        "numeric", 0.74,
    ),
}


def scenario(name: str, *, prefix: str = "") -> tuple[Passage, Passage, str, float]:
    (old_text, old_date), (new_text, new_date), kind, sim = SCENARIOS[name]
    return (
        analyze(f"{prefix}{name}-old", old_text, old_date),
        analyze(f"{prefix}{name}-new", new_text, new_date),
        kind,
        sim,
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_seed_scenario_detected_and_newer_kept(name: str) -> None:
    old, new, kind, s = scenario(name)
    pairs = detect_pairs([old, new], pair_sim(s))
    assert [(p.a, p.b, p.kind) for p in pairs] == [(old.id, new.id, kind)]
    assert pairs[0].similarity == pytest.approx(s)
    res = resolve([old, new], pairs)
    assert res.kept_ids == (new.id,)
    assert res.dropped_ids == (old.id,)
    (cluster,) = res.clusters
    assert (cluster.kind, cluster.winner_id, cluster.ids) == ("temporal", new.id, (old.id, new.id))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_seed_scenario_newer_kept_when_it_is_retrieved_first(name: str) -> None:
    old, new, kind, s = scenario(name)
    pairs = detect_pairs([new, old], pair_sim(s))
    assert [(p.a, p.b, p.kind) for p in pairs] == [(new.id, old.id, kind)]
    res = resolve([new, old], pairs)
    assert (res.kept_ids, res.dropped_ids) == ((new.id,), (old.id,))


@pytest.mark.parametrize(
    ("name", "evidence"),
    [
        ("financial-en", ("$4.2M vs $6.8M",)),
        ("financial-vi", ("4,2 triệu USD vs 6,8 triệu USD",)),
        ("api-en", ("100 requests per minute vs 500 requests per minute",)),
        ("api-vi", ("100 yêu cầu mỗi phút vs 500 yêu cầu/phút",)),
        ("office-en", ("no longer",)),
        ("office-vi", ("không còn áp dụng",)),
    ],
)
def test_evidence_is_human_readable(name: str, evidence: tuple[str, ...]) -> None:
    old, new, _, s = scenario(name)
    (pair,) = detect_pairs([old, new], pair_sim(s))
    assert pair.evidence == evidence


def test_report_only_mode_drops_nothing() -> None:
    old, new, _, s = scenario("api-vi")
    pairs = detect_pairs([old, new], pair_sim(s))
    res = resolve([old, new], pairs, resolve_conflicts=False)
    assert res.kept_ids == (old.id, new.id)
    assert res.dropped_ids == ()
    (cluster,) = res.clusters
    assert (cluster.kind, cluster.winner_id) == ("temporal", new.id)


def test_two_independent_clusters_and_unrelated_passages() -> None:
    fin_old, fin_new, _, _ = scenario("financial-en")
    api_old, api_new, _, _ = scenario("api-vi")
    cafe = analyze("cafe", "Căng tin mở cửa từ 7:00 đến 14:00, giá suất ăn 35.000 đồng.", D(2021, 1, 1))
    park = analyze("parking", "Employees may park in lot B after registering with facilities.", None)
    passages = [fin_old, api_old, cafe, fin_new, park, api_new]
    sim = block_sim(6, {
        (0, 3): 0.82,  # financial pair
        (1, 5): 0.74,  # API pair
        (3, 1): 0.71,  # similar enough, but no shared quantity and no cue: no edge
        (2, 4): 0.70,  # the unrelated passages resemble each other, nothing to dispute
    })
    pairs = detect_pairs(passages, sim)
    assert {(p.a, p.b) for p in pairs} == {(fin_old.id, fin_new.id), (api_old.id, api_new.id)}
    res = resolve(passages, pairs)
    # The API documents are newer than the financial ones, so keeping only the newest
    # passage overall would wrongly drop fin_new. Each cluster keeps its own winner.
    assert res.kept_ids == (cafe.id, fin_new.id, park.id, api_new.id)
    assert res.dropped_ids == (fin_old.id, api_old.id)
    assert [(c.ids, c.winner_id) for c in res.clusters] == [
        ((fin_old.id, fin_new.id), fin_new.id),
        ((api_old.id, api_new.id), api_new.id),
    ]
    assert all(len(c.pairs) == 1 for c in res.clusters)


def test_chain_is_one_cluster_resolved_to_its_newest() -> None:
    # A-B and B-C conflict, A-C do not; the component still has one winner.
    a = analyze("a", "Giới hạn tốc độ là 100 yêu cầu/phút.", D(2021, 1, 1))
    b = analyze("b", "Giới hạn tốc độ là 200 yêu cầu/phút.", D(2022, 1, 1))
    c = analyze("c", "Giới hạn tốc độ bây giờ không còn áp dụng cho tài khoản nội bộ.", D(2023, 1, 1))
    sim = block_sim(3, {(0, 1): 0.9, (1, 2): 0.8, (0, 2): 0.5})
    pairs = detect_pairs([a, b, c], sim)
    assert [(p.a, p.b, p.kind) for p in pairs] == [("a", "b", "numeric"), ("b", "c", "negation")]
    res = resolve([a, b, c], pairs)
    assert res.kept_ids == ("c",)
    assert res.clusters[0].ids == ("a", "b", "c")


LOOKALIKES = {
    "same-limit-two-products-vi": (
        "Sản phẩm A: hạn mức tín dụng 500 triệu đồng.",
        "Sản phẩm B: hạn mức tín dụng 500 triệu đồng.",
    ),
    "same-limit-two-products-en": (
        "Product A: the credit limit is $500,000.",
        "Product B: the credit limit is $500,000.",
    ),
    "different-limits-two-products-vi": (
        "Sản phẩm A: hạn mức tín dụng 500 triệu đồng.",
        "Sản phẩm B: hạn mức tín dụng 300 triệu đồng.",
    ),
    "probation-vs-seasonal-vi": (
        "Nhân viên thử việc được nghỉ phép 0 ngày mỗi tháng.",
        "Nhân viên thời vụ được nghỉ phép 1 ngày mỗi tháng.",
    ),
    "probation-vs-seasonal-en": (
        "Paid leave: probationary employees get 0 days of paid leave per month.",
        "Paid leave: seasonal employees get 1 day of paid leave per month.",
    ),
    "two-springfields-vi": (
        "Thư viện thị trấn Springfield (bang Illinois) mở cửa từ 9:00 đến 17:00.",
        "Thư viện thị trấn Springfield (bang Missouri) mở cửa từ 8:00 đến 18:00.",
    ),
    "two-springfields-en": (
        "The town library in Springfield, Illinois opens at 9:00 and closes at 17:00.",
        "The town library in Springfield, Missouri opens at 8:00 and closes at 18:00.",
    ),
    "same-value-two-formats-vi": (
        "Phí thường niên là 1.500.000 đồng.",
        "Phí thường niên: 1,5 triệu đồng.",
    ),
    "same-value-two-formats-en": (
        "The annual fee is $4,200,000.",
        "The annual fee is 4.2 million USD.",
    ),
    "same-value-rounded": (
        "Acme Corp revenue for fiscal year 2023 was $4.2M.",
        "Acme Corp revenue for fiscal year 2023 was $4,213,000.",
    ),
    "different-fiscal-years": (
        "Acme Corp revenue for FY2023 was $4.2M.",
        "Acme Corp revenue for FY2024 was $6.8M.",
    ),
    "both-abolish": (
        "Phụ cấp xăng xe đã bị bãi bỏ.",
        "Phụ cấp xăng xe không còn áp dụng từ năm 2024.",
    ),
}


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_lookalike_non_conflicts_stay_untouched(name: str) -> None:
    text_a, text_b = LOOKALIKES[name]
    a = analyze("a", text_a, D(2022, 1, 1))
    b = analyze("b", text_b, D(2024, 1, 1))
    pairs = detect_pairs([a, b], pair_sim(0.9))
    assert pairs == []
    res = resolve([a, b], pairs)
    assert res == Resolution(kept_ids=("a", "b"), dropped_ids=(), clusters=())


@pytest.mark.parametrize(
    "name",
    ["different-limits-two-products-vi", "probation-vs-seasonal-vi", "probation-vs-seasonal-en", "two-springfields-en"],
)
def test_subject_veto_is_what_separates_lookalikes(name: str) -> None:
    a = analyze("a", LOOKALIKES[name][0])
    b = analyze("b", LOOKALIKES[name][1])
    (pair,) = detect_pairs([a, b], pair_sim(0.9), subject_veto=False)
    assert pair.kind == "numeric"


def test_real_dispute_in_one_row_is_not_hidden_by_an_agreeing_row() -> None:
    a = analyze("a", "Biểu phí thẻ: phí thường niên 500.000 đồng; phí phát hành 200.000 đồng.", D(2022, 1, 1))
    b = analyze("b", "Biểu phí thẻ: phí thường niên 500.000 đồng; phí phát hành 250.000 đồng.", D(2023, 1, 1))
    (pair,) = detect_pairs([a, b], pair_sim(0.95))
    assert pair.evidence == ("200.000 đồng vs 250.000 đồng",)


def test_context_overlap_requirement_can_be_relaxed() -> None:
    a = analyze("a", "Phí thường niên là 500.000 đồng.")
    b = analyze("b", "Khách hàng thanh toán 700.000 đồng khi mở thẻ.")
    assert detect_pairs([a, b], pair_sim(0.9)) == []
    (pair,) = detect_pairs([a, b], pair_sim(0.9), require_context_overlap=False, min_claim_overlap=0)
    assert pair.evidence == ("500.000 đồng vs 700.000 đồng",)


def test_two_numbers_conflict_only_when_their_sentences_state_the_same_claim() -> None:
    # one document on a topic, another on the same topic: different claims, each with its number
    a = analyze("a", "Phí đổi vé chặng nội địa là 200.000 đồng. Phí đổi vé chặng quốc tế là 900.000 đồng.")
    b = analyze("b", "Phí hành lý quá cước mỗi kiện là 350.000 đồng trên mọi chuyến bay.")
    assert detect_pairs([a, b], pair_sim(0.9), require_context_overlap=False) == []
    assert detect_pairs([a, b], pair_sim(0.9), require_context_overlap=False, min_claim_overlap=0) != []
    # the same claim with a new value still conflicts
    c = analyze("c", "Phí đổi vé chặng quốc tế là 1.200.000 đồng.")
    (pair,) = detect_pairs([a, c], pair_sim(0.9))
    assert "900.000 đồng vs 1.200.000 đồng" in pair.evidence
    # known limit: word overlap does not see scope; the domestic fee's sentence is close enough too


@pytest.mark.parametrize(
    ("date_a", "date_b"),
    [(None, None), (D(2023, 5, 1), D(2023, 5, 1)), (D(2023, 5, 1), None)],
    ids=["no-dates", "same-date", "one-date-missing"],
)
def test_undatable_conflict_is_unresolved_and_keeps_both(date_a: dt.date | None, date_b: dt.date | None) -> None:
    a = analyze("a", "Giới hạn tốc độ là 100 yêu cầu/phút.", date_a)
    b = analyze("b", "Giới hạn tốc độ là 500 yêu cầu/phút.", date_b)
    pairs = detect_pairs([a, b], pair_sim(0.9))
    assert len(pairs) == 1
    res = resolve([a, b], pairs)
    assert res.kept_ids == ("a", "b")
    assert res.dropped_ids == ()
    (cluster,) = res.clusters
    assert (cluster.kind, cluster.winner_id) == ("unresolved", None)


def test_tie_for_newest_in_a_larger_cluster_is_unresolved() -> None:
    texts = ["Giới hạn 100 yêu cầu/phút.", "Giới hạn 200 yêu cầu/phút.", "Giới hạn 300 yêu cầu/phút."]
    dates = [D(2020, 1, 1), D(2024, 1, 1), D(2024, 1, 1)]
    ps = [analyze(str(i), t, d) for i, (t, d) in enumerate(zip(texts, dates))]
    res = resolve(ps, detect_pairs(ps, block_sim(3, {(0, 1): 0.9, (1, 2): 0.9, (0, 2): 0.9})))
    assert res.kept_ids == ("0", "1", "2")
    assert res.clusters[0].kind == "unresolved"


def test_datetimes_and_dates_compare() -> None:
    a = analyze("a", "Giới hạn 100 yêu cầu/phút.", D(2024, 1, 1))
    b = analyze("b", "Giới hạn 500 yêu cầu/phút.", dt.datetime(2024, 1, 1, 9, 30))
    res = resolve([a, b], detect_pairs([a, b], pair_sim(0.9)))
    assert res.kept_ids == ("b",)


@pytest.mark.parametrize("s", [0.5, 0.679])
def test_below_the_gate_no_conflict_even_with_different_numbers(s: float) -> None:
    old, new, _, _ = scenario("api-en")
    assert detect_pairs([old, new], pair_sim(s)) == []
    office_old, office_new, _, _ = scenario("office-vi")
    assert detect_pairs([office_old, office_new], pair_sim(s)) == []


def test_gate_is_inclusive_and_configurable() -> None:
    old, new, _, _ = scenario("api-en")
    assert len(detect_pairs([old, new], pair_sim(0.68))) == 1
    assert detect_pairs([old, new], pair_sim(0.74), sim_threshold=0.8) == []


def test_numeric_and_negation_on_one_pair_both_reported() -> None:
    a = analyze("a", "Phụ cấp ăn trưa là 730.000 đồng/tháng.", D(2022, 1, 1))
    b = analyze("b", "Phụ cấp ăn trưa 500.000 đồng/tháng đã bị bãi bỏ.", D(2024, 1, 1))
    pairs = detect_pairs([a, b], pair_sim(0.9))
    assert [p.kind for p in pairs] == ["numeric", "negation"]
    assert pairs[1].evidence == ("bãi bỏ",)
    res = resolve([a, b], pairs)
    assert res.kept_ids == ("b",)
    assert len(res.clusters) == 1 and len(res.clusters[0].pairs) == 2


def test_long_chain_resolves_without_recursion_error() -> None:
    n = 2000
    ps = [analyze(f"p{i}", f"Giới hạn tốc độ API là {100 + i} yêu cầu/phút.", D(2000, 1, 1) + dt.timedelta(days=i))
          for i in range(n)]
    sim = np.full((n, n), 0.1)
    np.fill_diagonal(sim, 1.0)
    idx = np.arange(n - 1)
    sim[idx, idx + 1] = sim[idx + 1, idx] = 0.9
    pairs = detect_pairs(ps, sim)
    assert len(pairs) == n - 1
    res = resolve(ps, pairs)
    assert res.kept_ids == (f"p{n - 1}",)
    assert len(res.dropped_ids) == n - 1
    (cluster,) = res.clusters
    assert len(cluster.ids) == n and cluster.winner_id == f"p{n - 1}"


def test_long_chain_components_in_worst_order() -> None:
    n = 5000
    ids = [f"n{i}" for i in range(n)]
    pairs = [(ids[i], ids[i + 1]) for i in reversed(range(n - 1))]
    (comp,) = connected_components(ids, pairs)
    assert comp == ids


def test_connected_components_order_and_singletons() -> None:
    comps = connected_components(6, [("4", "1"), ("5", "3"), ("1", "0")])
    assert comps == [["0", "1", "4"], ["2"], ["3", "5"]]
    assert connected_components(["x", "y"], []) == [["x"], ["y"]]
    assert connected_components(0, []) == []


def test_connected_components_accepts_conflict_pairs() -> None:
    pair = ConflictPair("b", "c", "numeric", ("1 vs 2",), 0.9)
    assert connected_components(["a", "b", "c"], [pair]) == [["a"], ["b", "c"]]


def test_inputs_are_not_mutated() -> None:
    fin_old, fin_new, _, s = scenario("financial-vi")
    passages = [fin_old, fin_new]
    sim = pair_sim(s)
    before_p, before_s = copy.deepcopy(passages), sim.copy()
    pairs = detect_pairs(passages, sim)
    before_pairs = list(pairs)
    resolve(passages, pairs)
    assert passages == before_p
    np.testing.assert_array_equal(sim, before_s)
    assert pairs == before_pairs
    with pytest.raises(dataclasses.FrozenInstanceError):
        fin_old.text = "x"  # type: ignore[misc]


def test_passages_can_be_built_without_analyze() -> None:
    from engines.conflicts.negation import Cue
    from engines.conflicts.numbers import Quantity

    q100 = Quantity(100.0, "req", "minute", (10, 13), "100 req/min", "rate limit")
    q500 = Quantity(500.0, "req", "minute", (10, 13), "500 req/min", "rate limit")
    a = Passage("a", "rate limit 100 req/min", D(2022, 1, 1), (q100,))
    b = Passage("b", "rate limit 500 req/min", D(2023, 1, 1), (q500,))
    c = Passage("c", "rate limit is deprecated", D(2021, 1, 1), (), (Cue("deprecated", (14, 24)),))
    pairs = detect_pairs([a, b, c], block_sim(3, {(0, 1): 0.9}))
    assert [(p.a, p.b, p.kind) for p in pairs] == [("a", "b", "numeric")]


def test_empty_input() -> None:
    assert detect_pairs([], np.zeros((0, 0))) == []
    assert resolve([], []) == Resolution((), (), ())


@pytest.mark.parametrize(
    ("sim", "match"),
    [
        (np.ones((3, 3)), r"2x2.*\(3, 3\)"),
        (np.array([[1.0, 0.9], [0.1, 1.0]]), "symmetric"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN"),
    ],
)
def test_bad_similarity_is_rejected(sim: np.ndarray, match: str) -> None:
    a, b, _, _ = scenario("api-en")
    with pytest.raises(ValueError, match=match):
        detect_pairs([a, b], sim)


def test_bad_arguments_are_rejected_with_the_value() -> None:
    a, b, _, _ = scenario("api-en")
    with pytest.raises(ValueError, match="1.5"):
        detect_pairs([a, b], pair_sim(0.9), sim_threshold=1.5)
    with pytest.raises(ValueError, match="-0.1"):
        detect_pairs([a, b], pair_sim(0.9), rel_tol=-0.1)
    with pytest.raises(ValueError, match="'api-en-old'"):
        detect_pairs([a, a], pair_sim(0.9))
    with pytest.raises(ValueError, match="'ghost'"):
        resolve([a, b], [ConflictPair(a.id, "ghost", "numeric", (), 0.9)])
    with pytest.raises(ValueError, match="'api-en-old'"):
        resolve([a, b], [ConflictPair(a.id, a.id, "numeric", (), 0.9)])
    with pytest.raises(ValueError, match="-1"):
        connected_components(-1, [])


def test_public_types_are_frozen_dataclasses() -> None:
    for cls in (Passage, ConflictPair, Cluster, Resolution):
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_same_date_documents_with_different_titles_are_companions_not_rivals():
    import datetime as dt

    from engines.conflicts.graph import analyze, are_companions, detect_pairs

    day = dt.date(2024, 1, 15)
    probation = analyze("p#0", "Thời gian thử việc tối đa là 60 ngày đối với vị trí chuyên viên.", day,
                        title="Nghỉ phép năm của nhân viên thử việc", source="leave-probation")
    seasonal = analyze("s#0", "Hợp đồng thời vụ 6 tháng được tối đa 6 ngày phép.", day,
                       title="Nghỉ phép năm của nhân viên hợp đồng thời vụ", source="leave-seasonal")
    revised = analyze("r#0", "Hợp đồng thời vụ 6 tháng được tối đa 8 ngày phép.", dt.date(2024, 6, 1),
                      title="Nghỉ phép năm của nhân viên hợp đồng thời vụ", source="leave-seasonal-2024")
    assert are_companions(probation, seasonal)
    assert not are_companions(seasonal, revised)  # a later issue of the same rule is a revision
    sim = [[1.0, 0.95, 0.95], [0.95, 1.0, 0.95], [0.95, 0.95, 1.0]]
    pairs = detect_pairs([probation, seasonal, revised], sim, sim_threshold=0.9)
    assert {(p.a, p.b) for p in pairs} == {("s#0", "r#0")}


def test_same_date_documents_of_two_departments_may_disagree_and_stay_unresolved():
    """Nothing says two departments published one set of rules: their different values are a dispute that
    recency cannot decide, so both are kept and the answer says the sources disagree."""
    import datetime as dt

    from engines.conflicts.graph import analyze, are_companions, detect_pairs, resolve

    day = dt.date(2024, 4, 1)
    head = analyze("h#0", "Tiền đặt cọc thuê bao trả sau của người nước ngoài là 500.000 đồng.", day,
                   title="Bảng cước trả sau", source="plans", authority="kinh-doanh")
    branch = analyze("b#0", "Tiền đặt cọc thuê bao trả sau của người nước ngoài là 1.000.000 đồng.", day,
                     title="Hướng dẫn của chi nhánh miền Nam", source="branch-guide", authority="chi-nhanh-mien-nam")
    same_dept = analyze("b#0", branch.text, day, title=branch.title, source="branch-guide", authority="Kinh-doanh ")
    assert not are_companions(head, branch)
    assert are_companions(head, same_dept)  # one department, one day: published together
    sim = [[1.0, 0.95], [0.95, 1.0]]
    pairs = detect_pairs([head, branch], sim, sim_threshold=0.9)
    assert [p.kind for p in pairs] == ["numeric"]
    resolution = resolve([head, branch], pairs)
    assert resolution.dropped_ids == () and [c.kind for c in resolution.clusters] == ["unresolved"]
    assert detect_pairs([head, same_dept], sim, sim_threshold=0.9) == []
