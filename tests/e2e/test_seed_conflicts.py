"""The seed's conflict scenarios through the REPL with the embedded defaults (e5-small, the
local model, answers quoted from the documents): the answer carries the current value, a line
quoting the outdated value says it no longer applies, and one line says what was set aside and why.

The English API question leans on the fact guard (``clause_fact_guard``): e5-small's cosines for the
section's clauses lie within a few thousandths of each other, and on some CPUs three clauses about
versions outscored "500 requests per minute" (CI on 2026-12-05); with the guard off this test fails
there. Known miss, kept visible as a strict xfail: the Vietnamese API question. The policy exists only in
English; e5-small ranks Vietnamese transfer-limit clauses ("hạn mức ...") above the English
"500 requests per minute" clause (the conflict note is still right). The English remote-work
question is left out: the policy exists only in Vietnamese and the refusal gate refuses the
cross-lingual question before any conflict check.
"""

import io
import re

import pytest

from app.chat import run
from app.config import SAMPLE_CORPUS

pytestmark = pytest.mark.e2e

#: (question, the current value (regex), the outdated value (regex), the document set aside,
#: whether the answer is known to miss the current value)
SCENARIOS = [
    ("What is the rate limit for the PNB Open Banking API?", r"500 requests per minute", r"\b100\b",
     "api-rate-limit-v1-2", False),
    ("Hạn mức gọi API Open Banking của PNB là bao nhiêu yêu cầu mỗi phút?", r"500 requests per minute", r"\b100\b",
     "api-rate-limit-v1-2", True),
    ("What was Acme Corp's revenue for FY2023?", r"\$6\.8 million", r"4\.2", "acme-fy2023-preliminary", False),
    ("Doanh thu năm 2023 của Acme Corp là bao nhiêu?", r"\$6\.8 million|6,8", r"4,2|4\.2", "acme-fy2023-preliminary",
     False),
    ("Nhân viên khối Hội sở phải lên văn phòng mấy ngày mỗi tuần?", r"từ xa toàn thời gian", r"\b3\b",
     "remote-work-2023-06", False),
]
#: A quoted line may mention the outdated value only to say it no longer holds.
NO_LONGER = r"không còn áp dụng|bãi bỏ|no longer|superseded|replaced|thay thế"


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


@pytest.mark.parametrize("index", [
    pytest.param(i, id=s[3] + "-" + s[0][:12],
                 marks=[pytest.mark.xfail(strict=True, reason="Vietnamese question, English-only policy")] if s[4] else [])
    for i, s in enumerate(SCENARIOS)
])
def test_newer_value_in_the_answer_and_a_note_on_what_was_set_aside(transcript, index):
    question, current, outdated, set_aside, _ = SCENARIOS[index]
    turn = transcript[index]
    print(f"\nQ: {question}\n{turn}")
    note = [line for line in turn.splitlines() if f"[{set_aside}]" in line and not line.startswith(("Nguồn", "Sources"))]
    assert len(note) == 1, "one line names the document set aside"
    answer = turn.split(note[0])[0]
    for line in answer.splitlines():
        if re.search(outdated, line):
            assert re.search(NO_LONGER, line, flags=re.I), f"outdated value quoted as current: {line}"
    assert re.search(current, answer), "the current value is in the answer"
