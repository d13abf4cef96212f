"""Fine-tuning the reader on CPU: seeded, resumable, with a progress bar and a budget.

Each step reads ``groups_per_step`` answer groups (one question, a positive and hard negatives) and
``scope_per_step`` claim pairs. The answer head learns from a listwise softmax over each group (the
positive against its own negatives, as rerankers are usually trained) plus a pointwise logistic loss
on every pair, so its score also means something on its own (refusal needs a threshold). The scope
head learns from the claim pairs' yes/no labels. A checkpoint every ``checkpoint_every`` steps holds
the trained parameters, the optimiser, the schedule and the data order: a stopped run resumes where
it was, and a rerun with the same inputs and seed gives the same weights.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engines.reader.model import InputShape, encode_pairs, freeze_lower, reader_net, trainable_state
from engines.reader.pairs import ANSWER, SCOPE, Group

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingConfig:
    seed: int = 13
    frozen_layers: int = 6
    max_length: int = 224
    max_query_tokens: int = 80
    groups_per_step: int = 2
    scope_per_step: int = 4
    epochs: float = 1.0
    learning_rate: float = 6e-5
    head_learning_rate: float = 1e-3
    warmup_steps: int = 40
    pointwise_weight: float = 0.5
    scope_weight: float = 0.5
    checkpoint_every: int = 25
    threads: int = 2

    @property
    def shape(self) -> InputShape:
        return InputShape(self.max_length, self.max_query_tokens)


@dataclass(frozen=True)
class Batch:
    groups: tuple[Group, ...]
    scope: tuple[Group, ...]


def schedule(answer: Sequence[Group], scope: Sequence[Group], config: TrainingConfig) -> list[Batch]:
    """Every step's groups, fixed by the seed: the whole run's data order, decided up front."""
    rng = random.Random(config.seed)
    steps = max(1, int(len(answer) * config.epochs / config.groups_per_step))
    order, pairs = [], []
    while len(order) < steps * config.groups_per_step:
        order += rng.sample(range(len(answer)), len(answer))
    while len(pairs) < steps * config.scope_per_step and scope:
        pairs += rng.sample(range(len(scope)), len(scope))
    g, s = config.groups_per_step, config.scope_per_step
    return [Batch(tuple(answer[i] for i in order[k * g:(k + 1) * g]),
                  tuple(scope[i] for i in pairs[k * s:(k + 1) * s]) if scope else ())
            for k in range(steps)]


def data_hash(groups: Sequence[Group]) -> str:
    digest = hashlib.sha256()
    for g in groups:
        digest.update(json.dumps([g.task, g.query, g.passages, g.labels], ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def step_loss(net: Any, tokenizer: Any, batch: Batch, config: TrainingConfig) -> tuple[Any, dict[str, float]]:
    import torch
    import torch.nn.functional as F

    items = [(g, i) for g in batch.groups for i in range(len(g.passages))] + [(g, 0) for g in batch.scope]
    ids, mask = encode_pairs(tokenizer, [g.query for g, _ in items], [g.passages[i] for g, i in items], config.shape)
    logits = net(ids, mask)
    labels = torch.tensor([g.labels[i] for g, i in items])
    n_answer = sum(len(g.passages) for g in batch.groups)
    answer_logits, scope_logits = logits[:n_answer, ANSWER], logits[n_answer:, SCOPE]
    listwise, start, counted = torch.zeros(()), 0, 0
    for g in batch.groups:
        part = answer_logits[start:start + len(g.passages)]
        if 1.0 in g.labels:
            listwise = listwise + F.cross_entropy(part.unsqueeze(0), torch.tensor([g.labels.index(1.0)]))
            counted += 1
        start += len(g.passages)
    listwise = listwise / max(counted, 1)
    pointwise = F.binary_cross_entropy_with_logits(answer_logits, labels[:n_answer])
    scope = (F.binary_cross_entropy_with_logits(scope_logits, labels[n_answer:])
             if len(batch.scope) else torch.zeros(()))
    loss = listwise + config.pointwise_weight * pointwise + config.scope_weight * scope
    return loss, {"listwise": listwise.item(), "pointwise": pointwise.item(), "scope": scope.item()}


def train(backbone: Any, answer: Sequence[Group], scope: Sequence[Group], config: TrainingConfig, work_dir: Path, *,
          max_steps: int | None = None, time_budget_s: float | None = None,
          progress: Callable[[int, int, dict[str, float]], None] | None = None) -> tuple[Any, dict[str, Any]]:
    """Train (or resume) and return the net and a summary; checkpoints go to ``work_dir``."""
    import torch

    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    model, tokenizer = backbone
    net = reader_net(model)
    freeze_lower(net, config.frozen_layers)
    batches = schedule(answer, scope, config)
    total = min(len(batches), max_steps) if max_steps is not None else len(batches)
    head = [p for n, p in net.named_parameters() if n.startswith("head.")]
    body = [p for n, p in net.named_parameters() if p.requires_grad and not n.startswith("head.")]
    optimiser = torch.optim.AdamW([{"params": body, "lr": config.learning_rate},
                                   {"params": head, "lr": config.head_learning_rate}], weight_decay=0.01)
    warm = max(1, config.warmup_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(total - warm, 1))))
    fingerprint = json.dumps({"config": asdict(config), "data": data_hash([*answer, *scope]), "steps": total})
    start, history = _resume(work_dir, fingerprint, net, optimiser, scheduler)
    started = time.perf_counter()
    net.train()
    _freeze_dropout_below(net, config.frozen_layers)
    for step in range(start, total):
        loss, parts = step_loss(net, tokenizer, batches[step], config)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([*body, *head], 1.0)
        optimiser.step()
        scheduler.step()
        history.append({"step": step + 1, "loss": round(loss.item(), 4), **{k: round(v, 4) for k, v in parts.items()}})
        if progress:
            progress(step + 1, total, history[-1])
        done = step + 1 == total
        out_of_time = time_budget_s is not None and time.perf_counter() - started > time_budget_s
        if (step + 1) % config.checkpoint_every == 0 or done or out_of_time:
            _checkpoint(work_dir, fingerprint, net, optimiser, scheduler, step + 1, history)
        if out_of_time and not done:
            logger.warning("time budget spent after step %d of %d; rerun the same command to resume", step + 1, total)
            break
    net.eval()
    return net, {"steps_done": len(history), "steps_total": total, "steps_scheduled": len(batches), "history": history,
                 "data_hash": data_hash([*answer, *scope]), "config": asdict(config)}


def _freeze_dropout_below(net: Any, layers: int) -> None:
    """Frozen layers run as they were packaged (no dropout), so their outputs stay the backbone's."""
    net.encoder.embeddings.eval()
    for layer in net.encoder.encoder.layer[:layers]:
        layer.eval()


