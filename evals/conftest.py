"""`pytest evals/`: the bundled eval set replayed through the engine with the embedded defaults
(multilingual-e5 embeddings, the packaged local LLM). One evaluation per session, shared by the
floor tests; the index is built once in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.compose import build_models, ingest_path, open_pipeline
from app.config import SAMPLE_CORPUS, load_settings
from evals.dataset import load_rows
from evals.evaluation import run_evaluation

EVAL_SET = Path(__file__).resolve().parent.parent / "data" / "eval" / "sample_conversations.jsonl"


@pytest.fixture(scope="session")
def eval_settings(tmp_path_factory):
    """Answers are the quoted clauses (answer_mode "extract") without the yes/no check: no answer
    LLM call, so the run costs the condense calls only, and refusals are the retrieval gate's alone."""
    return load_settings(index_dir=tmp_path_factory.mktemp("eval") / "index", log_dir=None,
                         answer_mode="extract", answer_check=False)


@pytest.fixture(scope="session")
def eval_pipeline(eval_settings):
    ingest_path(eval_settings, SAMPLE_CORPUS)
    return open_pipeline(eval_settings, build_models(eval_settings))


@pytest.fixture(scope="session")
def eval_rows():
    return load_rows(EVAL_SET)


@pytest.fixture(scope="session")
def retrieval_result(eval_pipeline, eval_rows):
    """lastturn (rewriting off) and condense (the product) on every row, answers quoted."""
    return run_evaluation(eval_pipeline, eval_rows, configs=["lastturn", "condense"], k=5, retrieval_only=False)
