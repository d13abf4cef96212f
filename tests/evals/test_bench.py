"""The benchmark's pure parts (query forms per mtRAG row, the report from cached JSON) and its
service load counting against the real service."""

import json
import time

from app.service.keys import Keys
from engines.models.fakes import ScriptedLLM
from evals.bench.common import query_forms
from evals.bench.report import pooled, render
from evals.dataset import parse_rows
from tests.app.test_service import dept_corpus, service, serving  # noqa: F401


def _row(turn, history, question, rewrite):
    return parse_rows([json.dumps({"conv_id": "c", "turn": turn, "history": history, "question": question,
                                   "type": "non_standalone", "gold_doc_ids": ["d"], "rewrite": rewrite})])[0]


def test_query_forms_follow_the_benchmark_definitions() -> None:
    row = _row(3, [["user", "Q1"], ["assistant", "A1"], ["user", "Q2"], ["assistant", "A2"]], "Q3", "R3")
    forms = query_forms(row, "C3")
    assert forms["lastturn"] == ["Q3"] and forms["questions"] == ["Q1\nQ2\nQ3"]
    assert forms["prev+last"] == ["Q2 Q3"] and forms["rewrite"] == ["R3"]
    assert forms["condense"] == ["C3"] and forms["condense+lastturn"] == ["C3", "Q3"]
    assert query_forms(row, "Q3")["condense+lastturn"] == ["Q3"]  # unchanged rewrite: one query, not two
    assert forms["lastturn&prev+last"] == ["Q3", "Q2 Q3"] and forms["lastturn&questions"] == ["Q3", "Q1\nQ2\nQ3"]
    first = _row(1, [], "Q1", None)
    assert query_forms(first, None)["lastturn&prev+last"] == ["Q1"]  # turn 1: one query, not the same one twice


def test_report_pools_domains_by_task_count(tmp_path) -> None:
    cell = lambda r5, n: {"recall@5": r5, "recall@10": r5, "ndcg@5": r5, "ndcg@10": r5, "n": n}
    counts = {"unanswerable": 2, "refused_unanswerable": 1, "answerable": 8, "refused_answerable": 0}
    gates = {"gates": {"corpus": {**counts, "min_vector": 0.85, "refused_unanswerable": 2},
                       "model": {**counts, "min_vector": 0.83}}}
    mtrag = {d: {"n_rows": 10, "corpus_chunks": 100, "condense_ms_p50": 5000,
                 "refusal": counts if d == "a" else gates,  # "a": a record from before the gates were compared
                 "scores": {"lastturn": {"hybrid": {"turn1": cell(v, 2), "later": cell(v, n), "all": cell(v, n + 2)}}}}
             for d, v, n in (("a", 0.2, 10), ("b", 0.5, 30))}
    assert abs(pooled(mtrag, "lastturn", "hybrid", "later", "recall@5") - (0.2 * 10 + 0.5 * 30) / 40) < 1e-9
    (tmp_path / "mtrag.json").write_text(json.dumps(mtrag))
    text, plots = render(tmp_path, {"cpus": 2, "platform": "linux", "python": "3.11", "packages": {"x": "1"}},
                         ["python -m evals.bench"], tmp_path)
    assert "| hybrid | lastturn | 0.350 | 0.425 |" in text and "| a | model | – | 1/2 | 0/8 | 5.0 s |" in text
    assert "| b | corpus | 0.850 | 2/2 | 0/8 | 5.0 s |" in text and "| b | model | 0.830 | 1/2 | 0/8 | 5.0 s |" in text
    assert plots and plots[0].exists()


def test_goals_are_marked_from_the_numbers_not_by_hand() -> None:
    from evals.bench.report import goals

    cell = lambda r5, n: {"recall@5": r5, "ndcg@5": r5, "n": n}
    mtrag = {"d": {"scores": {"condense+lastturn": {"hybrid": {"turn1": cell(0.7, 4), "later": cell(0.2, 10)}}}}}
    stock = {"d": {"retrieval": {"stock": {"turn1": cell(0.5, 4), "turn2": cell(0.4, 5), "all": cell(0.4, 9)},
                                 "ours": {"turn1": cell(0.6, 4), "turn2": cell(0.3, 5), "all": cell(0.5, 9)}},
                   "turns": {"stock": [{"turn": 4, "total_ms": 9000}], "ours": [{"turn": 4, "total_ms": 3000}]}}}
    text = "\n".join(goals(mtrag, stock, {"ratio": 0.95}, {"sizes": {"1000": {"p50_ms": 2.0}, "25000": {"p50_ms": 12.0}}}))
    assert "| 0.200 | **no** |" in text and "| turn-1 R@5 >= 0.65 | 0.700 | yes |" in text
    assert "worse on turn2 | **no** |" in text  # the "all" bucket being better does not hide turn 2
    assert "3.0 s vs 9.0 s | yes |" in text and "p50 12.0 ms | **no** |" in text and "95% | yes |" in text


