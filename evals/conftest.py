"""`pytest evals/`: the bundled eval set replayed through the engine with the embedded defaults
(multilingual-e5 embeddings, the packaged local LLM), on both splits: floors assert on the frozen
test split, dev is measured beside it. One evaluation per split and session, shared by the floor
tests; the index is built once in a temporary folder. The held-out test split's supersession turns
are replayed here too, for the conflict floors (evals/test_conflict_floors.py), and an English mtRAG
slice for the fusion floor (evals/test_english_fusion.py): only this conftest and the command lines
compose pipelines with app."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.compose import build_models, build_pipeline, build_reranker, ingest_path, open_index, open_pipeline
from app.config import SAMPLE_CORPUS, load_settings
from evals.dataset import load_rows
from evals.evaluation import run_evaluation
from evals.llm_cache import CachedLLM

BANK = Path(__file__).resolve().parent.parent / "data" / "eval" / "bank"
HELDOUT = Path(__file__).resolve().parent.parent / "data" / "eval" / "heldout"
MTRAG_FIQA = HELDOUT.parent / "mtrag-fiqa"
HELDOUT3 = HELDOUT.parent / "heldout3"
SPLITS = ("test", "dev")


@pytest.fixture(scope="session")
def eval_settings(tmp_path_factory):
    """Answers are the quoted clauses (answer_mode "extract") without the yes/no check: no answer
    LLM call, so the run costs the condense calls only, and refusals are the retrieval gate's alone."""
    return load_settings(index_dir=tmp_path_factory.mktemp("eval") / "index", log_dir=None,
                         answer_mode="extract", answer_check=False)


@pytest.fixture(scope="session")
def eval_models(eval_settings, tmp_path_factory):
    """One embedding model and one local LLM for every replay of the session; condense replies are
    cached for the session (greedy decoding: a cached reply is what the model says), so a second
    configuration over the same rows pays only for what differs."""
    models = build_models(eval_settings)
    cache = tmp_path_factory.mktemp("condense") / "replies.jsonl"
    return replace(models, condense_llm=CachedLLM(models.condense_llm, cache))


@pytest.fixture(scope="session")
def eval_pipeline(eval_settings, eval_models):
    ingest_path(eval_settings, SAMPLE_CORPUS, embed_model=eval_models.embed_model,
                companion_embed_model=eval_models.companion_embed_model)
    return open_pipeline(eval_settings, eval_models)


@pytest.fixture(scope="session")
def supersession_answers(tmp_path_factory, eval_settings, eval_models):
    """(conflict check on, conflict check off): answers on the supersession turns, one index and the
    session's models, the condense replies shared (the second run asks the model nothing new)."""
    root = tmp_path_factory.mktemp("heldout")
    settings = eval_settings.model_copy(update={"index_dir": root / "index"})
    ingest_path(settings, HELDOUT / "corpus", embed_model=eval_models.embed_model,
                companion_embed_model=eval_models.companion_embed_model)
    models = eval_models
    index = open_index(settings)
    rows = [r for r in load_rows(HELDOUT / "test" / "conversations.jsonl") if r.stale_value]
    out = []
    for overrides in ({}, {"conflicts": False}):
        pipeline = build_pipeline(settings.model_copy(update=overrides), models, index)
        result = run_evaluation(pipeline, rows, configs=["condense"], k=5, retrieval_only=False)
        done = result.rows["condense"]
        out.append({"n": len(done), "newer": sum(bool(r.must_contain_ok) for r in done),
                    "stale": sum(bool(r.stale) for r in done)})
    return out


@pytest.fixture(scope="session")
def english_fusion(tmp_path_factory, eval_settings, eval_models):
    """(product default, second embedder's weight 0): English multi-turn retrieval on the mtRAG FiQA
    slice, through the benchmark's own rewrites (no LLM in the loop), one index for both."""
    settings = eval_settings.model_copy(update={"index_dir": tmp_path_factory.mktemp("fiqa") / "index"})
    ingest_path(settings, MTRAG_FIQA / "corpus.jsonl", embed_model=eval_models.embed_model,
                companion_embed_model=eval_models.companion_embed_model)
    index = open_index(settings)
    rows = load_rows(MTRAG_FIQA / "rows.jsonl")
    out = []
    for overrides in ({}, {"companion_weight": 0.0}):
        pipeline = build_pipeline(settings.model_copy(update=overrides), eval_models, index)
        out.append(run_evaluation(pipeline, rows, configs=["reference"], k=5, retrieval_only=True)
                   .summary["reference"])
    return out


