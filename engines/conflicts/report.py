"""ConflictReport: what the conflict check found and did, in a form people and programs read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from llama_index.core.schema import NodeWithScore

from engines.conflicts.graph import ConflictPair, Resolution

TEXT = {
    "vi": {
        "dropped": "Đã bỏ qua {old} ({old_date}) vì mâu thuẫn với {new} ({new_date}) mới hơn: {evidence}.",
        "replaced": "Đã bỏ qua {old} ({old_date}): {new} ({new_date}) ghi rõ là thay thế văn bản này: {evidence}.",
        "version": "Đã bỏ qua {old} ({old_date}): {new} ({new_date}) là phiên bản mới hơn của văn bản này: {evidence}.",
        "trimmed": "Đã bỏ các câu của {old} ({old_date}) mà {new} ({new_date}) mới hơn đã thay đổi: {evidence}.",
        "part": "Đã bỏ qua một đoạn của {old} ({old_date}) vì mâu thuẫn với {new} ({new_date}) mới hơn: {evidence}; "
                "các đoạn khác của văn bản này vẫn được dùng.",
        "unresolved": "⚠ Các nguồn không thống nhất: {docs} ({evidence}). Hãy kiểm tra lại với bộ phận phụ trách.",
        "detected": "Phát hiện mâu thuẫn giữa {docs} ({evidence}); chưa xử lý (resolve_conflicts=False).",
    },
    "en": {
        "dropped": "Set aside {old} ({old_date}): it conflicts with the newer {new} ({new_date}): {evidence}.",
        "replaced": "Set aside {old} ({old_date}): {new} ({new_date}) declares that it replaces it: {evidence}.",
        "version": "Set aside {old} ({old_date}): {new} ({new_date}) is a newer version of it: {evidence}.",
        "trimmed": "Set aside the sentences of {old} ({old_date}) that the newer {new} ({new_date}) changes: {evidence}.",
        "part": "Set aside one passage of {old} ({old_date}) that conflicts with the newer {new} ({new_date}): "
                "{evidence}; its other passages are still used.",
        "unresolved": "⚠ The sources disagree: {docs} ({evidence}). Please check with the document owner.",
        "detected": "Conflict detected between {docs} ({evidence}); not resolved (resolve_conflicts=False).",
    },
}


def replacement_notes(left_out: Sequence[Mapping[str, Any]], language: str) -> list[str]:
    """One line per replaced document retrieval left out (``engines.corpus.replacements``), in the question's language."""
    text = TEXT.get(language, TEXT["en"])
    return list(dict.fromkeys(
        text["version" if r.get("basis") == "version" else "replaced"].format(
            old=f"[{r['old']}]", old_date=r.get("old_date") or "?", new=f"[{r['new']}]",
            new_date=r.get("new_date") or "?", evidence=str(r.get("evidence", ""))[:200].rstrip(" ."))
        for r in left_out))


@dataclass
class PassageRef:
    node_id: str
    doc_id: str
    title: str
    date: str


@dataclass
class PairReport:
    a: PassageRef
    b: PassageRef
    kind: str
    evidence: list[str]
    similarity: float


@dataclass
class ClusterReport:
    members: list[PassageRef]
    resolution: str  # temporal | unresolved | detected_only
    winner: PassageRef | None
    dropped: list[PassageRef]
    pairs: list[PairReport]
    basis: str = "date"  # temporal clusters: "supersedes" (declared by the winner) or "date"
    trimmed: list[PassageRef] = field(default_factory=list)  # kept without their stale sentences


