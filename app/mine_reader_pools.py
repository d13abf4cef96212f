"""`python -m app.mine_reader_pools`: each training turn's fused top 20, labelled, for the reader.

Every training set's corpus is ingested into its own index under ``--work`` (embedded defaults, no
LLM), each turn's writer rewrite is retrieved through the product's fused retriever, and the pool
is labelled from the writer's evidence (``engines.reader.pools``). The result,
``--work``/SET-HASH.jsonl (the hash is of the set's files), is what ``python -m app.train_reader``
trains on; it mines what is missing itself (about 20 s a set), so this command is for looking at the
pools. A file is written whole or not at all.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console

from app.cli import run_cli
from app.compose import build_models, build_pipeline, ingest_path, open_index
from app.config import PROJECT_ROOT, load_settings
from app.console import ProgressBars
from app.logging_setup import configure_logging
from engines.reader.examples import TrainingSet, load_training_sets
from engines.reader.pools import label_pool, write_pools
from engines.steps.rerank import passage_text

DATA = PROJECT_ROOT / "data" / "train"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.mine_reader_pools", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="training sets, one folder each (default data/train)")
    parser.add_argument("--work", type=Path, default=Path("runs/reader/pools"), help="the pools and one index per set")
    parser.add_argument("--pool", type=int, default=20, help="fused passages per turn (default %(default)s)")
    parser.add_argument("--sets", nargs="*", help="only these sets (default: all)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging()
    console = Console(file=sys.stderr)
    return run_cli(lambda: _run(args, console), console, interrupted="interrupted; finished sets are kept.")


def _run(args: argparse.Namespace, console: Console) -> int:
    sets = [s for s in load_training_sets(args.data) if not args.sets or s.name in args.sets]
    mine_pools(sets, args.data, args.work, console, pool=args.pool, quiet=args.quiet)
    return 0


def set_hash(folder: Path) -> str:
    """A training set's files, hashed: its pools are mined again when they change."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "NOTES.md"):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def mine_pools(sets: list[TrainingSet], data: Path, work: Path, console: Console, *, pool: int = 20,
               quiet: bool = False) -> dict[str, Path]:
    """Each set's labelled pools file under ``work``, mined unless already there for the same files."""
    out, models = {}, None
    for ts in sets:
        path = work / f"{ts.name}-{set_hash(data / ts.name)}.jsonl"
        out[ts.name] = path
        if path.is_file():
            continue
        settings = load_settings(None, index_dir=work / "idx" / ts.name, llm="fake", candidate_k=pool,
                                 rerank_pool=pool, reranker="")
        models = models or build_models(settings)
        ingest_path(settings, data / ts.name / "corpus", embed_model=models.embed_model,
                    companion_embed_model=models.companion_embed_model)
        retriever = build_pipeline(settings, models, open_index(settings)).retriever(top_k=pool)
        pools = []
        with ProgressBars(console.file, disable=quiet) as bars:
            for done, turn in enumerate(ts.turns, start=1):
                nodes = retriever.retrieve(turn.rewrite)
                pools.append(label_pool(turn, [(str(n.node.metadata.get("doc_id", "")), passage_text(n))
                                               for n in nodes]))
                bars(f"pools {ts.name}", done, len(ts.turns))
        work.mkdir(parents=True, exist_ok=True)
        write_pools(path, pools)
        counts = Counter(p.label for pool_ in pools for p in pool_.passages)
        found = sum(any(p.label == "answers" for p in pool_.passages) for pool_, t in zip(pools, ts.turns)
                    if t.answerable)
        console.print(f"{ts.name}: {len(pools)} pools, answer in pool for {found}/"
                      f"{sum(t.answerable for t in ts.turns)} answerable turns; labels {dict(counts)}",
                      highlight=False)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