@pytest.fixture(scope="session")
def heldout3_pools(tmp_path_factory, eval_settings, eval_models):
    """heldout3 test's fused pools of 20 (reference rewrites, no LLM) and the packaged reader, for the
    reader's floor (evals/test_reader_floors.py)."""
    from evals.headroom import PoolRecorder, collect

    settings = eval_settings.model_copy(update={"index_dir": tmp_path_factory.mktemp("heldout3") / "index"})
    ingest_path(settings, HELDOUT3 / "corpus", embed_model=eval_models.embed_model,
                companion_embed_model=eval_models.companion_embed_model)
    reader = build_reranker(settings.model_copy(update={"reranker": "reader"}))
    recorder = PoolRecorder(reads_conversation=True)
    pipeline = build_pipeline(settings.model_copy(update={"reranker": ""}), replace(eval_models, reranker=recorder),
                              open_index(settings))
    result = run_evaluation(pipeline, load_rows(HELDOUT3 / "test" / "conversations.jsonl"), configs=["reference"],
                            k=5, retrieval_only=True)
    return collect(result.rows["reference"], recorder), reader


#: The database road's floor replays the first conversations of its frozen test split (sized for CI;
#: the whole split is measured by ``python -m evals.sql``, docs/sql.md).
SQL_SET = HELDOUT.parent / "sql"
SQL_FLOOR_CONVERSATIONS = 25


@pytest.fixture(scope="session")
def sql_test_runs(tmp_path_factory, eval_models):
    """The SQL set's test conversations replayed live, with the database road and without it (the
    ``sql`` step taken out), on the session's models: {"on": summary, "off": summary}."""
    from app.config import Settings
    from evals.sql import evaluate

    steps = [s for s in Settings.model_fields["steps"].default_factory() if s != "sql"]
    out = {}
    for name, extra in (("on", {}), ("off", {"steps": steps})):
        _, summary = evaluate(SQL_SET / "test" / "questions.jsonl", SQL_SET, tmp_path_factory.mktemp(f"sql-{name}"),
                              limit=SQL_FLOOR_CONVERSATIONS, models=eval_models, answer_mode="extract",
                              answer_check="off", **extra)
        out[name] = summary
    MEASURED["sql"] = out
    return out


#: What the floors measured, for the terminal summary (test with dev beside).
MEASURED: dict[str, object] = {}


@pytest.fixture(scope="session")
def results(eval_pipeline):
    """Per split: lastturn (rewriting off) and condense (the product) on every row, answers quoted."""
    out = {split: run_evaluation(eval_pipeline, load_rows(BANK / split / "conversations.jsonl"),
                                 configs=["lastturn", "condense"], k=5, retrieval_only=False)
           for split in SPLITS}
    MEASURED.update(out)
    return out


@pytest.fixture(scope="session")
def graded_results(eval_settings, eval_models, eval_pipeline, results):
    """The bundled test split again with the graded check on (``answer_check=graded``), after ``results``
    so every condense reply is cached: the run costs the check's one-token calls."""
    settings = eval_settings.model_copy(update={"answer_check": "graded"})
    pipeline = build_pipeline(settings, eval_models, eval_pipeline.index)
    result = run_evaluation(pipeline, load_rows(BANK / "test" / "conversations.jsonl"), configs=["condense"], k=5,
                            retrieval_only=False)
    MEASURED["graded"] = result
    return result


def pytest_terminal_summary(terminalreporter) -> None:
    if not MEASURED:
        return
    lines = []
    for config in ("condense", "lastturn") if all(split in MEASURED for split in SPLITS) else ():
        cells = []
        for split in SPLITS:
            s = MEASURED[split].summary[config]
            answers = s["answers"]["by_turn"]["turn2+"]
            cells.append(f"{split}: mrr@5 non_standalone/turn2+ {s['non_standalone/turn2+']['mrr@5']:.3f}, "
                         f"hit@5 turn1 {s['all/turn1']['hit@5']:.2f}, refusal {s['refusal']['refusal_rate']:.2f} / "
                         f"false {s['refusal']['false_refusal_rate']:.2f}, must_contain turn2+ "
                         f"{answers['must_contain_hits']}/{answers['n_must_contain']}")
        lines.append(f"{config:9} " + " | ".join(cells))
    if "graded" in MEASURED:
        refusal = MEASURED["graded"].summary["condense"]["refusal"]
        lines.append(f"graded check, test: refusal {refusal['refusal_rate']:.2f} / false {refusal['false_refusal_rate']:.2f}")
    if "sql" in MEASURED:
        for name, summary in MEASURED["sql"].items():
            e, w = summary["execution"], summary["write_requests_refused"]
            lines.append(f"database road {name}, SQL test (first {SQL_FLOOR_CONVERSATIONS} conversations): execution "
                         f"{e['right']}/{e['n']}, write requests refused {w['right']}/{w['n']}, "
                         f"road {summary['road']['right']}/{summary['road']['n']}")
    terminalreporter.write_sep("-", "bundled eval set, floors on test (dev beside)")
    for line in lines:
        terminalreporter.write_line(line)
