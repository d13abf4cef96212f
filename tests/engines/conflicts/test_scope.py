"""The scope judge is shown the two claim sentences behind a detected conflict, not whole passages."""

from __future__ import annotations

from engines.conflicts.scope import Side, claim_pairs, scope_of

MEMBERS = Side("Hội viên được 10 vé miễn phí mỗi năm. Vé mất không cấp lại.", "Quy chế hội viên 2025")
STAFF = Side("Nhân viên được 6 vé miễn phí mỗi năm. Liên hệ phòng hành chính.", "Phúc lợi nhân viên")


def test_each_value_is_read_in_the_sentence_that_states_it_with_its_title() -> None:
    assert claim_pairs(["10 vé vs 6 vé"], MEMBERS, STAFF) == [
        ("Quy chế hội viên 2025\nHội viên được 10 vé miễn phí mỗi năm.",
         "Phúc lợi nhân viên\nNhân viên được 6 vé miễn phí mỗi năm.")]


def test_evidence_without_values_falls_back_to_the_openings() -> None:
    [(a, b)] = claim_pairs(["bãi bỏ"], MEMBERS, STAFF)
    assert "Vé mất không cấp lại." in a and "Liên hệ phòng hành chính." in b


def test_a_pair_scores_its_best_claim_pair_in_one_batch() -> None:
    batches = []

    def judge(pairs):
        batches.append(list(pairs))
        return [0.9 if "10 vé" in a else 0.1 for a, _ in pairs]

    two = Side("Hội viên được 10 vé. Khách được 2 vé.", "A")
    other = Side("Hội viên được 12 vé. Khách được 3 vé.", "B")
    assert scope_of([["2 vé vs 3 vé", "10 vé vs 12 vé"], ["6 vé vs 10 vé"]], [(two, other), (STAFF, MEMBERS)],
                    judge) == [0.9, 0.1]
    assert len(batches) == 1 and len(batches[0]) == 3


def test_a_value_is_not_found_inside_a_longer_number() -> None:
    guests = Side("Khách được 16 vé. Hội viên được 6 vé miễn phí.", "Quy chế")
    [(a, _)] = claim_pairs(["6 vé vs 10 vé"], guests, MEMBERS)
    assert a == "Quy chế\nHội viên được 6 vé miễn phí."
