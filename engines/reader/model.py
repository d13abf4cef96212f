"""The reader: the rebuilt e5 encoder reading (conversation, passage) pairs, with two heads.

Head 0 says whether the passage answers the question; head 1 whether two claims speak of the same
subject and scope. The encoder's embeddings and lower layers stay as packaged (frozen in training),
so what training changed, the upper layers and the heads, is a small file kept in the repository
(``data/reader/delta.safetensors``); :func:`load_reader` puts it on the backbone in seconds.
Inputs follow e5's conventions ("query: " / "passage: ") in XLM-R's pair layout
``<s> A </s></s> B </s>``, the question side cut first to ``max_query_tokens``.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.reader.backbone import build_backbone, load_backbone

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

HEADS = 2
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "


@dataclass(frozen=True)
class InputShape:
    max_length: int = 224
    max_query_tokens: int = 80


def reader_net(encoder: Any, heads: int = HEADS, dropout: float = 0.1) -> "torch.nn.Module":
    """The encoder with a mean-pooled linear head (e5 was trained with mean pooling)."""
    import torch

    class ReaderNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(dropout)
            self.head = torch.nn.Linear(encoder.config.hidden_size, heads)

        def forward(self, input_ids: "torch.Tensor", attention_mask: "torch.Tensor") -> "torch.Tensor":
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(self.dropout(pooled))

    return ReaderNet()


def freeze_lower(net: "torch.nn.Module", layers: int) -> None:
    """Embeddings and the first ``layers`` encoder layers keep the packaged weights."""
    for name, parameter in net.named_parameters():
        lower = name.startswith("encoder.embeddings.") or any(
            name.startswith(f"encoder.encoder.layer.{i}.") for i in range(layers))
        parameter.requires_grad_(not lower)


def trainable_state(net: "torch.nn.Module") -> dict[str, "torch.Tensor"]:
    return {n: p.detach().clone() for n, p in net.named_parameters() if p.requires_grad}


def encode_pairs(tokenizer: Any, queries: Sequence[str], passages: Sequence[str],
                 shape: InputShape) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Padded input ids and attention mask for (query, passage) pairs."""
    import torch

    backend = tokenizer.backend_tokenizer
    q_ids = backend.encode_batch([QUERY_PREFIX + q for q in queries], add_special_tokens=False)
    p_ids = backend.encode_batch([PASSAGE_PREFIX + p for p in passages], add_special_tokens=False)
    bos, eos, pad = tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id
    rows = []
    for q, p in zip(q_ids, p_ids):
        head = [bos, *q.ids[: shape.max_query_tokens], eos, eos]
        rows.append(head + p.ids[: max(shape.max_length - len(head) - 1, 0)] + [eos])
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids, mask


class Reader:
    """Scores pairs with a trained reader; shared by every session (one forward at a time: two cores
    gain nothing from concurrent passes, and torch's thread pool is not shared well)."""

    reads_conversation = True  # the rerank step gives it the conversation, not the rewrite alone
    model_name = "reader"  # what TURNRAG_RERANKER names it (the composition root reuses a loaded one)

    def __init__(self, net: Any, tokenizer: Any, *, shape: InputShape = InputShape(), batch_size: int = 16,
                 card: dict[str, Any] | None = None) -> None:
        self.net, self.tokenizer, self.shape, self.batch_size = net.eval(), tokenizer, shape, batch_size
        self.card = card or {}
        self._lock = threading.Lock()

    def logits(self, queries: Sequence[str], passages: Sequence[str], head: int = 0) -> list[float]:
        import torch

        if len(queries) != len(passages):
            raise ValueError(f"{len(queries)} queries for {len(passages)} passages")
        order = sorted(range(len(passages)), key=lambda i: len(passages[i]))  # similar lengths per batch
        out = [0.0] * len(passages)
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                ids, mask = encode_pairs(self.tokenizer, [queries[i] for i in batch],
                                         [passages[i] for i in batch], self.shape)
                values = self.net(ids, mask)[:, head].float().tolist()
                for i, v in zip(batch, values):
                    out[i] = v
        return out

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """P(the passage answers), one per passage: the rerank step's scorer."""
        return _sigmoid(self.logits([query] * len(passages), passages, 0))

    def same_scope(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(two claims speak of the same subject and scope), one per pair."""
        return _sigmoid(self.logits([a for a, _ in pairs], [b for _, b in pairs], 1))


def _sigmoid(values: Sequence[float]) -> list[float]:
    return [1 / (1 + math.exp(-v)) for v in values]


def save_delta(net: Any, path: Path, metadata: dict[str, Any]) -> None:
    """The trained parameters in fp16 with the card as metadata; written atomically."""
    import torch
    from safetensors.torch import save_file

    from engines.io import atomic_write

    state = {n: t.to(torch.float16).contiguous() for n, t in trainable_state(net).items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_file(state, str(tmp), metadata={"card": json.dumps(metadata, ensure_ascii=False, sort_keys=True)})
    atomic_write(path, tmp.read_bytes())
    tmp.unlink()


def load_reader(delta: Path, cache_dir: Path, *, quantize: bool = False, batch_size: int = 16) -> Reader:
    """The packaged backbone (rebuilt once into ``cache_dir``) with the trained delta applied."""
    import torch
    from safetensors import safe_open

    from engines.errors import ModelUnavailable

    delta = Path(delta)
    if not delta.is_file():
        raise ModelUnavailable(f"reader weights {delta} not found (setting reader_delta / TURNRAG_READER_DELTA): "
                               "the packaged ones ship in data/reader/; rebuild them with `python -m app.train_reader`")
    with safe_open(str(delta), framework="pt") as handle:
        card = json.loads(handle.metadata().get("card", "{}"))
        state = {k: handle.get_tensor(k).to(torch.float32) for k in handle.keys()}
    folder = build_backbone(cache_dir)
    backbone = load_backbone(folder)
    base = json.loads((folder / "build.json").read_text(encoding="utf-8")).get("packed_sha256")
    if card.get("base_sha256") and base and card["base_sha256"] != base:
        raise ModelUnavailable(f"reader weights {delta} were trained on another backbone ({card['base_sha256'][:12]}"
                               f", installed {base[:12]}): rebuild them with `python -m app.train_reader`")
    net = reader_net(backbone.model, heads=int(card.get("heads", HEADS)))
    unknown = sorted(set(state) - set(net.state_dict()))
    if unknown:
        raise ModelUnavailable(f"reader weights {delta} do not fit the backbone (e.g. {unknown[:3]}): retrain them")
    net.load_state_dict(state, strict=False)
    net.eval()
    if quantize:
        net = torch.ao.quantization.quantize_dynamic(net, {torch.nn.Linear}, dtype=torch.qint8)
    shape = InputShape(int(card.get("max_length", 224)), int(card.get("max_query_tokens", 80)))
    logger.info("reader loaded from %s (%d trained tensors)", delta, len(state))
    return Reader(net, backbone.tokenizer, shape=shape, batch_size=batch_size, card=card)
