"""Shared fixtures: a small bilingual corpus on disk and a pipeline over it with test doubles."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from app.compose import build_pipeline, ingest_path, new_engine, open_index
from app.config import load_settings
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM

DOCS = {
    "leave-probation": ("Nghỉ phép năm của nhân viên thử việc", "2024-01-15",
                        "Nhân viên thử việc không được hưởng phép năm trong thời gian thử việc. "
                        "Thời gian thử việc được tính vào thâm niên khi ký hợp đồng chính thức."),
    "leave-seasonal": ("Nghỉ phép của lao động hợp đồng thời vụ", "2024-01-15",
                       "Người lao động theo hợp đồng thời vụ được nghỉ 1 ngày phép cho mỗi tháng làm việc đủ."),
    "leave-seasonal-carryover": ("Cộng dồn phép của hợp đồng thời vụ", "2024-02-01",
                                 "Ngày phép của hợp đồng thời vụ không được cộng dồn sang hợp đồng sau; "
                                 "phép chưa nghỉ được thanh toán bằng tiền khi hết hợp đồng."),
    "card-sku-4471": ("Thẻ tín dụng Vàng", "2024-03-01",
                      "Thẻ tín dụng mã SKU-4471 có phí thường niên 200.000 đồng, miễn phí năm đầu."),
    "card-sku-4417": ("Thẻ tín dụng Bạch Kim", "2024-03-01",
                      "Thẻ tín dụng mã SKU-4417 có phí thường niên 1.500.000 đồng."),
    "loan-home": ("Vay mua nhà", "2024-05-01",
                  "Điều 4.2: lãi suất ưu đãi vay mua nhà là 8,5%/năm trong 12 tháng đầu. "
                  "Tỷ lệ cho vay tối đa 70% giá trị tài sản. Mẫu đơn 05/TD."),
    "api-limits": ("API rate limits", "2023-09-01",
                   "The public API allows 500 requests per minute per key since version 2.0."),
}


def write_doc(folder: Path, doc_id: str, title: str, date: str, body: str, **extra: object) -> Path:
    lines = [f"doc_id: {doc_id}", f"title: {title}", f"date: {date}"] + [f"{k}: {v}" for k, v in extra.items()]
    path = folder / f"{doc_id}.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + textwrap.dedent(body) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _router_off_with_fake_models(request, monkeypatch):
    """Unit tests run on hashed embeddings, for which the router has no calibrated threshold:
    they switch it on explicitly where they test it. End-to-end tests keep the real default."""
    if request.node.get_closest_marker("e2e") is None:
        monkeypatch.setenv("TURNRAG_ROUTER", "off")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for doc_id, (title, date, body) in DOCS.items():
        write_doc(folder, doc_id, title, date, body)
    return folder


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None,
                         refusal_min_vector=0.25, top_k=3, candidate_k=10, conflicts=False)


@pytest.fixture
def make_pipeline(settings, corpus):
    """Pipelines over one ingested index: ``make_pipeline(llm=..., answer_mode="extract", ...)``
    builds one with those models and settings (the pipeline is built once; its settings do not change)."""
    ingest_path(settings, corpus)
    index = open_index(settings)

    def make(*, llm=None, condense_llm=None, embed_model=None, reranker=None, **overrides):
        llm = llm or ScriptedLLM()
        models = Models(embed_model=embed_model or HashEmbedding(), llm=llm, condense_llm=condense_llm or llm,
                        reranker=reranker)
        return build_pipeline(load_settings(**{**settings.model_dump(), **overrides}), models, index)

    return make


@pytest.fixture
def pipeline(make_pipeline):
    return make_pipeline()


def engine_over(pipeline, **session_options):
    """A chat engine over a new session of ``pipeline``."""
    return new_engine(pipeline, **session_options)
