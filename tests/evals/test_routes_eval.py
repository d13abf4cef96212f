"""The router measurement: sweep and the choice of threshold under the false-decline budget."""

from evals.routes import choose, load_route_rows, sweep


def test_threshold_choice_never_spends_more_than_the_false_decline_budget(tmp_path) -> None:
    scored = [
        ({"route": "docs"}, {"docs": 0.80, "direct": 0.86, "out_of_scope": 0.7}),   # a docs question near small talk
        ({"route": "docs"}, {"docs": 0.95, "direct": 0.80, "out_of_scope": 0.7}),
        ({"route": "direct"}, {"docs": 0.80, "direct": 0.95, "out_of_scope": 0.7}),
        ({"route": "out_of_scope"}, {"docs": 0.80, "direct": 0.7, "out_of_scope": 0.84}),
    ]
    results = sweep(scored, [0.80, 0.85, 0.90], margin=0.02)
    assert [r["false_decline"] for r in results] == [0.5, 0.5, 0.0]
    best = choose(results)
    assert best["threshold"] == 0.90 and best["recall"]["direct"] == 1.0 and best["recall"]["out_of_scope"] == 0.0


def test_eval_set_questions_count_as_documents(tmp_path) -> None:
    routes = tmp_path / "r.jsonl"
    routes.write_text('{"text": "Xin chào", "route": "direct"}\n', encoding="utf-8")
    eval_set = tmp_path / "e.jsonl"
    eval_set.write_text('{"question": "Phí SKU-4471?"}\n', encoding="utf-8")
    rows = load_route_rows(routes, eval_set)
    assert [r["route"] for r in rows] == ["direct", "docs"]