@dataclass
class ConflictReport:
    checked: int = 0
    pairs: list[PairReport] = field(default_factory=list)
    clusters: list[ClusterReport] = field(default_factory=list)
    kept: list[PassageRef] = field(default_factory=list)
    dropped: list[PassageRef] = field(default_factory=list)
    llm_calls: int = 0
    elapsed_ms: float = 0.0
    #: Conflicts found but not about the question (no compared claim among its best clauses): kept as they are.
    unrelated: list[PairReport] = field(default_factory=list)

    @property
    def unresolved(self) -> list[ClusterReport]:
        return [c for c in self.clusters if c.resolution == "unresolved"]

    def notes(self, language: str) -> list[str]:
        """One line per cluster for the user, in the question's language."""
        text = TEXT.get(language, TEXT["en"])
        lines = []
        kept_docs = {k.doc_id for k in self.kept}  # a document set aside in part is still a source
        for cluster in self.clusters:
            evidence = "; ".join(dict.fromkeys(e for p in cluster.pairs for e in p.evidence))
            docs = " vs ".join(f"[{m.doc_id}]" for m in cluster.members)
            if cluster.resolution == "temporal" and cluster.winner:
                whole = text["replaced" if cluster.basis == "supersedes" else "dropped"]
                for template, old in [(text["trimmed"], m) for m in cluster.trimmed] + [
                        (text["part"] if m.doc_id in kept_docs else whole, m) for m in cluster.dropped]:
                    lines.append(template.format(old=f"[{old.doc_id}]", old_date=old.date or "?",
                                                        new=f"[{cluster.winner.doc_id}]", new_date=cluster.winner.date,
                                                        evidence=evidence))
            elif cluster.resolution == "unresolved":
                lines.append(text["unresolved"].format(docs=docs, evidence=evidence))
            else:
                lines.append(text["detected"].format(docs=docs, evidence=evidence))
        # Two chunks of one superseded document make the same line: say it once.
        return list(dict.fromkeys(lines))

    def prompt_notes(self) -> list[str]:
        """What the answer model must know: unresolved disagreements are stated, not hidden."""
        out = []
        for cluster in self.unresolved:
            evidence = "; ".join(dict.fromkeys(e for p in cluster.pairs for e in p.evidence))
            docs = ", ".join(m.doc_id for m in cluster.members)
            out.append(f"The sources {docs} disagree ({evidence}). State both values and say the sources disagree.")
        return out

    def answer_suffix(self, language: str) -> str:
        """Appended to the answer so an unresolved disagreement is never silently dropped by the model."""
        lines = [line for line in self.notes(language) if line.startswith("⚠")]
        return ("\n" + "\n".join(lines)) if lines else ""

    def to_dict(self, language: str = "en") -> dict[str, Any]:
        data = asdict(self)
        notes = self.notes(language)
        data["notes"] = notes
        data["summary"] = " ".join(notes)
        data["n_conflicts"] = len(self.pairs)
        return data


def build_report(nodes: list[NodeWithScore], resolution: Resolution, *, unrelated: Sequence[ConflictPair] = (),
                 llm_calls: int = 0, elapsed_ms: float = 0.0) -> ConflictReport:
    refs = {n.node.node_id: _ref(n) for n in nodes}
    pairs = {}
    all_pairs = []
    for cluster in resolution.clusters:
        for p in cluster.pairs:
            pair = _pair(p, refs)
            pairs[(p.a, p.b, p.kind)] = pair
            all_pairs.append(pair)
    dropped_ids = set(resolution.dropped_ids)
    trimmed_ids = {i for i, _ in resolution.trimmed}
    clusters = []
    for cluster in resolution.clusters:
        resolution_kind = cluster.kind
        if cluster.kind == "temporal" and not any(i in dropped_ids | trimmed_ids for i in cluster.ids):
            resolution_kind = "detected_only"
        clusters.append(ClusterReport(
            members=[refs[i] for i in cluster.ids],
            resolution=resolution_kind,
            winner=refs.get(cluster.winner_id) if cluster.winner_id else None,
            dropped=[refs[i] for i in cluster.ids if i in dropped_ids],
            pairs=[pairs[(p.a, p.b, p.kind)] for p in cluster.pairs],
            basis=cluster.basis,
            trimmed=[refs[i] for i in cluster.ids if i in trimmed_ids],
        ))
    return ConflictReport(
        checked=len(nodes), pairs=all_pairs, clusters=clusters,
        kept=[refs[i] for i in resolution.kept_ids], dropped=[refs[i] for i in resolution.dropped_ids],
        llm_calls=llm_calls, elapsed_ms=round(elapsed_ms, 3),
        unrelated=[_pair(p, refs) for p in unrelated],
    )


def _pair(p: ConflictPair, refs: dict[str, PassageRef]) -> PairReport:
    return PairReport(refs[p.a], refs[p.b], p.kind, list(p.evidence), round(float(p.similarity), 4))


def _ref(nws: NodeWithScore) -> PassageRef:
    meta = nws.node.metadata
    return PassageRef(node_id=nws.node.node_id, doc_id=str(meta.get("doc_id", nws.node.node_id)),
                      title=str(meta.get("title", "")), date=str(meta.get("date", "")))
