"""The ``service`` part: N concurrent sessions x 5 turns against the HTTP service on loopback.

Per concurrency level: throughput, per-turn latency p50/p95 (time to the ``done`` event; time to
the first ``token`` too), the share of turns turned away with 503 (admission), other errors, and
cross-talk (each session's stored history must be exactly its own questions and answers). Before
the load, the first conversation's first two turns right after ``/readyz`` said 200, then another
conversation's: what a first user waits against a warm turn. The same turns through the in-process session path (what the
REPL does) stand beside it, so the service's own cost is the difference.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import httpx

from engines.chat import ConversationalRAGEngine
from engines.pipeline import Pipeline
from engines.session import Session
from evals.stats import p50_p95


async def _conversation(client: httpx.AsyncClient, questions: Sequence[str]) -> dict[str, Any]:
    sid = (await client.post("/v1/sessions")).json()["id"]
    turns, errors, rejected, exchanged = [], 0, 0, []
    for question in questions:
        t0 = time.perf_counter()
        first = None
        answer = None
        async with client.stream("POST", f"/v1/sessions/{sid}/messages", json={"content": question},
                                 headers={"Accept": "text/event-stream"}) as response:
            if response.status_code != 200:
                rejected += response.status_code == 503
                errors += response.status_code != 503
                await response.aread()
                continue
            event = None
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    if event == "token" and first is None:
                        first = time.perf_counter() - t0
                    elif event == "done":
                        answer = json.loads(line[6:])["answer"]
                    elif event == "error":
                        errors += 1
        total = time.perf_counter() - t0
        turns.append({"total_ms": total * 1000, "first_token_ms": (first or total) * 1000})
        if answer is not None:
            exchanged.append((question, answer))
    stored = (await client.get(f"/v1/sessions/{sid}")).json()["messages"]
    # each answered turn with its own question (a turn turned away in the middle is not stored)
    expected = [m for q, a in exchanged for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})]
    return {"turns": turns, "errors": errors, "rejected": rejected, "cross_talk": stored != expected}


async def _level(base: str, conversations: Sequence[Sequence[str]], n: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=n + 4, max_keepalive_connections=n + 4)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        t0 = time.perf_counter()
        results = await asyncio.gather(*(_conversation(client, conversations[i % len(conversations)])
                                         for i in range(n)))
        wall = time.perf_counter() - t0
        metrics = (await client.get("/metrics")).text
    turns = [t for r in results for t in r["turns"]]
    rejected = sum(r["rejected"] for r in results)
    return {"sessions": n, "turns": len(turns), "wall_s": round(wall, 2), "rejected_503": rejected,
            "share_503": round(rejected / (len(turns) + rejected), 3) if turns or rejected else 0.0,
            "turns_per_s": round(len(turns) / wall, 2) if wall else None,
            "total_ms": p50_p95([t["total_ms"] for t in turns]),
            "first_token_ms": p50_p95([t["first_token_ms"] for t in turns]),
            "errors": sum(r["errors"] for r in results), "cross_talk": sum(r["cross_talk"] for r in results),
            "queue_depth_seen": "turnrag_queue_depth" in metrics}


def run_service_load(base: str, conversations: Sequence[Sequence[str]], levels: Sequence[int]) -> list[dict[str, Any]]:
    return [asyncio.run(_level(base, conversations, n)) for n in levels]


def run_first_turns(base: str, questions: Sequence[str]) -> dict[str, Any]:
    """``questions`` as one session (the service's first, when called right after ready)."""

    async def once() -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=base, timeout=600) as client:
            return await _conversation(client, questions)

    result = asyncio.run(once())
    return {"total_ms": [round(t["total_ms"]) for t in result["turns"]], "errors": result["errors"] + result["rejected"]}


def run_in_process(pipeline: Pipeline, conversations: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The same turns, one session at a time, in this process (the REPL's path)."""
    totals, firsts = [], []
    for questions in conversations:
        engine = ConversationalRAGEngine(Session(pipeline, log_turns=False))
        for question in questions:
            t0 = time.perf_counter()
            first = None
            for _ in engine.stream_chat(question).response_gen:
                if first is None:
                    first = time.perf_counter() - t0
            total = time.perf_counter() - t0
            totals.append(total * 1000)
            firsts.append((first or total) * 1000)
    return {"turns": len(totals), "total_ms": p50_p95(totals), "first_token_ms": p50_p95(firsts)}