def _checkpoint(work_dir: Path, fingerprint: str, net: Any, optimiser: Any, scheduler: Any, step: int,
                history: list[dict[str, float]]) -> None:
    import torch

    work_dir.mkdir(parents=True, exist_ok=True)
    state = {"fingerprint": fingerprint, "step": step, "history": history, "trainable": trainable_state(net),
             "optimiser": optimiser.state_dict(), "scheduler": scheduler.state_dict(),
             "torch_rng": torch.get_rng_state()}
    tmp = work_dir / "checkpoint.pt.tmp"
    torch.save(state, tmp)
    tmp.replace(work_dir / "checkpoint.pt")


def _resume(work_dir: Path, fingerprint: str, net: Any, optimiser: Any, scheduler: Any) -> tuple[int, list]:
    import torch

    path = work_dir / "checkpoint.pt"
    if not path.is_file():
        return 0, []
    state = torch.load(path, weights_only=False)
    if state.get("fingerprint") != fingerprint:
        logger.warning("%s is from another configuration or data; starting over", path)
        return 0, []
    net.load_state_dict(state["trainable"], strict=False)
    optimiser.load_state_dict(state["optimiser"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    logger.info("resuming from step %d", state["step"])
    return int(state["step"]), list(state["history"])


def evaluate(reader: Any, answer: Sequence[Group], scope: Sequence[Group]) -> dict[str, float]:
    """Held-out groups: how often the positive is ranked first, MRR, pointwise accuracy at 0.5 on
    unanswerable groups' passages, and scope accuracy."""
    firsts, rr, unanswerable, scope_right = [], [], [], []
    for g in answer:
        scores = reader.logits([g.query] * len(g.passages), list(g.passages), ANSWER)
        if 1.0 in g.labels:
            pos = g.labels.index(1.0)
            rank = 1 + sum(s > scores[pos] for s in scores)
            firsts.append(rank == 1)
            rr.append(1 / rank)
        else:
            unanswerable.append(max(scores) < 0)
    if scope:
        values = reader.logits([g.query for g in scope], [g.passages[0] for g in scope], SCOPE)
        scope_right = [(v > 0) == (g.labels[0] == 1.0) for g, v in zip(scope, values)]

    def mean(xs: Sequence[float]) -> float:
        return round(sum(xs) / len(xs), 4) if xs else float("nan")

    return {"top1": mean(firsts), "mrr": mean(rr), "groups": len(rr), "unanswerable_all_below": mean(unanswerable),
            "unanswerable_groups": len(unanswerable), "scope_accuracy": mean(scope_right), "scope_pairs": len(scope)}