def test_a_missing_mtrag_folder_stops_with_a_message_naming_it(tmp_path) -> None:
    import pytest

    from evals.bench.__main__ import main

    with pytest.raises(SystemExit, match=r"could not convert .*nowhere.*--src"):
        main(["mtrag", "--domains", "fiqa", "--src", str(tmp_path / "nowhere"), "--work", str(tmp_path / "w")])
    assert not (tmp_path / "w" / "idx").exists()  # nothing half-built


def test_stock_buckets_split_follow_ups_by_type_where_rows_are_labelled() -> None:
    from evals.bench.stock import stock_buckets

    rows = parse_rows([json.dumps({"conv_id": "c", "turn": t, "history": [["user", "q"], ["assistant", "a"]] * (t - 1),
                                   "question": f"Q{t}", "type": kind, "gold_doc_ids": ["d"]})
                       for t, kind in ((1, "standalone"), (2, "non_standalone"), (3, "standalone"), (4, "non_standalone"))])
    by_id = {r.key: r for r in rows}
    per_row = {r.key: {"recall@5": float(r.turn % 2), "hit@5": float(r.turn % 2), "ndcg@5": 0.5} for r in rows}
    out = stock_buckets(per_row, by_id)
    assert out["turn1"]["hit@5"] == 1.0 and out["turn4+"]["n"] == 1 and out["all"]["n"] == 4
    assert out["standalone/turn2+"] == {"n": 1, "recall@5": 1.0, "hit@5": 1.0, "ndcg@5": 0.5}
    assert out["non_standalone/turn2+"]["n"] == 2 and out["non_standalone/turn2+"]["hit@5"] == 0.0


def test_stock_set_needs_its_corpus(capsys, tmp_path) -> None:
    import pytest

    from evals.bench.__main__ import main

    with pytest.raises(SystemExit):
        main(["stock", "--stock-set", "rows.jsonl", "--work", str(tmp_path)])
    assert "--stock-set and --stock-corpus go together" in capsys.readouterr().err


class SlowLLM(ScriptedLLM):
    """Writes each answer in 0.4 s, so concurrent turns meet a full LLM slot."""

    def _reply(self, prompt: str) -> str:
        time.sleep(0.4)
        return super()._reply(prompt)


def test_the_service_load_counts_turns_turned_away_apart_from_errors(service, tmp_path) -> None:  # noqa: F811
    from evals.bench.service import run_first_turns, run_service_load

    turns = service(SlowLLM(["Phép năm chuyển tối đa 5 ngày."] * 20), slots=1, queue=0)
    with serving(turns, Keys.load(None)) as base:
        first = run_first_turns(base, ["Phép năm được chuyển mấy ngày?"])
        [level] = run_service_load(base, [["Phép năm được chuyển mấy ngày?"]], [4])
    assert len(first["total_ms"]) == 1 and first["errors"] == 0 and first["total_ms"][0] >= 400
    # one slot, no queue, four sessions at once: the first is answered, the others get 503 at once
    assert level["sessions"] == 4 and level["errors"] == 0 and level["cross_talk"] == 0
    assert level["rejected_503"] >= 1 and level["turns"] + level["rejected_503"] == 4
    assert level["share_503"] == round(level["rejected_503"] / 4, 3)


def test_the_report_shows_503s_and_the_first_turn_against_a_warm_one(tmp_path) -> None:
    pct = {"p50": 900.0, "p95": 2000.0}
    level = {"sessions": 50, "turns": 240, "turns_per_s": 1.5, "total_ms": pct, "first_token_ms": pct,
             "errors": 0, "cross_talk": 0, "rejected_503": 10, "share_503": 0.04}
    old = {**level, "sessions": 2}
    del old["rejected_503"], old["share_503"]  # measured before 503s were counted apart
    measured = {"local": {"levels": [old, level], "conversations": 9,
                         "in_process": {"turns": 5, "total_ms": pct, "first_token_ms": pct},
                         "first_after_ready": {"total_ms": [3000, 2500], "errors": 0},
                         "next_user": {"total_ms": [1500, 2400], "errors": 0}}}
    (tmp_path / "service.json").write_text(json.dumps(measured))
    text, _ = render(tmp_path, {"cpus": 2, "platform": "linux", "python": "3.11", "packages": {}}, [], tmp_path)
    assert "| local | 50 | 240 | 1.5 | 900 / 2000 | 900 / 2000 | 10 (4%) | 0 | 0 |" in text
    assert "| local | 2 | 240 | 1.5 | 900 / 2000 | 900 / 2000 | – | 0 | 0 |" in text
    assert "first turn right after `/readyz` said 200 took 3000 ms" in text and ": 2.0x a warm turn." in text
