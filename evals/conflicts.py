"""`python -m evals.conflicts PAIRS.jsonl [--corpus PATH] [--out DIR]`: the conflict detector alone.

Rows: ``{"pair_id", "doc_a", "doc_b", "conflict", "kind"?}`` with doc ids from ``--corpus`` (their
text and front-matter date), or inline ``{"pair_id", "a": {"text", "date"}, "b": {...}, "conflict"}``.
``--ramdocs FILE`` derives pairs from RAMDocs instead (correct vs misinfo = conflict; correct vs
correct with the same answer = agreement; with different answers = different entity).
Prints precision / recall / F1 overall and per ``kind``, a sweep of the similarity gate, and
writes per-row predictions to ``DIR/conflicts_report.json``. Embeddings: one batch for all texts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import random
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engines.answering.extract import ClauseVectorCache
from engines.conflicts import DEFAULT_MIN_CLAIM_OVERLAP
from engines.conflicts.claim_vectors import cross_language
from engines.conflicts.graph import analyze, detect_pairs, resolve
from engines.corpus.documents import split_ids
from engines.io import read_jsonl
from engines.text import detect_language

DEFAULT_GATES = (0.0, 0.68, 0.75, 0.80, 0.85, 0.88, 0.90, 0.92, 0.94)
CLAIM_OVERLAPS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
CROSS_CLAIM_SIMILARITIES = (0.75, 0.8, 0.82, 0.84, 0.85, 0.86, 0.88, 0.9, 0.92)


@dataclass(frozen=True)
class PairRow:
    pair_id: str
    text_a: str
    text_b: str
    date_a: str
    date_b: str
    conflict: bool
    kind: str
    newer: str | None = None
    title_a: str = ""
    title_b: str = ""
    supersedes_a: tuple[str, ...] = ()
    supersedes_b: tuple[str, ...] = ()
    doc_a: str = "doc-a"
    doc_b: str = "doc-b"
    authority_a: str = ""
    authority_b: str = ""


def load_pairs(path: Path, corpus: Path | None) -> list[PairRow]:
    docs = {}
    if corpus is not None:
        from engines.corpus.documents import load_corpus

        docs = {d.doc_id: d for d in load_corpus(corpus)}
    rows = []
    for line in read_jsonl(path):
        if line.error is not None:
            raise SystemExit(f"{line.where}: {line.error}")
        row = line.value
        if "doc_a" in row:
            missing = [d for d in (row["doc_a"], row["doc_b"]) if d not in docs]
            if missing:
                raise SystemExit(f"{line.where}: doc ids {missing} not in --corpus {corpus}")
            a, b = docs[row["doc_a"]], docs[row["doc_b"]]
            rows.append(PairRow(row["pair_id"], a.text, b.text, str(a.metadata.get("date", "")),
                                str(b.metadata.get("date", "")), bool(row["conflict"]), row.get("kind", "all"), row.get("newer"),
                                str(a.metadata.get("title", "")), str(b.metadata.get("title", "")),
                                split_ids(str(a.metadata.get("supersedes", ""))),
                                split_ids(str(b.metadata.get("supersedes", ""))), a.doc_id, b.doc_id,
                                str(a.metadata.get("department", "")), str(b.metadata.get("department", ""))))
        else:
            rows.append(PairRow(row["pair_id"], row["a"]["text"], row["b"]["text"], row["a"].get("date", "") or "",
                                row["b"].get("date", "") or "", bool(row["conflict"]), row.get("kind", "all"), row.get("newer")))
    return rows


def ramdocs_pairs(path: Path, per_kind: int | None, seed: int = 13) -> list[PairRow]:
    """Derive labelled pairs from RAMDocs (no dates: detection only)."""
    out: dict[str, list[PairRow]] = defaultdict(list)
    for qi, line in enumerate(read_jsonl(path)):
        item = line.value
        docs = [d for d in item["documents"] if d.get("type") in ("correct", "misinfo")]
        for (i, a), (j, b) in itertools.combinations(enumerate(docs), 2):
            types = {a["type"], b["type"]}
            if types == {"correct", "misinfo"}:
                kind, conflict = "conflict", True
            elif types == {"correct"}:
                same = str(a.get("answer", "")).strip().lower() == str(b.get("answer", "")).strip().lower()
                kind, conflict = ("agreement" if same else "different_entity"), False
            else:
                continue
            out[kind].append(PairRow(f"q{qi}-{i}-{j}", a["text"], b["text"], "", "", conflict, kind))
    rng = random.Random(seed)
    rows = []
    for kind in sorted(out):
        items = out[kind]
        rows.extend(rng.sample(items, min(per_kind, len(items))) if per_kind else items)
    return rows


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text[:10]) if text else None
    except ValueError:
        return None


#: Each claim-level rule switched off (or, off by default, on) on its own (``detect_pairs`` / ``analyze`` keywords, or
#: ``supersedes`` for the declared replacements): the ablation table of the report.
ABLATIONS: dict[str, dict[str, Any]] = {
    "deadlines off": {"deadlines": False},
    "period changes off": {"min_period_overlap": None},
    "claim alignment off": {"align_claims": False},
    "abolition target off": {"min_abolition_overlap": None},
    "declared supersedes ignored": {"supersedes": False},
    "table headers off": {"table_headers": False},
    "departments ignored": {"authorities": False},
    "table units off": {"header_units": False},
    "cross-language claims off": {"cross_language": None},
}
ABLATIONS["all rules off"] = {"deadlines": False, "min_period_overlap": None, "align_claims": False,
                              "min_abolition_overlap": None, "supersedes": False, "table_headers": False, "authorities": False,
                              "header_units": False, "cross_language": None}
_ANALYZE_SWITCHES = ("deadlines", "supersedes", "authorities", "header_units")


def predict(rows: list[PairRow], similarities: np.ndarray, gate: float, skip_years: bool = True,
            claim_overlap: float = 0.0, **switches: Any) -> list[dict[str, Any]]:
    """The detector and resolution on each labelled pair; ``switches`` turn single rules off (``ABLATIONS``)."""
    detect_kw = {k: v for k, v in switches.items() if k not in _ANALYZE_SWITCHES}
    deadlines = switches.get("deadlines", True)
    declared = switches.get("supersedes", True)
    authorities = switches.get("authorities", True)
    header_units = switches.get("header_units", True)
    preds = []
    for row, sim in zip(rows, similarities):
        # two documents: distinct sources, so the same-date companion rule applies as in the engine
        a = analyze("a", row.text_a, _date(row.date_a), lang=detect_language(row.text_a), skip_years=skip_years,
                    title=row.title_a, source=row.doc_a, supersedes=row.supersedes_a if declared else (),
                    authority=row.authority_a if authorities else "", header_units=header_units,
                    deadlines=deadlines)
        b = analyze("b", row.text_b, _date(row.date_b), lang=detect_language(row.text_b), skip_years=skip_years,
                    title=row.title_b, source=row.doc_b, supersedes=row.supersedes_b if declared else (),
                    authority=row.authority_b if authorities else "", header_units=header_units,
                    deadlines=deadlines)
        matrix = np.array([[1.0, sim], [sim, 1.0]])
        pairs = detect_pairs([a, b], matrix, sim_threshold=gate, min_claim_overlap=claim_overlap, **detect_kw)
        resolution = resolve([a, b], pairs)
        kept = None
        if resolution.dropped_ids:
            kept = "a" if "a" in resolution.kept_ids else "b"
        preds.append({"pair_id": row.pair_id, "kind": row.kind, "gold": row.conflict, "detected": bool(pairs),
                      "detected_kinds": sorted({p.kind for p in pairs}), "similarity": round(float(sim), 4),
                      "evidence": [e for p in pairs for e in p.evidence][:6], "kept": kept, "newer": row.newer})
    return preds


def scores(preds: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """P/R/F1 overall, plus per kind the flag rate (recall on conflict kinds, false-alarm rate otherwise)."""
    def prf(items):
        tp = sum(p["gold"] and p["detected"] for p in items)
        fp = sum((not p["gold"]) and p["detected"] for p in items)
        fn = sum(p["gold"] and not p["detected"] for p in items)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"n": len(items), "precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
                "flag_rate": round(sum(p["detected"] for p in items) / len(items), 3) if items else 0.0}

    out = {"all": prf(preds)}
    for kind in sorted({p["kind"] for p in preds}):
        out[kind] = prf([p for p in preds if p["kind"] == kind])
    resolved = [p for p in preds if p["gold"] and p["detected"] and p["newer"]]
    if resolved:
        out["all"]["newer_kept"] = round(sum(p["kept"] == p["newer"] for p in resolved) / len(resolved), 3)
    return out


def with_llm_check(rows: list[PairRow], preds: list[dict[str, Any]], llm: Any, gate: float,
                   limit_per_kind: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The postprocessor's optional LLM check on top of the heuristics: same-topic pairs (at or above
    the gate) the heuristics did not flag are asked "can both be true?". With ``limit_per_kind`` only
    that many asked pairs per kind are kept (all rows outside the sample are dropped, so the
    with/without comparison is on the same rows). Returns new predictions and the cost."""
    import time

    from engines.conflicts.postprocessor import LLM_CHECK_PROMPT

    asked_per_kind: dict[str, int] = defaultdict(int)
    out, calls, seconds = [], 0, 0.0
    for row, pred in zip(rows, preds):
        candidate = pred["similarity"] >= gate and not pred["detected"]
        if candidate and limit_per_kind is not None and asked_per_kind[row.kind] >= limit_per_kind:
            continue
        new = dict(pred, llm_asked=candidate, llm_said_conflict=False)
        if candidate:
            asked_per_kind[row.kind] += 1
            t0 = time.perf_counter()
            verdict = llm.complete(LLM_CHECK_PROMPT.format(a=row.text_a[:1200], b=row.text_b[:1200])).text
            seconds += time.perf_counter() - t0
            calls += 1
            if verdict.strip().upper().startswith("NO"):
                new.update(detected=True, llm_said_conflict=True)
        out.append(new)
    cost = {"llm_calls": calls, "seconds": round(seconds, 1),
            "ms_per_call": round(1000 * seconds / calls, 1) if calls else None, "asked_per_kind": dict(asked_per_kind)}
    return out, cost


