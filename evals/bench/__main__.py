"""The benchmark's command line, and the one place it meets the product's composition root."""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.compose import (
    build_models,
    build_pipeline,
    ingest_path,
    open_index,
    open_pipeline,
)
from app.config import SAMPLE_CORPUS, Settings, load_settings
from app.console import ProgressBars
from engines.models import Models
from engines.models.fakes import HashEmbedding
from engines.models.registry import build_embedding, calibration_for
from engines.pipeline import Pipeline
from evals.bench import __doc__ as DESCRIPTION
from evals.bench.common import DOMAINS, load, machine, save
from evals.bench.mtrag import run_mtrag
from evals.bench.report import render
from evals.bench.scale import run_ingest, run_scale
from evals.bench.stock import run_stock
from evals.bench.turns import run_turns
from evals.dataset import EvalRow, load_rows
from evals.llm_cache import CachedLLM

PARTS = ("mtrag", "stock", "ingest", "scale", "turns", "service", "report")
SAMPLE_DATASET = SAMPLE_CORPUS.parent / "eval" / "bank" / "dev" / "conversations.jsonl"


class ProductComposer:
    """Pipelines the way the product builds them (``app.compose``), cached per domain."""

    def __init__(self, work: Path, src: Path, progress: ProgressBars, embedding: str = "e5-small") -> None:
        self.work, self.src, self.progress, self.embedding = work, src, progress, embedding
        self._models: Models | None = None
        self._ingested: set[str] = set()
        #: labelled eval sets measured like a domain: name -> (conversations.jsonl, corpus)
        self.eval_sets: dict[str, tuple[Path, Path]] = {}

    def add_eval_set(self, rows: Path, corpus: Path) -> str:
        """Register ``data/eval/<set>/<split>/conversations.jsonl`` under the name ``<set>-<split>``."""
        for path, what in ((rows, "--stock-set"), (corpus, "--stock-corpus")):
            if not path.exists():
                raise SystemExit(f"{what} {path}: no such file or folder")
        name = f"{rows.parent.parent.name}-{rows.parent.name}"
        self.eval_sets[name] = (rows, corpus)
        return name

    def _domain_settings(self, domain: str, top_k: int) -> Settings:
        return load_settings(index_dir=self.work / "idx" / f"{domain}-{self.embedding}", embedding=self.embedding,
                             chunk_size=1024, log_dir=None, top_k=top_k, candidate_k=50)

    def models(self) -> Models:
        if self._models is None:
            self._models = build_models(load_settings(embedding=self.embedding, log_dir=None))
        return self._models

    def mtrag_data(self, domain: str) -> Path:
        """The converted rows and corpus of one domain under ``work/mtrag`` (converted once)."""
        data = self.work / "mtrag"
        if not (data / f"{domain}.jsonl").exists() or not (data / f"{domain}_corpus.jsonl").exists():
            from evals.datasets import mtrag

            if mtrag.main([str(self.src), "--domain", domain, "--out", str(data)]) != 0:
                # the converter said what is wrong with SRC; stop here rather than fail later on a missing file
                raise SystemExit(f"mtRAG {domain}: could not convert {self.src} (see above); pass --src PATH/TO/mtrag")
        return data

    def domain(self, domain: str, *, top_k: int = 10, llm: Any = None) -> tuple[Pipeline, list[EvalRow]]:
        if domain in self.eval_sets:  # the product's own chunking and candidates, not mtRAG's passages
            rows_path, corpus = self.eval_sets[domain]
            settings = load_settings(index_dir=self.work / "idx" / f"{domain}-{self.embedding}",
                                     embedding=self.embedding, log_dir=None, top_k=top_k)
        else:
            data = self.mtrag_data(domain)
            rows_path, corpus = data / f"{domain}.jsonl", data / f"{domain}_corpus.jsonl"
            settings = self._domain_settings(domain, top_k)
        models = self.models()
        if domain not in self._ingested:
            ingest_path(settings, corpus, embed_model=models.embed_model,
                        on_progress=lambda d, t: self.progress(f"{domain} embedding", d, t),
                        companion_embed_model=models.companion_embed_model)
            self._ingested.add(domain)
        if llm is not None:
            models = replace(models, llm=llm, condense_llm=llm)
        else:  # greedy condense replies are cached, so a killed run resumes without redoing them
            models = replace(models, condense_llm=CachedLLM(models.condense_llm,
                                                            self.work / "cache" / f"condense-{domain}.jsonl"))
        return build_pipeline(settings, models, open_index(settings)), load_rows(rows_path)

    def ingest_rate(self, corpus: Path, n: int) -> dict[str, Any]:
        from engines.corpus.documents import load_corpus
        from engines.text import searchable_text

        sample = self.work / "ingest-sample.jsonl"
        sample.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
        embed = build_embedding(self.embedding)
        docs = load_corpus(sample)
        texts = [searchable_text(d.text, d.metadata) for d in docs]
        embed.get_text_embedding("warm up")  # the model loads on first use
        t0 = time.perf_counter()
        embed.get_text_embedding_batch(texts)
        raw_s = time.perf_counter() - t0
        index_dir = self.work / f"ingest-idx-{int(time.time())}"
        settings = load_settings(index_dir=index_dir, embedding=self.embedding, chunk_size=1024, log_dir=None)
        t0 = time.perf_counter()
        report = ingest_path(settings, sample, embed_model=embed)
        e2e_s = time.perf_counter() - t0
        shutil.rmtree(index_dir, ignore_errors=True)
        from evals.bench.common import peak_rss_mb

        return {"passages": n, "chunks": report.total_chunks, "embed_only_per_s": round(len(texts) / raw_s, 2),
                "end_to_end_per_s": round(report.total_chunks / e2e_s, 2), "ratio": round(raw_s / e2e_s, 3),
                "peak_rss_mb": round(peak_rss_mb())}

    def scale_pipeline(self, corpus: Path, size: int) -> Pipeline:
        # The conflict gate of the product's embedder, so the conflict check does the work it does there.
        settings = load_settings(index_dir=self.work / "idx" / f"scale-{size}", embedding="fake", llm="fake",
                                 chunk_size=1024, log_dir=None,
                                 conflict_similarity=calibration_for(self.embedding).conflict_similarity)
        embed = HashEmbedding(dim=384)
        ingest_path(settings, corpus, embed_model=embed)
        return open_pipeline(settings, build_models(settings, embed_model=embed))

    def query_embedder(self) -> Any:
        return self.models().embed_model

    def sample(self, answer_mode: str | None = None) -> Pipeline:
        settings = load_settings(index_dir=self.work / "idx" / "sample", log_dir=None, answer_mode=answer_mode)
        ingest_path(settings, SAMPLE_CORPUS, embed_model=self.models().embed_model)
        return build_pipeline(settings, self.models(), open_index(settings))


