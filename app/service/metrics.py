"""Prometheus metrics of the service: turns, refusals, conflicts, LLM calls, step latency, queue."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from engines.record import TurnRecord

STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.turns = Counter("turnrag_turns", "Turns answered", ["api", "route"], registry=self.registry)
        self.refusals = Counter("turnrag_refusals", "Turns refused", ["reason"], registry=self.registry)
        self.conflicts = Counter("turnrag_conflicts", "Conflicting passage pairs found", registry=self.registry)
        self.llm_calls = Counter("turnrag_llm_calls", "LLM calls made by turns", registry=self.registry)
        self.errors = Counter("turnrag_errors", "Turns that failed", ["kind"], registry=self.registry)
        self.step_seconds = Histogram("turnrag_step_seconds", "Time per turn step", ["step"], buckets=STEP_BUCKETS,
                                      registry=self.registry)
        self.queue_depth = Gauge("turnrag_queue_depth", "Turns waiting for an LLM slot", registry=self.registry)
        self.active = Gauge("turnrag_active_turns", "Turns holding an LLM slot", registry=self.registry)

    def observe(self, api: str, record: TurnRecord) -> None:
        self.turns.labels(api=api, route=record.route).inc()
        if record.refused:
            self.refusals.labels(reason=record.refusal_reason or "unknown").inc()
        self.conflicts.inc(int((record.conflicts or {}).get("n_conflicts") or 0))
        self.llm_calls.inc(record.llm_calls)
        for step, ms in record.timings_ms.items():
            self.step_seconds.labels(step=step).observe(ms / 1000)

    def render(self) -> bytes:
        return generate_latest(self.registry)
