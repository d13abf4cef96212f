"""The web page in a real headless Chromium (Debian's, driven by Playwright): the seed's three-turn
conversation typed in, answers streamed, sources and the rewritten query shown."""

from __future__ import annotations

import pytest

from app.service.keys import Keys

pytestmark = pytest.mark.browser
from engines.models.fakes import ScriptedLLM
from tests.app.test_service import dept_corpus, service, serving  # noqa: F401 - fixtures reused
from tests.engines.conversation.test_store import require

SEED = ["Nhân viên thử việc được nghỉ phép năm bao nhiêu ngày?", "Còn hợp đồng thời vụ thì sao?",
        "Cái đó có được cộng dồn không?"]
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def test_the_seed_conversation_in_a_real_browser(service, tmp_path) -> None:  # noqa: F811
    chromium = require("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    llm = ScriptedLLM(["Nhân viên thử việc không có phép năm.", "1 ngày phép mỗi tháng làm việc đủ.",
                       "Ngày phép của hợp đồng thời vụ có được cộng dồn không?", "Không được cộng dồn sang hợp đồng sau."])
    with serving(service(llm), Keys(None)) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page()
        page.goto(base + "/")
        page.check("#show-query")
        for i, question in enumerate(SEED, start=1):
            page.fill("#question", question)
            page.click("#send")
            page.wait_for_selector(f".turn:nth-child({i})[data-state=done]", timeout=30_000)
        turns = page.query_selector_all(".turn")
        answers = [t.query_selector(".answer").inner_text() for t in turns]
        assert answers == ["Nhân viên thử việc không có phép năm.", "1 ngày phép mỗi tháng làm việc đủ.",
                           "Không được cộng dồn sang hợp đồng sau."]
        assert "[leave-probation]" in turns[0].query_selector(".sources").inner_text()
        assert "hợp đồng thời vụ" in turns[1].query_selector(".query").inner_text()  # the swap rule's rewrite, shown
        assert turns[2].query_selector(".query").inner_text() == "Query: Ngày phép của hợp đồng thời vụ có được cộng dồn không?"
        page.click("#new")
        assert page.query_selector_all(".turn") == []
        browser.close()


MARKDOWN_ANSWER = ("**Điều 5.** Phí thường niên theo hạng thẻ:\n\n| Hạng | Phí |\n|---|---|\n| Chuẩn | 200.000 đồng |\n"
                   "| Vàng | 500.000 đồng |\n\n> Miễn phí năm đầu.\n\n<script>window.pwned = 1</script>"
                   "<img src=x onerror=\"window.pwned = 2\">")


def test_the_page_shows_progress_stops_renders_markdown_safely_and_keeps_the_key_per_tab(service, tmp_path) -> None:  # noqa: F811
    import os
    from pathlib import Path

    import httpx

    from tests.app.test_service import SlowLLM

    chromium = require("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    llm = SlowLLM([MARKDOWN_ANSWER, "Câu trả lời bị dừng.", MARKDOWN_ANSWER])
    with serving(service(llm), Keys(None)) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        context = browser.new_context(viewport={"width": 900, "height": 700})
        page = context.new_page()
        page.goto(base + "/")
        page.fill("#question", "Phí thường niên thẻ SKU-4471 là bao nhiêu?")
        page.click("#send")
        page.wait_for_selector(".turn .status")
        assert page.is_disabled("#send") and page.is_visible("#stop")  # one turn at a time, and a way out
        assert "Đang" in page.inner_text(".turn .status")
        page.wait_for_selector(".turn:nth-child(1)[data-state=done]", timeout=30_000)
        assert page.is_enabled("#send") and not page.is_visible("#stop") and page.query_selector(".status") is None
        answer = page.query_selector(".turn:nth-child(1) .answer")
        assert answer.query_selector("strong").inner_text() == "Điều 5."
        assert [td.inner_text() for td in answer.query_selector_all("td")] == ["Chuẩn", "200.000 đồng", "Vàng",
                                                                               "500.000 đồng"]
        assert answer.query_selector("blockquote").inner_text() == "Miễn phí năm đầu."
        assert answer.query_selector("script") is None and answer.query_selector("img") is None
        assert "<script>" in answer.inner_text()  # shown as text, never run
        assert page.evaluate("() => window.pwned") is None

        page.fill("#question", "Còn thẻ vàng thì sao?")
        page.click("#send")
        page.wait_for_selector(".turn:nth-child(2) .status")
        page.click("#stop")
        page.wait_for_selector(".turn:nth-child(2)[data-state=stopped]", timeout=10_000)
        assert "not kept" in page.inner_text(".turn:nth-child(2)")
        session_id = page.evaluate("() => sessionId")
        stored = httpx.get(f"{base}/v1/sessions/{session_id}", timeout=30).json()["messages"]
        assert [m["role"] for m in stored] == ["user", "assistant"]  # the stopped turn left nothing

        page.fill("#key", "tab-secret")
        page.dispatch_event("#key", "change")
        assert page.evaluate("() => sessionStorage.getItem('turnrag-key')") == "tab-secret"
        assert page.evaluate("() => localStorage.getItem('turnrag-key')") is None
        other = context.new_page()
        other.goto(base + "/")
        assert other.input_value("#key") == ""  # another tab does not see it
        shot = Path(os.environ.get("TURNRAG_SCREENSHOTS", tmp_path)) / "web-page.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
