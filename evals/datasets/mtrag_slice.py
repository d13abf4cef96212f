"""Cut a small, committed slice of one converted mtRAG domain, for a regression floor that CI can ingest.

`python -m evals.datasets.mtrag_slice ROWS CORPUS --out DIR [--conversations N] [--distractors K]`

ROWS and CORPUS are what ``python -m evals.datasets.mtrag`` wrote (``<domain>.jsonl`` and
``<domain>_corpus.jsonl``). The slice keeps the first N conversations (in file order), every
passage any of their turns counts as gold, and, per answerable turn, the K passages BM25 ranks
highest for the benchmark's rewrite and for the last turn alone: hard in-domain negatives from the
pooled corpus, so the slice is not an easy search. Dense retrievers may have preferred other pool
passages that the slice leaves out; numbers on it are for regression, not for comparison with the
paper or with the full pooled corpus.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import bm25s

from engines.io import read_jsonl


def _load(path: Path) -> list[dict]:
    rows = []
    for line in read_jsonl(path):
        if line.error is not None:
            raise SystemExit(f"{line.where}: {line.error}")
        rows.append(line.value)
    return rows


def cut(rows: list[dict], corpus: list[dict], n_conversations: int, k: int) -> tuple[list[dict], list[dict]]:
    """(rows of the first ``n_conversations``, the passages they need: gold plus BM25 neighbours)."""
    conversations = list(dict.fromkeys(r["conv_id"] for r in rows))[:n_conversations]
    kept_rows = [r for r in rows if r["conv_id"] in set(conversations)]
    texts = [f"{p.get('title', '')}\n{p['text']}" for p in corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    wanted = {g for r in kept_rows for g in r.get("gold_doc_ids", [])}
    queries = [q for r in kept_rows if r["type"] != "unanswerable" for q in (r.get("rewrite"), r["question"]) if q]
    if queries:
        hits, _ = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", show_progress=False), k=k,
                                     show_progress=False)
        wanted |= {corpus[int(i)]["_id"] for row in hits for i in row}
    kept_corpus = [p for p in corpus if p["_id"] in wanted]
    missing = {g for r in kept_rows for g in r.get("gold_doc_ids", [])} - {p["_id"] for p in kept_corpus}
    if missing:
        raise SystemExit(f"gold passages missing from the corpus: {sorted(missing)[:5]}")
    return kept_rows, kept_corpus


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.datasets.mtrag_slice", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", type=Path, help="converted rows (<domain>.jsonl)")
    parser.add_argument("corpus", type=Path, help="converted corpus (<domain>_corpus.jsonl)")
    parser.add_argument("--out", type=Path, required=True, help="folder for rows.jsonl and corpus.jsonl")
    parser.add_argument("--conversations", type=int, default=12, help="conversations kept, in file order")
    parser.add_argument("--distractors", type=int, default=4, help="BM25 neighbours per query form and turn")
    args = parser.parse_args(argv)
    rows, corpus = cut(_load(args.rows), _load(args.corpus), args.conversations, args.distractors)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, items in (("rows.jsonl", rows), ("corpus.jsonl", corpus)):
        with (args.out / name).open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    print(f"{len(rows)} rows of {len({r['conv_id'] for r in rows})} conversations, {len(corpus)} passages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
