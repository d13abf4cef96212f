"""`python -m evals.calibrate`: the label-free gates checked against labelled rows and off-topic questions."""

import json

from app.config import load_settings
from engines.answering.gate_calibration import GateCalibration
from engines.corpus.store import Manifest
from evals.calibrate import gate_table, main


def test_gate_table_reports_each_gate_on_the_labelled_rows():
    settings = load_settings(embedding="e5-small", log_dir=None)
    manifest = Manifest("m", 384, 400, 50, "c", gate=GateCalibration(tuple(i / 100 for i in range(100)), (0.1,)).to_dict())
    table = {g["gate"]: g for g in gate_table(settings, manifest, [0.5, 0.9], [0.01, 0.2], [0.0, 0.95])}
    assert table["model (registered)"]["threshold"] == 0.83
    corpus = table["corpus, budget 0.05"]
    assert corpus["threshold"] == 0.04 and corpus["refusal"] == 0.5 and corpus["false_refusal"] == 0.0
    assert corpus["off_topic_refused"] == 0.5
    assert list(gate_table(settings, None, [0.9], [], [])[0]) == ["gate", "threshold", "refusal", "false_refusal",
                                                                  "off_topic_refused"]


def test_the_command_reports_the_gates_with_off_topic_questions(tmp_path, corpus, capsys, monkeypatch):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"conv_id": "a", "turn": 1, "history": [], "question": "Phí thường niên thẻ SKU-4471?", "type": "standalone",
         "gold_doc_ids": ["card-sku-4471"]},
        {"conv_id": "b", "turn": 1, "history": [], "question": "Giá vàng hôm nay?", "type": "unanswerable",
         "gold_doc_ids": []}]), encoding="utf-8")
    routes = tmp_path / "routes.jsonl"
    routes.write_text(json.dumps({"text": "Which wax suits a surfboard?", "route": "out_of_scope"}) + "\n"
                      + json.dumps({"text": "Xin chào", "route": "direct"}) + "\n", encoding="utf-8")
    out = tmp_path / "gates.json"
    assert main([str(rows), "--corpus", str(corpus), "--index", str(tmp_path / "i"), "--embedding", "fake",
                 "--off-topic", str(routes), "--out", str(out)]) == 0
    assert "label-free gates (1 off-topic questions)" in capsys.readouterr().out
    gates = json.loads(out.read_text())["gates"]
    assert [g["gate"] for g in gates][:2] == ["model (registered)", "corpus, budget 0.02"]
