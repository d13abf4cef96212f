"""The seed's conflict scenarios through the REPL with the embedded defaults (e5-small, local LLM):
one line says what was set aside and why, and the outdated value does not reach the answer.

Whether the answer states the *current* value is up to the answer model: the packaged 1.5B model
gets it right for the English API question and both Acme questions and wrong for the Vietnamese
API and remote-work questions (it invents a limit, or answers NOT_FOUND). That is measured and
printed here (run with -s), reported in the README, and not asserted: it is the model's ceiling,
not this feature's. The English remote-work question is left out: the corpus holds that policy in
Vietnamese only and the refusal gate refuses the cross-lingual question before any conflict check.
"""

import io
import re

import pytest

from app.chat import run
from app.config import SAMPLE_CORPUS

pytestmark = pytest.mark.e2e

#: (question, a string the current answer holds, the outdated value, the document set aside). The
#: outdated value is matched as a bare number: the packaged model once answered just "3".
SCENARIOS = [
    ("What is the rate limit for the PNB Open Banking API?", "500", r"\b100\b", "api-rate-limit-v1-2"),
    ("Hạn mức gọi API Open Banking của PNB là bao nhiêu yêu cầu mỗi phút?", "500", r"\b100\b", "api-rate-limit-v1-2"),
    ("What was Acme Corp's revenue for FY2023?", "6.8", r"4\.2", "acme-fy2023-preliminary"),
    ("Doanh thu năm 2023 của Acme Corp là bao nhiêu?", "6,8|6.8", r"4,2|4\.2", "acme-fy2023-preliminary"),
    ("Nhân viên khối Hội sở phải lên văn phòng mấy ngày mỗi tuần?", "toàn thời gian|full remote|từ xa", r"\b3\b",
     "remote-work-2023-06"),
]


@pytest.fixture(scope="module")
def transcript(tmp_path_factory):
    index = tmp_path_factory.mktemp("conflicts-e2e") / "index"
    lines = []
    for question, *_ in SCENARIOS:
        lines += [question, "/reset"]
    out, err = io.StringIO(), io.StringIO()
    code = run(["--index", str(index), "--corpus", str(SAMPLE_CORPUS)], stdin=io.StringIO("\n".join(lines) + "\n"),
               stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    turns = re.split(r"^(?:Đã bắt đầu hội thoại mới\.|Started a new conversation\.)$\n?", out.getvalue(), flags=re.M)
    return [t for t in turns if t.strip()]


@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=[s[3] + "-" + s[0][:12] for s in SCENARIOS])
def test_newer_value_in_the_answer_and_a_note_on_what_was_set_aside(transcript, index):
    question, current, outdated, set_aside = SCENARIOS[index]
    turn = transcript[index]
    print(f"\nQ: {question}\n{turn}")
    note = [line for line in turn.splitlines() if f"[{set_aside}]" in line and not line.startswith(("Nguồn", "Sources"))]
    assert len(note) == 1, "one line names the document set aside"
    answer = turn.split(note[0])[0]
    print(f"current value ({current}) in the answer: {bool(re.search(current, answer, flags=re.I))}")
    assert not re.search(outdated, answer), "the outdated value must not be the answer"
