"""The reader's inputs, its delta file and loading it back onto the packaged backbone."""

import copy
import json
import threading

import pytest
import torch

from engines.errors import ModelUnavailable
from engines.reader.model import InputShape, Reader, encode_pairs, freeze_lower, load_reader, reader_net, save_delta

PASSAGES = ["Phòng đơn có giá 900.000 đồng/đêm vào ngày thường.", "Cuối tuần cộng thêm 20% giá.",
            "The museum opens at 8:00 on weekdays.", "Thẻ thư viện cho học sinh được mượn tối đa 3 cuốn."]


@pytest.fixture
def net(backbone):
    torch.manual_seed(0)
    built = reader_net(copy.deepcopy(backbone.model))
    freeze_lower(built, 6)
    return built.eval()


def test_pairs_are_laid_out_as_xlmr_with_the_question_cut_first(backbone):
    tokenizer = backbone.tokenizer
    ids, mask = encode_pairs(tokenizer, ["rất " * 200 + "dài?", "ngắn?"], ["đoạn " * 400, "ngắn."],
                             InputShape(max_length=64, max_query_tokens=16))
    assert ids.shape[1] == 64 and mask[0].sum() == 64 and mask[1].sum() < 64
    row = ids[1][: int(mask[1].sum())].tolist()
    assert row[0] == tokenizer.bos_token_id and row[-1] == tokenizer.eos_token_id
    sep = row.index(tokenizer.eos_token_id)
    assert row[sep + 1] == tokenizer.eos_token_id  # </s></s> between the two inputs
    assert tokenizer.decode(row[1:sep]).strip() == "query: ngắn?"
    long_query = ids[0].tolist()
    assert long_query.index(tokenizer.eos_token_id) == 17  # <s> + 16 question tokens, then </s>


def test_only_upper_layers_and_heads_train(net):
    trainable = {n for n, p in net.named_parameters() if p.requires_grad}
    assert "head.weight" in trainable and any(".layer.11." in n for n in trainable)
    assert not any(".layer.5." in n or "embeddings" in n for n in trainable)


def test_the_delta_rebuilds_the_same_reader_on_the_packaged_backbone(net, backbone, built, tmp_path):
    with torch.no_grad():
        net.head.weight.normal_()  # something training would have changed
    mine = Reader(net, backbone.tokenizer, shape=InputShape())
    delta = tmp_path / "delta.safetensors"
    save_delta(net, delta, {"heads": 2, "max_length": 224, "max_query_tokens": 80})
    size_mb = delta.stat().st_size / 1e6
    assert size_mb < 30  # the repository keeps what changed, not the model
    loaded = load_reader(delta, built[0].parent)
    query = "Giá phòng đơn ngày thường?"
    assert loaded.score(query, PASSAGES) == pytest.approx(mine.score(query, PASSAGES), abs=2e-3)  # fp16 delta
    assert loaded.card["max_length"] == 224


def test_a_delta_for_another_backbone_is_refused_with_what_to_do(net, built, tmp_path):
    delta = tmp_path / "delta.safetensors"
    save_delta(net, delta, {"base_sha256": "0" * 64})
    with pytest.raises(ModelUnavailable, match="python -m app.train_reader"):
        load_reader(delta, built[0].parent)
    with pytest.raises(ModelUnavailable, match="not found"):
        load_reader(tmp_path / "missing.safetensors", built[0].parent)


def test_scores_are_the_same_from_several_threads(net, backbone):
    reader = Reader(net, backbone.tokenizer, batch_size=2)
    query = "Bảo tàng mở cửa lúc mấy giờ?"
    expected = reader.score(query, PASSAGES)
    results = []
    threads = [threading.Thread(target=lambda: results.append(reader.score(query, PASSAGES))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == pytest.approx(expected, abs=1e-6) for r in results)
    assert reader.same_scope([(PASSAGES[0], PASSAGES[1])])[0] == pytest.approx(
        reader.same_scope([(PASSAGES[0], PASSAGES[1])])[0])
    assert json.dumps(reader.card) == "{}"
