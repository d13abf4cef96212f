"""`python -m evals.replacements SPLIT_DIR [--out FILE]`: which documents replace which, found from text.

``SPLIT_DIR`` holds ``corpus/`` (documents) and ``labels.jsonl`` (``{"doc_id", "replaces": [...],
"note"}``, one row per document: the whole-document replacements its writer intended). The
detector (``engines.corpus.replacements``) reads the corpus with every front-matter ``supersedes`` field
ignored, so only words and titles count. Prints precision / recall / F1 over (old, new) pairs, by
basis, and every miss and false alarm with the sentence it fired on.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.corpus.documents import load_corpus
from engines.corpus.replacements import DocumentText, Replacement, find_replacements
from engines.io import read_jsonl


@dataclass(frozen=True)
class ReplacementScores:
    """Pair-level scores and the pairs behind them."""

    found: tuple[Replacement, ...]
    gold: frozenset[tuple[str, str]]

    @property
    def predicted(self) -> frozenset[tuple[str, str]]:
        return frozenset((r.old, r.new) for r in self.found)

    @property
    def precision(self) -> float:
        return len(self.predicted & self.gold) / len(self.predicted) if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return len(self.predicted & self.gold) / len(self.gold) if self.gold else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"precision": round(self.precision, 3), "recall": round(self.recall, 3), "f1": round(self.f1, 3),
                "n_gold": len(self.gold), "n_found": len(self.predicted),
                "false_alarms": [r.to_dict() for r in self.found if (r.old, r.new) not in self.gold],
                "missed": sorted(list(p) for p in self.gold - self.predicted),
                "by_basis": {b: sum(1 for r in self.found if r.basis == b and (r.old, r.new) in self.gold)
                             for b in sorted({r.basis for r in self.found})}}


def load_split(split: Path) -> tuple[list[DocumentText], frozenset[tuple[str, str]]]:
    """The split's documents as the detector sees them (front matter ``supersedes`` dropped) and its labels."""
    corpus, labels = split / "corpus", split / "labels.jsonl"
    for path in (corpus, labels):
        if not path.exists():
            raise SystemExit(f"{path}: missing; a split folder holds corpus/ and labels.jsonl")
    docs = [DocumentText(d.doc_id, str(d.metadata.get("title") or ""), d.text, str(d.metadata.get("date") or "")[:10])
            for d in load_corpus(corpus)]
    ids = {d.doc_id for d in docs}
    gold: set[tuple[str, str]] = set()
    for line in read_jsonl(labels):
        row = line.value
        if line.error or not isinstance(row, dict) or not isinstance(row.get("replaces", []), list):
            raise SystemExit(f"{line.where}: {line.error or 'expected an object with doc_id and a replaces list'}")
        for old in row.get("replaces") or []:
            if old not in ids or row.get("doc_id") not in ids:
                raise SystemExit(f"{line.where}: {row.get('doc_id')!r} replaces {old!r}, not a document of {corpus}")
            gold.add((old, row["doc_id"]))
    return docs, frozenset(gold)


#: Each reading switched off on its own: what the floors must catch.
ABLATIONS: dict[str, dict[str, bool]] = {
    "sentences off": {"from_text": False},
    "versions off": {"from_versions": False},
}


def score_split(split: Path, **switches: bool) -> ReplacementScores:
    docs, gold = load_split(split)
    return ReplacementScores(tuple(find_replacements(docs, **switches)), gold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.replacements", description=__doc__.split("\n\n")[0])
    parser.add_argument("splits", nargs="+", type=Path, help="split folders (corpus/ + labels.jsonl)")
    parser.add_argument("--out", type=Path, help="write the scores and every miss and false alarm as JSON here")
    parser.add_argument("--ablations", action="store_true",
                        help="also print each split's scores with each reading switched off (%s)" % ", ".join(ABLATIONS))
    args = parser.parse_args(argv)
    report = {}
    for split in args.splits:
        scores = score_split(split)
        report[str(split)] = scores.to_dict()
        print(f"{split}: precision {scores.precision:.2f}, recall {scores.recall:.2f}, F1 {scores.f1:.2f} "
              f"({len(scores.predicted & scores.gold)} of {len(scores.gold)} found, {len(scores.predicted)} flagged)")
        for r in scores.found:
            if (r.old, r.new) not in scores.gold:
                print(f"  false alarm: {r.old} <- {r.new} ({r.basis}): {r.evidence[:140]}")
        for old, new in sorted(scores.gold - scores.predicted):
            print(f"  missed: {old} <- {new}")
        for name, switches in ABLATIONS.items() if args.ablations else ():
            off = score_split(split, **switches)
            report[f"{split} ({name})"] = off.to_dict()
            print(f"  {name}: precision {off.precision:.2f}, recall {off.recall:.2f}, F1 {off.f1:.2f}")
    if args.out:
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
