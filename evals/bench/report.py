"""Markdown and plots for `python -m evals.bench report`, from the JSON the other parts cached."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from evals.bench.common import PAPER
from evals.bench.common import load as _load

FORMS_SHOWN = ("lastturn", "questions", "prev+last", "lastturn&prev+last", "lastturn&questions", "rewrite", "condense",
               "condense+lastturn")
RETRIEVERS_SHOWN = ("bm25", "vector", "hybrid", "hybrid-w")


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def pooled(mtrag: dict[str, Any], form: str, retriever: str, bucket: str, metric: str) -> float | None:
    """Mean over the tasks of every domain (task-weighted, like the issue's pre-measurement)."""
    total, n = 0.0, 0
    for domain in mtrag.values():
        cell = domain["scores"].get(form, {}).get(retriever, {}).get(bucket)
        if cell and cell.get(metric) is not None:
            total += cell[metric] * cell["n"]
            n += cell["n"]
    return total / n if n else None


def render(work: Path, machine: dict[str, Any], commands: list[str], out_dir: Path) -> tuple[str, list[Path]]:
    mtrag, stock = _load(work / "mtrag.json"), _load(work / "stock.json")
    ingest, scale = _load(work / "ingest.json"), _load(work / "scale.json")
    lines = ["# Benchmarks", "",
             "Produced by `python -m evals.bench` on one machine in one run (parts cached under `runs/bench`).",
             f"Machine: {machine['cpus']} CPUs, {machine['platform']}, Python {machine['python']}. "
             "Shared and noisy: compare columns of the same table, not numbers across tables.", "",
             "Commands: " + "; ".join(f"`{c}`" for c in commands), ""]
    plots: list[Path] = []
    if mtrag:
        domains = ", ".join(f"{d} ({v['n_rows']} turns, {v['corpus_chunks']} passages)" for d, v in mtrag.items())
        lines += ["## mtRAG-pooled, retrieval only (e5-small)", "",
                  f"Domains: {domains}. Mean over tasks of both domains; answerable and partial turns only. "
                  "`hybrid-w` = RRF with the BM25 list at half weight. Scores are on the POOLED corpora "
                  "(hard in-domain negatives, not the full corpora): not directly comparable with the paper.", "",
                  "| retriever | query | R@5 turn 1 | R@5 later | R@5 all | R@10 all | nDCG@5 all | nDCG@10 all |",
                  "|---|---|---|---|---|---|---|---|"]
        for form in FORMS_SHOWN:
            for retriever in RETRIEVERS_SHOWN:
                cells = [pooled(mtrag, form, retriever, b, m) for b, m in
                         (("turn1", "recall@5"), ("later", "recall@5"), ("all", "recall@5"), ("all", "recall@10"),
                          ("all", "ndcg@5"), ("all", "ndcg@10"))]
                lines.append(f"| {retriever} | {form} | " + " | ".join(_f(c) for c in cells) + " |")
        lines += ["", "The paper (full corpora, macro over 4 domains, Table 3; ELSER + rewrite by turn: turn 1 "
                  "0.89, later 0.47):", "", "| retriever | query | R@5 | R@10 | nDCG@5 | nDCG@10 |", "|---|---|---|---|---|---|"]
        lines += [f"| {r} | {q} | {a} | {b} | {c} | {d} |" for r, q, a, b, c, d in PAPER]
        lines += ["", "Per domain, R@5 later turns (hybrid-w / hybrid / vector):", "",
                  "| query | " + " | ".join(mtrag) + " |", "|---|" + "---|" * len(mtrag)]
        for form in FORMS_SHOWN:
            cells = []
            for domain in mtrag.values():
                s = domain["scores"].get(form, {})
                cells.append(" / ".join(_f(s.get(r, {}).get("later", {}).get("recall@5")) for r in ("hybrid-w", "hybrid", "vector")))
            lines.append(f"| {form} | " + " | ".join(cells) + " |")
        lines += ["", "Refusal (gates on the condensed query's best cosine; `product` = the default in force, "
                  "`corpus` = the threshold measured on this corpus at ingest with no labels, `model` = the "
                  "embedder's registered value):", "",
                  "| domain | gate | cosine | refused UNANSWERABLE | false refusal on answerable | condense p50 |",
                  "|---|---|---|---|---|---|"]
        for d, v in mtrag.items():
            gates = v["refusal"].get("gates") or {"model": v["refusal"]}
            for name, r in gates.items():
                lines.append(f"| {d} | {name} | {_f(r.get('min_vector'))} | {r['refused_unanswerable']}/{r['unanswerable']} | "
                             f"{r['refused_answerable']}/{r['answerable']} | {_f((v.get('condense_ms_p50') or 0) / 1000, 1)} s |")
        plots.append(_plot_forms(mtrag, out_dir / "bench_mtrag_r5.png"))
        lines += ["", f"![R@5 by query form]({plots[-1].name})", ""]
    if stock:
        for domain, s in stock.items():
            cross = [side for side in s["retrieval"] if side not in ("stock", "ours")]
            lines += [f"## Stock LlamaIndex vs ours ({domain})", "",
                      "Stock: `CondenseQuestionChatEngine.from_defaults` over a `VectorStoreIndex` built from the same "
                      "chunks and stored e5 vectors, default condense prompt, same local LLM, top-5. Ours: the product "
                      "defaults (window-6 condenser with guard, hybrid RRF, conflict check), top-5.", "",
                      "| turn bucket | n | stock R@5 | ours R@5 | stock hit@5 | ours hit@5 | stock nDCG@5 | ours nDCG@5 |"
                      + "".join(f" {side} R@5 |" for side in cross), "|---|---|---|---|---|---|---|---|" + "---|" * len(cross)]
            for bucket, st in s["retrieval"]["stock"].items():
                ou = s["retrieval"]["ours"][bucket]
                lines.append(f"| {bucket} | {st['n']} | {_f(st['recall@5'])} | {_f(ou['recall@5'])} | "
                             f"{_f(st.get('hit@5'))} | {_f(ou.get('hit@5'))} | {_f(st['ndcg@5'])} | {_f(ou['ndcg@5'])} |"
                             + "".join(f" {_f(s['retrieval'][side][bucket]['recall@5'])} |" for side in cross))
            if cross:
                lines += ["", "The last columns say where a gap comes from: the stock condenser's query through our "
                          "hybrid retriever, and our condensed query through the stock vector-only retriever."]
            rm = s["retrieval_ms"]
            lines += ["", f"Retrieval latency (query embedding included, condense excluded): stock p50 "
                      f"{_f(rm['stock']['p50'], 1)} ms / p95 {_f(rm['stock']['p95'], 1)} ms; ours p50 "
                      f"{_f(rm['ours']['p50'], 1)} ms / p95 {_f(rm['ours']['p95'], 1)} ms.", ""]
            turns = s.get("turns")
            if turns:
                lines += ["Whole turns with the local LLM, streamed (same conversations, live history):", "",
                          "| turn | stock total s | ours total s | stock first token s | ours first token s | "
                          "stock LLM calls | ours LLM calls | stock prompt tokens | ours prompt tokens |",
                          "|---|---|---|---|---|---|---|---|---|"]
                for bucket, select in (("1", lambda t: t == 1), ("2-3", lambda t: 2 <= t <= 3), ("4+", lambda t: t >= 4)):
                    cells = []
                    for key, scale_ in (("total_ms", 1000), ("first_token_ms", 1000), ("llm_calls", 1), ("prompt_tokens", 1)):
                        for side in ("stock", "ours"):
                            vals = [t[key] for t in turns[side] if select(t["turn"])]
                            cells.append(_f(statistics.median(vals) / scale_, 1) if vals else "–")
                    lines.append(f"| {bucket} | " + " | ".join(cells) + " |")
                lines += ["", f"Medians. Peak RSS of the benchmark process: {turns.get('peak_rss_mb')} MB.", ""]
    if ingest:
        lines += ["## Ingestion", "", f"{ingest['passages']} FiQA passages -> {ingest['chunks']} chunks: embedding alone "
                  f"{ingest['embed_only_per_s']} chunks/s, end to end (parse, chunk, hash, embed, Chroma, BM25 rebuild) "
                  f"{ingest['end_to_end_per_s']} chunks/s = {ingest['ratio']:.0%} of the embedding model's raw throughput. "
                  f"Peak RSS {ingest['peak_rss_mb']} MB.", ""]
    if scale:
        lines += ["## Retrieval latency vs index size", "",
                  "Vector (Chroma HNSW) + BM25 + weighted RRF + conflict check, with hashed 384-d vectors so a 25k-chunk "
                  f"index builds in minutes; the e5-small query embedding adds {scale['query_embedding_ms_e5']} ms per query "
                  "on this machine.", "", "| chunks | p50 ms | p95 ms |", "|---|---|---|"]
        for size, v in scale["sizes"].items():
            lines.append(f"| {size} | {v['p50_ms']} | {v['p95_ms']} |")
        plots.append(_plot_scale(scale, out_dir / "bench_scale.png"))
        lines += ["", f"![latency vs size]({plots[-1].name})", ""]
    service = _load(work / "service.json")
    if service:
        lines += ["## Service under load (loopback)", "",
                  "`python -m app.serve` in its own process, N concurrent sessions x up to 5 turns of the bundled dev "
                  "conversations through the session API with SSE; the in-process row is the same turns through a "
                  "session in this process (the REPL's path). scripted = scripted LLM and hashed vectors (the "
                  "service's own cost); local = e5-small and the packaged model.", "",
                  "| setup | sessions | turns | turns/s | turn p50 / p95 ms | first token p50 / p95 ms | 503s | errors | cross-talk |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for setup, data in service.items():
            for level in data["levels"]:
                t, f = level["total_ms"], level["first_token_ms"]
                lines.append(f"| {setup} | {level['sessions']} | {level['turns']} | {level['turns_per_s']} | "
                             f"{_f(t['p50'], 0)} / {_f(t['p95'], 0)} | {_f(f['p50'], 0)} / {_f(f['p95'], 0)} | "
                             f"{_share_503(level)} | {level['errors']} | {level['cross_talk']} |")
            ip = data["in_process"]
            lines.append(f"| {setup}, in process | 1 | {ip['turns']} | – | {_f(ip['total_ms']['p50'], 0)} / "
                         f"{_f(ip['total_ms']['p95'], 0)} | {_f(ip['first_token_ms']['p50'], 0)} / "
                         f"{_f(ip['first_token_ms']['p95'], 0)} | – | – | – |")
        lines.append("")
        for setup, data in service.items():
            first, warm = data.get("first_after_ready"), data.get("next_user")
            if first and warm and first["total_ms"] and warm["total_ms"]:
                ratio = first["total_ms"][0] / max(warm["total_ms"][0], 1)
                follow = lambda ms: f"{ms[1]} ms" if len(ms) > 1 else "–"  # noqa: E731
                lines.append(f"- {setup}: the first turn right after `/readyz` said 200 took {first['total_ms'][0]} ms "
                             f"(its follow-up {follow(first['total_ms'])}); the next user's first turn "
                             f"{warm['total_ms'][0]} ms (follow-up {follow(warm['total_ms'])}): {ratio:.1f}x a warm turn.")
        lines.append("")
    lines += goals(mtrag, stock, ingest, scale)
    notes = out_dir / "bench_notes.md"
    if notes.exists():  # hand-written: what was tried, which the JSON cannot say
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    lines += ["## Packages", "", ", ".join(f"{k} {v}" for k, v in sorted(machine["packages"].items())), ""]
    return "\n".join(lines), plots


def _share_503(level: dict[str, Any]) -> str:
    """Turns turned away by admission, of those answered or turned away (a turn that failed
    otherwise is counted under errors); levels measured before 503s were counted apart: –."""
    if "rejected_503" not in level:
        return "–"
    return f"{level['rejected_503']} ({level['share_503']:.0%})"


def goals(mtrag: dict[str, Any] | None, stock: dict[str, Any] | None, ingest: dict[str, Any] | None,
          scale: dict[str, Any] | None) -> list[str]:
    """The issue's goals against what was measured, each marked met or not (no judgement by hand)."""
    rows: list[tuple[str, str, bool | None]] = []
    if mtrag:
        # the product default: condensed query fused with the user's words, the fusion the corpus language chose
        retriever = next((d["default_retriever"] for d in mtrag.values() if "default_retriever" in d), "hybrid")
        default = ("condense+lastturn", retriever)
        later = pooled(mtrag, *default, "later", "recall@5")
        first = pooled(mtrag, *default, "turn1", "recall@5")
        rows += [(f"later-turn R@5 >= 0.38 (default: {retriever}, condense+lastturn; {', '.join(mtrag)})", _f(later),
                  None if later is None else later >= 0.38),
                 ("turn-1 R@5 >= 0.65", _f(first), None if first is None else first >= 0.65)]
    for domain, s in (stock or {}).items():
        worse = [b for b, st in s["retrieval"]["stock"].items()
                 if b != "all" and s["retrieval"]["ours"][b]["recall@5"] < st["recall@5"]]
        rows.append((f"ours >= stock R@5 on every turn bucket ({domain})", "worse on " + ", ".join(worse) if worse
                     else "all buckets", not worse))
        turns = s.get("turns") or {}
        late = {side: [t["total_ms"] for t in turns.get(side, []) if t["turn"] >= 4] for side in ("stock", "ours")}
        if late["stock"] and late["ours"]:
            a, b = statistics.median(late["ours"]), statistics.median(late["stock"])
            rows.append(("whole-turn latency at turn 4+ no worse than stock", f"{a / 1000:.1f} s vs {b / 1000:.1f} s", a <= b))
    if scale:
        biggest = max(scale["sizes"], key=int)
        p50 = scale["sizes"][biggest]["p50_ms"]
        rows.append((f"retrieval beyond the query embedding: a few ms at {biggest} chunks", f"p50 {p50} ms", p50 <= 5))
    if ingest:
        rows.append(("ingestion >= 90% of raw embedding throughput", f"{ingest['ratio']:.0%}", ingest["ratio"] >= 0.9))
    if not rows:
        return []
    out = ["## Goals", "", "| goal | measured | met |", "|---|---|---|"]
    out += [f"| {g} | {m} | {'–' if ok is None else ('yes' if ok else '**no**')} |" for g, m, ok in rows]
    return out + [""]


def _plot_forms(mtrag: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.2
    for i, retriever in enumerate(RETRIEVERS_SHOWN):
        values = [pooled(mtrag, f, retriever, "later", "recall@5") or 0 for f in FORMS_SHOWN]
        ax.bar([x + i * width for x in range(len(FORMS_SHOWN))], values, width, label=retriever)
    ax.axhline(0.38, color="grey", linestyle="--", linewidth=1, label="goal 0.38")
    ax.set_xticks([x + 1.5 * width for x in range(len(FORMS_SHOWN))], FORMS_SHOWN, rotation=15)
    ax.set_ylabel("R@5, later turns (mtRAG-pooled)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _plot_scale(scale: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [int(s) for s in scale["sizes"]]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(sizes, [v["p50_ms"] for v in scale["sizes"].values()], marker="o", label="p50")
    ax.plot(sizes, [v["p95_ms"] for v in scale["sizes"].values()], marker="o", label="p95")
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("ms per query (embedding excluded)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