SERVICE_SETUPS = {
    # the service's own overhead: scripted LLM and hashed vectors, nothing slow behind it
    # (its scripted answers are written, so each takes the one LLM slot: the queue is opened wide)
    "scripted": {"TURNRAG_LLM": "fake", "TURNRAG_EMBEDDING": "fake", "TURNRAG_REFUSAL_MIN_VECTOR": "0.25",
                 "TURNRAG_MAX_QUEUED_TURNS": "64"},
    # the embedded defaults, admission included: e5-small and the packaged model on llama.cpp's server
    "local": {},
}


def run_service(work: Path, dataset: Path, setups: dict[str, list[int]]) -> dict[str, Any]:
    """Start ``python -m app.serve`` per setup on loopback and load it; the in-process path beside it."""
    import os
    import socket
    import subprocess

    import httpx

    from evals.bench.service import run_first_turns, run_in_process, run_service_load
    from evals.bench.turns import conversations

    convs = [c[:5] for c in conversations(dataset, 1000) if len(c) >= 3]
    result: dict[str, Any] = load(work / "service.json") or {}
    for setup, levels in setups.items():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        index = work / "idx" / f"service-{setup}"
        env = {**os.environ, "TURNRAG_LOG_DIR": "", "TURNRAG_SESSION_STORE": str(work / f"service-{setup}.sqlite3"),
               **SERVICE_SETUPS[setup]}
        proc = subprocess.Popen([sys.executable, "-m", "app.serve", "--port", str(port), "--index", str(index)],
                                env=env, stdout=subprocess.DEVNULL, stderr=(work / f"service-{setup}.log").open("w"))
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 600
            while True:
                try:
                    if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"service ({setup}) did not start: see {work / f'service-{setup}.log'}")
                time.sleep(0.5)
            first = run_first_turns(base, convs[0][:2])  # right after ready: what a first user waits
            # a second user right after, with other questions (the same ones would hit the query caches)
            warm = run_first_turns(base, convs[1][:2])
            loaded = run_service_load(base, convs, levels)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        overrides = {k.removeprefix("TURNRAG_").lower(): v for k, v in SERVICE_SETUPS[setup].items()}
        settings = load_settings(index_dir=index, log_dir=None, **overrides)
        in_process = run_in_process(open_pipeline(settings, build_models(settings)), convs[: max(levels[:1] or [1])])
        result[setup] = {"levels": loaded, "in_process": in_process, "conversations": len(convs),
                         "first_after_ready": first, "next_user": warm}
        save(work / "service.json", result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", default=["all"], help=f"{', '.join(PARTS)} or all (all but turns and service)")
    parser.add_argument("--src", type=Path, default=Path("../shared/benchmarks/mtrag"), help="mtRAG folder")
    parser.add_argument("--work", type=Path, default=Path("runs/bench"), help="cache folder (indexes, JSON)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks.md"))
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--stock-domain", default="fiqa", help="stock: the mtRAG domain compared")
    parser.add_argument("--stock-set", type=Path,
                        help="stock: a labelled eval set instead (data/eval/<set>/<split>/conversations.jsonl; "
                             "needs --stock-corpus), reported as <set>-<split>")
    parser.add_argument("--stock-corpus", type=Path, help="stock: the documents of --stock-set")
    parser.add_argument("--sample-convs", type=int, default=2, help="conversations replayed with the LLM (stock)")
    parser.add_argument("--reuse-turns", action="store_true",
                        help="stock: keep the cached whole-turn LLM measurements, recompute retrieval only")
    parser.add_argument("--ingest-sample", type=int, default=300)
    parser.add_argument("--sizes", default="1000,10000,25000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--dataset", type=Path, default=SAMPLE_DATASET, help="turns: the conversations replayed")
    parser.add_argument("--conversations", type=int, default=4, help="turns: conversations per answer mode")
    parser.add_argument("--retrieval-conversations", type=int, default=20, help="turns: conversations, retrieval pass")
    parser.add_argument("--answer-modes", default="extract,generate", help="turns: one whole-turn pass per mode")
    parser.add_argument("--service-levels", default="scripted=1,8,32;local=1,2",
                        help="service: concurrent sessions per setup (scripted LLM, the local model)")
    args = parser.parse_args(argv)
    if (args.stock_set is None) != (args.stock_corpus is None):
        parser.error("--stock-set and --stock-corpus go together")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").disabled = True  # it lowers its own level while indexing
    progress = ProgressBars(sys.stderr, every_s=20)
    parts = [p for p in PARTS if p not in ("turns", "service")] if "all" in args.parts else args.parts
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {sorted(unknown)}; use {', '.join(PARTS)} or all")
    composer = ProductComposer(args.work, args.src, progress)
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    invocation = "python -m evals.bench " + " ".join(argv if argv is not None else sys.argv[1:])
    for part in parts:
        started = time.perf_counter()
        if part != "report":  # the report lists the commands that produced its parts
            log = load(args.work / "commands.json") or {}
            log[part] = invocation
            save(args.work / "commands.json", log)
        if part == "mtrag":
            run_mtrag(args.work, domains, composer, progress)
        elif part == "stock":
            target = composer.add_eval_set(args.stock_set, args.stock_corpus) if args.stock_set else args.stock_domain
            run_stock(args.work, target, args.sample_convs, composer, progress, args.reuse_turns)
        elif part == "ingest":
            run_ingest(args.work, composer.mtrag_data("fiqa") / "fiqa_corpus.jsonl", args.ingest_sample, composer)
        elif part == "scale":
            for domain in DOMAINS:
                composer.mtrag_data(domain)
            run_scale(args.work, [int(s) for s in args.sizes.split(",")], args.queries, composer, progress)
        elif part == "service":
            setups = {name: [int(n) for n in levels.split(",")] for name, _, levels in
                      (item.partition("=") for item in args.service_levels.split(";") if item.strip())}
            run_service(args.work, args.dataset, setups)
        elif part == "turns":
            modes = [m.strip() for m in args.answer_modes.split(",") if m.strip()]
            text = run_turns(composer, args.dataset, retrieval_convs=args.retrieval_conversations,
                             answer_convs=args.conversations, answer_modes=modes)
            print(text)
            (args.work / "turns.md").parent.mkdir(parents=True, exist_ok=True)
            (args.work / "turns.md").write_text(text + "\n", encoding="utf-8")
        else:
            commands = list(dict.fromkeys((load(args.work / "commands.json") or {}).values())) + [invocation]
            text, _ = render(args.work, machine(), commands, args.out.parent)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text, encoding="utf-8")
            print(f"wrote {args.out}")
        print(f"{part}: done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
