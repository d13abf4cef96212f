"""The REPL driven as a transcript through its stream parameters (piped mode: no prompts, no colour)."""

import io
import os
import socket
from contextlib import contextmanager

from app.chat import run
from engines.models import Models
from engines.models.fakes import HashEmbedding, ScriptedLLM


@contextmanager
def environment(**values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def transcript(tmp_path, corpus, lines, *extra, hook=None):
    """``hook``: scripted models (and the fake embedder's refusal threshold, 0.25)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["--index", str(tmp_path / "index"), "--corpus", str(corpus), "--llm", "fake", "--embedding", "fake", *extra]
    with environment(**({"TURNRAG_REFUSAL_MIN_VECTOR": "0.25"} if hook else {})):
        code = run(argv, stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out, stderr=err, models=hook)
    return code, out.getvalue(), err.getvalue()


def scripted(*replies):
    def models(settings):
        llm = ScriptedLLM(replies)
        return Models(embed_model=HashEmbedding(), llm=llm, condense_llm=llm)
    return models


def test_seed_conversation_transcript(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("TURNRAG_LOG_DIR", str(tmp_path / "logs"))
    hook = scripted(
        "Nhân viên thử việc không có phép năm.",
        # "Còn hợp đồng thời vụ thì sao?" is a swap follow-up: rewritten without the condense LLM
        "1 ngày phép mỗi tháng làm việc đủ.",
        "Ngày phép của hợp đồng thời vụ có được cộng dồn không?", "Không được cộng dồn sang hợp đồng sau.",
    )
    code, out, err = transcript(tmp_path, corpus, [
        "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?",
        "Còn hợp đồng thời vụ thì sao?",
        "/debug",
        "Cái đó có được cộng dồn không?",
        "/quit",
        "never read",
    ], hook=hook)
    assert code == 0
    assert "ingesting" in err  # first run builds the index from the corpus
    lines = out.splitlines()
    assert lines[0] == "Nhân viên thử việc không có phép năm."
    assert lines[1].startswith("Nguồn: [leave-probation]")
    assert lines[2] == "1 ngày phép mỗi tháng làm việc đủ."
    assert "debug on" in lines
    assert "Không được cộng dồn sang hợp đồng sau." in lines
    assert "Truy vấn: Ngày phép của hợp đồng thời vụ có được cộng dồn không?" in out
    assert "never read" not in out and "\x1b[" not in out  # stopped at /quit; no colour codes when piped
    log = (tmp_path / "logs" / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(log) == 3  # one record per turn


def test_refusal_and_commands(tmp_path, corpus):
    code, out, _ = transcript(tmp_path, corpus, ["Giá vàng SJC hôm nay?", "/sources", "/reset", "/record", "/help"],
                              hook=scripted())
    assert code == 0
    assert out.startswith("Xin lỗi, tôi không tìm thấy thông tin này trong tài liệu.\nNguồn: (không có)\nNguồn: (không có)\n")
    assert "Đã bắt đầu hội thoại mới." in out and "{}" in out and "/sources" in out


def test_second_run_reuses_the_index(tmp_path, corpus):
    transcript(tmp_path, corpus, ["/quit"], hook=scripted())
    code, _, err = transcript(tmp_path, corpus, ["/quit"], hook=scripted())
    assert code == 0 and "ingesting" not in err


def test_unreachable_llm_server_gives_one_clear_message(tmp_path, corpus):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out, err = io.StringIO(), io.StringIO()
    question = "Thẻ SKU-4471 có phí thường niên bao nhiêu?"
    argv = ["--index", str(tmp_path / "index"), "--corpus", str(corpus), "--embedding", "fake", "--llm", "openai-like"]
    with environment(TURNRAG_LLM_API_BASE=f"http://127.0.0.1:{port}/v1", TURNRAG_LLM_TIMEOUT_S="5",
                     TURNRAG_REFUSAL_MIN_VECTOR="0.0"):
        code = run(argv, stdin=io.StringIO(question + "\n"), stdout=out, stderr=err)
    shown = out.getvalue()
    assert code == 0
    assert "error: the LLM server could not be reached" in shown and "TURNRAG_LLM_API_BASE" in shown
    assert "Traceback" not in shown + err.getvalue()


def test_bad_setting_exits_2_with_the_setting_named(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("TURNRAG_TOP_K", "0")
    code, out, err = transcript(tmp_path, corpus, [])
    assert code == 2 and "TURNRAG_TOP_K" in err and "Traceback" not in err


def test_session_commands_filter_transform_and_route(tmp_path, corpus):
    hook = scripted("Thẻ tín dụng mã SKU-4471 có phí thường niên 200.000 đồng.")
    code, out, _ = transcript(tmp_path, corpus, [
        "/filter department=the",          # no document has this department: nothing may be shown
        "Phí thường niên thẻ SKU-4471?",
        "/filter clear",
        "/transforms multiquery,hyde conditional",
        "/transforms bogus",
        "/router semantic",
        "/reset",
        "/transforms",
        "/router",
        "/filter date_from=01-01-2024",
    ], hook=hook)
    assert code == 0
    assert "filter: department=the, active documents only" in out
    assert out.count("Xin lỗi, tôi không tìm thấy thông tin này trong tài liệu.") == 1
    assert "filter: active documents only" in out
    assert "transforms: multiquery, hyde (conditional)" in out
    assert "unknown query transform(s) ['bogus']" in out
    assert "router: SemanticRouter" in out
    assert out.count("transforms: multiquery, hyde (conditional)") == 2  # kept across /reset
    assert out.count("router: SemanticRouter") == 2
    assert "/filter.date_from: '01-01-2024' is not a date; write YYYY-MM-DD" in out


def test_quoted_answers_and_their_debug_lines(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("TURNRAG_ANSWER_MODE", "extract")
    monkeypatch.setenv("TURNRAG_ANSWER_CHECK", "yesno")
    code, out, _ = transcript(tmp_path, corpus, ["/debug", "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?"],
                              hook=scripted("YES"))
    assert code == 0
    assert "Theo tài liệu:\n- Nhân viên thử việc không được hưởng phép năm trong thời gian thử việc." in out
    assert "quoted " in out and "[leave-probation]" in out
    assert "answer_mode=extract llm_calls=1 refused=False" in out  # the yes/no check is the only call


def test_debug_shows_the_graded_check_and_its_refusal(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("TURNRAG_ANSWER_MODE", "extract")
    monkeypatch.setenv("TURNRAG_ANSWER_CHECK", "graded")
    monkeypatch.setenv("TURNRAG_ANSWER_CHECK_MIN_SCORE", "0.51")  # a certain NO scores at most (0 + 1) / 2
    code, out, _ = transcript(tmp_path, corpus, ["/debug", "Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?"],
                              hook=scripted("NO"))
    assert code == 0 and "Xin lỗi, tôi không tìm thấy thông tin này trong tài liệu." in out
    assert "answerability 0." in out and "p_yes=0.00, percentile=" in out
    assert "refused=True (check_not_answered)" in out


def test_sources_name_the_pdf_page_and_first_run_lists_files_left_out(tmp_path, corpus):
    import shutil
    from pathlib import Path

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
    shutil.copy(fixtures / "quy-che-nghi-phep.pdf", corpus)
    (corpus / "nul.txt").write_bytes(b"\x00" * 64)
    code, out, err = transcript(tmp_path, corpus, ["Quy chế nghỉ phép năm 2024: nhân viên chính thức được nghỉ bao nhiêu ngày?"],
                                hook=scripted("12 ngày phép năm."))
    assert code == 0
    assert "nul.txt: binary or junk — 64 NUL byte(s)" in err  # the first run's ingest says what it left out
    sources = next(line for line in out.splitlines() if line.startswith("Nguồn:"))
    assert "[quy-che-nghi-phep] Quy chế nghỉ phép năm 2024 (tr. 1" in sources
