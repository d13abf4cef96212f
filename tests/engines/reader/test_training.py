"""Training is seeded and resumable: a stopped run continues to the same weights."""

import copy

import pytest
import torch

from engines.reader.model import Reader
from engines.reader.pairs import ANSWER, SCOPE, Group
from engines.reader.training import TrainingConfig, schedule, train

ANSWER_GROUPS = [
    Group(ANSWER, "Phòng đơn giá bao nhiêu?", ("Phòng đơn 900.000 đồng.", "Phòng đôi 1.400.000 đồng.",
                                              "Cuối tuần cộng 20%."), (1.0, 0.0, 0.0), "t/1"),
    Group(ANSWER, "Museum hours?", ("Opens at 8:00.", "Tickets cost 50.000 VND."), (1.0, 0.0), "t/2"),
    Group(ANSWER, "Có bãi đỗ xe không?", ("Phòng đơn 900.000 đồng.", "Opens at 8:00."), (0.0, 0.0), "t/3"),
]
SCOPE_GROUPS = [Group(SCOPE, "Phòng đơn 900.000 đồng.", ("Phòng đơn 800.000 đồng.",), (1.0,), "p/1"),
                Group(SCOPE, "Phòng đơn 900.000 đồng.", ("Vé bảo tàng 50.000 đồng.",), (0.0,), "p/2")]
CONFIG = TrainingConfig(max_length=32, max_query_tokens=12, groups_per_step=1, scope_per_step=1, epochs=2,
                        warmup_steps=1, checkpoint_every=1, frozen_layers=10)


@pytest.fixture
def small(backbone):
    return (copy.deepcopy(backbone.model), backbone.tokenizer)


def test_the_schedule_is_fixed_by_the_seed():
    groups = [Group(ANSWER, f"q{i}", ("a", "b"), (1.0, 0.0), f"s/{i}") for i in range(20)]
    a, b = schedule(groups, SCOPE_GROUPS, CONFIG), schedule(groups, SCOPE_GROUPS, CONFIG)
    assert a == b and len(a) == 40  # two epochs of one group a step
    assert sorted(g.source for x in a[:20] for g in x.groups) == sorted(g.source for g in groups)  # each once
    other = schedule(groups, SCOPE_GROUPS, TrainingConfig(**{**CONFIG.__dict__, "seed": 99}))
    assert [x.groups for x in other] != [x.groups for x in a]


def test_a_stopped_run_resumes_to_the_same_weights(backbone, tmp_path):
    whole, summary = train((copy.deepcopy(backbone.model), backbone.tokenizer), ANSWER_GROUPS, SCOPE_GROUPS,
                           CONFIG, tmp_path / "a", max_steps=3)
    assert summary["steps_done"] == 3
    part, first = train((copy.deepcopy(backbone.model), backbone.tokenizer), ANSWER_GROUPS, SCOPE_GROUPS, CONFIG,
                        tmp_path / "b", max_steps=3, time_budget_s=0.0)  # stops after its first step
    assert first["steps_done"] == 1
    resumed, second = train((copy.deepcopy(backbone.model), backbone.tokenizer), ANSWER_GROUPS, SCOPE_GROUPS,
                            CONFIG, tmp_path / "b", max_steps=3)
    assert second["steps_done"] == 3
    for (name, a), (_, b) in zip(whole.named_parameters(), resumed.named_parameters()):
        assert torch.allclose(a, b, atol=1e-6), name


def _pointwise_loss(reader):
    pairs = [(g, i) for g in ANSWER_GROUPS for i in range(len(g.passages))]
    logits = torch.tensor(reader.logits([g.query for g, _ in pairs], [g.passages[i] for g, i in pairs]))
    labels = torch.tensor([g.labels[i] for g, i in pairs])
    return float(torch.nn.functional.binary_cross_entropy_with_logits(logits, labels))


def test_training_moves_the_upper_layers_only_and_learns_the_pairs(backbone, tmp_path):
    config = TrainingConfig(**{**CONFIG.__dict__, "epochs": 8, "learning_rate": 1e-4, "head_learning_rate": 1e-2})
    untrained, _ = train((copy.deepcopy(backbone.model), backbone.tokenizer), ANSWER_GROUPS, SCOPE_GROUPS,
                         config, tmp_path / "none", max_steps=0)
    before = _pointwise_loss(Reader(untrained, backbone.tokenizer, shape=CONFIG.shape))
    net, summary = train((copy.deepcopy(backbone.model), backbone.tokenizer), ANSWER_GROUPS, SCOPE_GROUPS,
                         config, tmp_path / "all")
    assert torch.equal(net.encoder.encoder.layer[3].output.dense.weight,
                       backbone.model.encoder.layer[3].output.dense.weight)
    assert not torch.equal(net.encoder.encoder.layer[11].output.dense.weight,
                           backbone.model.encoder.layer[11].output.dense.weight)
    reader = Reader(net, backbone.tokenizer, shape=CONFIG.shape)
    assert _pointwise_loss(reader) < before
    scores = reader.score("Phòng đơn giá bao nhiêu?", list(ANSWER_GROUPS[0].passages))
    assert scores[0] == max(scores)
