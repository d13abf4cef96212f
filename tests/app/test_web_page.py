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