SCOPE_MINIMA = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def scope_scores(rows: list[PairRow], preds: list[dict[str, Any]], reader: Any) -> list[float]:
    """The reader's P(same subject and scope) of each detected pair's claim sentences (1.0 where
    nothing was detected: there is nothing to keep or drop)."""
    from engines.conflicts.scope import Side, scope_of

    at = [i for i, p in enumerate(preds) if p["detected"]]
    judged = scope_of([preds[i]["evidence"] for i in at],
                      [(Side(rows[i].text_a, rows[i].title_a), Side(rows[i].text_b, rows[i].title_b)) for i in at],
                      reader.same_scope)
    out = [1.0] * len(rows)
    for i, value in zip(at, judged):
        out[i] = value
    return out


def with_scope(preds: list[dict[str, Any]], scope: list[float], minimum: float) -> list[dict[str, Any]]:
    """A detected pair stands only when the reader judges both sides the same subject and scope."""
    return [dict(p, scope=round(s, 3), detected=p["detected"] and s >= minimum) for p, s in zip(preds, scope)]


def embed_similarities(rows: list[PairRow], model: Any) -> np.ndarray:
    texts = [t for r in rows for t in (r.text_a, r.text_b)]
    unique = list(dict.fromkeys(texts))  # a document is in several pairs: embed it once
    vectors = np.asarray(model.get_text_embedding_batch(unique), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    at = {t: i for i, t in enumerate(unique)}
    a, b = vectors[[at[r.text_a] for r in rows]], vectors[[at[r.text_b] for r in rows]]
    return np.einsum("ij,ij->i", a, b)


def overhead(index: Path, n_nodes: int = 10, repeats: int = 3) -> dict[str, float]:
    """Postprocessor time per query over real retrieved nodes (stored vectors, no new embeddings)."""
    import time

    from llama_index.core.schema import QueryBundle

    from app.compose import build_models, ingest_path, open_pipeline
    from app.config import SAMPLE_CORPUS, load_settings
    from engines.conflicts.postprocessor import ConflictPostprocessor

    settings = load_settings(index_dir=index, llm="fake", log_dir=None, top_k=n_nodes, candidate_k=max(20, n_nodes))
    ingest_path(settings, SAMPLE_CORPUS)
    pipeline = open_pipeline(settings, build_models(settings))
    retriever = pipeline.retriever()
    questions = [line.value["question"] for line in read_jsonl(SAMPLE_CORPUS.parent / "eval" / "bank" / "dev" / "conversations.jsonl")
                 if line.error is None]
    results = [(q, retriever.retrieve(q)) for q in questions]
    post = next(p for p in pipeline.step("assemble").postprocessors if isinstance(p, ConflictPostprocessor))
    cold, warm = [], []
    for repeat in range(repeats):
        for q, nodes in results:
            t0 = time.perf_counter()
            post.postprocess_with_report(nodes, QueryBundle(q), "vi")
            (cold if repeat == 0 else warm).append((time.perf_counter() - t0) * 1000)
    # cold: each chunk's numbers and cues parsed for the first time; warm: the per-chunk cache hit
    return {"queries": len(results), "nodes": n_nodes,
            "cold_p50_ms": float(np.percentile(cold, 50)), "cold_p95_ms": float(np.percentile(cold, 95)),
            "p50_ms": float(np.percentile(warm or cold, 50)), "p95_ms": float(np.percentile(warm or cold, 95)),
            "max_ms": float(max(cold + warm))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.conflicts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", type=Path, nargs="?", help="labelled pairs JSONL")
    parser.add_argument("--corpus", type=Path, help="corpus holding the doc ids the rows reference")
    parser.add_argument("--ramdocs", type=Path, help="derive pairs from a RAMDocs JSONL instead")
    parser.add_argument("--per-kind", type=int, default=300, help="RAMDocs pairs sampled per kind (0 = all)")
    parser.add_argument("--embedding", default="e5-small")
    parser.add_argument("--gate", type=float, default=None, help="similarity gate (default: the product setting)")
    parser.add_argument("--claim-overlap", type=float, default=None,
                        help="numeric conflicts: least overlap of the two claims' masked words (default: the product's)")
    parser.add_argument("--llm-check", metavar="LLM", help="also run the optional LLM check (local, openai, ...) on "
                        "same-topic pairs the heuristics did not flag, and report with and without it")
    parser.add_argument("--llm-limit", type=int, default=None, help="ask the LLM about at most N pairs per kind")
    parser.add_argument("--cross-claim", type=float, default=None, metavar="COSINE",
                        help="compare passages in two languages claim by claim from this cosine of their claim "
                             "sentences (default: the embedder's calibration; e5-small: off)")
    parser.add_argument("--reader-scope", action="store_true",
                        help="also sweep the reader's same-scope head over the detected pairs (a pair stands only "
                             "at or above the minimum), the packaged reader or TURNRAG_READER_DELTA")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--overhead", type=Path, metavar="INDEX",
                        help="instead: time the postprocessor on 10 real retrieved nodes per eval question")
    args = parser.parse_args(argv)
    if args.overhead:
        print(json.dumps(overhead(args.overhead), indent=2))
        return 0
    if not args.pairs and not args.ramdocs:
        parser.error("give PAIRS.jsonl or --ramdocs FILE")
    from engines.models.registry import calibration_for

    gate = args.gate if args.gate is not None else calibration_for(args.embedding).conflict_similarity
    claim = args.claim_overlap if args.claim_overlap is not None else DEFAULT_MIN_CLAIM_OVERLAP
    rows = ramdocs_pairs(args.ramdocs, args.per_kind or None) if args.ramdocs else load_pairs(args.pairs, args.corpus)
    from engines.models.registry import build_embedding

    model = build_embedding(args.embedding)
    sims = embed_similarities(rows, model)
    # passages in two languages compared as the product compares them (app/compose.py), or from --cross-claim
    cross_claim = args.cross_claim if args.cross_claim is not None else calibration_for(args.embedding).cross_claim_similarity
    cross = {"cross_language": cross_language(model, cross_claim)}
    preds = predict(rows, sims, gate, claim_overlap=claim, **cross)
    table = scores(preds)
    print(f"{len(rows)} pairs, embedding {args.embedding}, gate {gate}, claim overlap {claim}, "
          f"cross-language claims {'off' if cross_claim is None else cross_claim}")
    print(f"{'kind':18} {'n':>4} {'flagged':>8} {'precision':>9} {'recall':>7} {'f1':>6}")
    for kind, s in table.items():
        print(f"{kind:18} {s['n']:4d} {s['flag_rate']:8.2f} {s['precision']:9.2f} {s['recall']:7.2f} {s['f1']:6.2f}")
    if "newer_kept" in table["all"]:
        print(f"newer side kept on resolved conflicts: {table['all']['newer_kept']:.2f}")
    print("\ngate sweep (flag rate per kind):")
    kinds = sorted({r.kind for r in rows})
    print(f"{'gate':>5} " + " ".join(f"{k[:14]:>14}" for k in kinds) + "    f1")
    sweep = {}
    for g in DEFAULT_GATES:
        t = scores(predict(rows, sims, g, claim_overlap=claim, **cross))
        sweep[g] = t
        print(f"{g:5.2f} " + " ".join(f"{t[k]['flag_rate']:14.2f}" for k in kinds) + f"  {t['all']['f1']:.2f}")
    print("\nclaim overlap sweep (numeric conflicts; at the gate):")
    claim_sweep = {}
    for c in CLAIM_OVERLAPS:
        t = scores(predict(rows, sims, gate, claim_overlap=c, **cross))["all"]
        claim_sweep[c] = t
        print(f"{c:5.2f} precision {t['precision']:.2f} recall {t['recall']:.2f} f1 {t['f1']:.2f} flagged {t['flag_rate']:.2f}")
    no_year_filter = scores(predict(rows, sims, gate, skip_years=False, claim_overlap=claim, **cross))
    print(f"\nyear filter off: f1 {no_year_filter['all']['f1']:.2f} (on: {table['all']['f1']:.2f})")
    print("\neach claim rule switched off (precision / recall / newer kept):")
    ablation = {}
    for name, switch in ABLATIONS.items():
        t = scores(predict(rows, sims, gate, claim_overlap=claim, **{**cross, **switch}))["all"]
        ablation[name] = t
        print(f"{name:28} {t['precision']:.2f} / {t['recall']:.2f} / {t.get('newer_kept', float('nan')):.2f}")
    print("\ncross-language claims: least cosine of two claim sentences (precision / recall):")
    cross_sweep = {}
    claim_cache = ClauseVectorCache()  # each claim embedded once for the whole sweep
    for c in CROSS_CLAIM_SIMILARITIES:
        swept = cross_language(model, c, claim_cache)
        t = scores(predict(rows, sims, gate, claim_overlap=claim, cross_language=swept))["all"]
        cross_sweep[c] = t
        print(f"{c:5.2f} precision {t['precision']:.2f} recall {t['recall']:.2f} f1 {t['f1']:.2f} flagged {t['flag_rate']:.2f}")
    llm_result = None
    if args.llm_check:
        from engines.models.registry import build_llm

        checked, cost = with_llm_check(rows, preds, build_llm(args.llm_check), gate, args.llm_limit)
        kept_ids = {p["pair_id"] for p in checked}
        without = scores([p for p in preds if p["pair_id"] in kept_ids])
        with_llm = scores(checked)
        print(f"\nLLM check ({args.llm_check}): {cost['llm_calls']} calls, {cost['ms_per_call']} ms each; "
              f"on the same {len(checked)} pairs, flag rate per kind without -> with:")
        for kind in sorted(with_llm):
            print(f"{kind:18} {without[kind]['flag_rate']:.2f} -> {with_llm[kind]['flag_rate']:.2f}   "
                  f"(precision {without[kind]['precision']:.2f} -> {with_llm[kind]['precision']:.2f}, "
                  f"recall {without[kind]['recall']:.2f} -> {with_llm[kind]['recall']:.2f})")
        llm_result = {"cost": cost, "without": without, "with": with_llm}
    scope_result = None
    if args.reader_scope:
        from app.config import load_settings
        from engines.reader.model import load_reader

        settings = load_settings(log_dir=None)
        scope = scope_scores(rows, preds, load_reader(settings.reader_delta, settings.model_cache_dir))
        print("\nreader scope head: least P(same subject and scope) for a detected pair (precision / recall / f1):")
        scope_result = {}
        for m in SCOPE_MINIMA:
            t = scores(with_scope(preds, scope, m))
            scope_result[str(m)] = t
            print(f"{m:4.2f} precision {t['all']['precision']:.2f} recall {t['all']['recall']:.2f} f1 {t['all']['f1']:.2f} "
                  "  " + " ".join(f"{k}:{t[k]['flag_rate']:.2f}" for k in kinds))
        preds = with_scope(preds, scope, 0.0)  # the score kept beside each prediction
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "conflicts_report.json").write_text(json.dumps(
            {"gate": gate, "embedding": args.embedding, "scores": table, "sweep": {str(k): v for k, v in sweep.items()},
             "year_filter_off": no_year_filter, "claim_overlap": claim, "ablation": ablation,
             "claim_sweep": {str(k): v for k, v in claim_sweep.items()},
             "cross_claim_sweep": {str(k): v for k, v in cross_sweep.items()}, "llm_check": llm_result,
             "reader_scope": scope_result, "predictions": preds}, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
