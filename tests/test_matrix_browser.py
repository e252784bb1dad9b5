"""Drive a real Chromium against the rendered matrix: escaping, the detail panel, visible invisibles."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_reports import make_cell, make_results

from reports.html import write_matrix

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parents[1] / "reports" / "out" / "test-matrix.png"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = "</script><img src=x onerror=alert(1)>"
INPUT_TEXT = f'<think>plan\tit</think>\n<tool_call>{{"x": "a\u200bb"}}</tool_call> {HOSTILE}'
CHUNKING = ["<think>plan\tit</th", "ink>\n<tool_", "call>", HOSTILE]
RERUN = "pytest tests/test_matrix.py --parser reference/hermes --case tool.single --mode tokens"

pytestmark = pytest.mark.browser


def sample_results() -> dict:
    text_input = {
        "text": INPUT_TEXT,
        "token_ids": list(range(20)),
        "context": {"tools": ["x"]},
        "stop": "stop",
    }
    failing = make_cell(
        mode="tokens",
        outcome="fail",
        input=text_input,
        chunking=CHUNKING,
        holdback=4,
        rerun=RERUN,
        failures=[{"check": "tool_calls", "detail": "call dropped; content leaked " + HOSTILE}],
        observed={"content": HOSTILE, "reasoning": "plan\tit", "tool_calls": [], "finish_reason": "stop"},
    )
    cells = [
        make_cell(mode="batch", input=text_input),
        failing,
        make_cell(
            mode="random",
            outcome="xfail",
            input=text_input,
            examples=200,
            reason="known: splits markers",
            link="https://example.invalid/issue/1",
            bugs=["splits-markers"],
        ),
        make_cell(case="tool.parallel"),
        make_cell(case="reasoning.basic", outcome="n/a", reason="no reasoning"),
        make_cell(case="harmony.channels", outcome="unimplemented", reason="no position"),
        make_cell("vllm/hermes", "tool.single", "batch", "error", error="RuntimeError: boom"),
        make_cell("vllm/hermes", "tool.parallel", "batch", "changed", diff="--- recorded\n+++ now\n-a\n+b"),
        make_cell("vllm/hermes", "reasoning.basic", "batch", "fixed"),
        make_cell("vllm/hermes", "harmony.channels", "batch", "timeout", error="Timeout after 30 s"),
        make_cell("sglang/kimi_k2", "tool.single", "batch", "skip", reason="sglang not installed"),
    ]
    return make_results(cells, engines={
        "reference": {"bugs": {"splits-markers": {"reason": "known: splits markers",
                                                  "link": "https://example.invalid/issue/1", "untriaged": False}}},
        "sglang": {"version": None, "available": False, "skip_reason": "not installed"},
    })


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's Chromium at /usr/bin/chromium: apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_matrix_in_browser(browser, tmp_path: Path) -> None:
    page_path = write_matrix(sample_results(), tmp_path / "matrix.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(page_path.as_uri())

    cell = page.locator('td.cell[data-parser="reference/hermes"][data-case="tool.single"]')
    assert cell.get_attribute("data-outcome") == "fail"
    assert cell.inner_text().strip() == "✗"
    assert page.locator("#detail").is_hidden()

    cell.click()
    assert page.locator("#detail").is_visible()
    shown = page.locator("#detail-input").inner_text()
    assert "↵" in shown and "→" in shown and "⟨U+200B⟩" in shown
    assert "<img src=x onerror=alert(1)>" in shown
    assert page.locator("img").count() == 0
    deltas = page.locator("#detail-chunking .delta")
    assert deltas.count() == len(CHUNKING)
    assert deltas.nth(0).inner_text() == "<think>plan→it</th"
    assert deltas.nth(1).inner_text().startswith("ink>↵")
    assert deltas.nth(3).inner_text() == HOSTILE
    assert page.locator("#detail-rerun").inner_text() == RERUN
    assert page.locator('#detail-modes li[data-mode="tokens"]').get_attribute("aria-current") == "true"
    assert "call dropped" in page.locator("#detail").inner_text()
    assert '"tools"' in page.locator("#detail-context").text_content()  # contexts are held once, by index
    assert '+   "content": "</script>' in page.locator("#detail-diff").inner_text()

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    page.locator('#detail-modes li[data-mode="random"]').click()
    assert page.locator('#detail-modes li[data-mode="random"]').get_attribute("aria-current") == "true"
    assert page.locator("#detail-rerun").inner_text().endswith("--mode random")
    status = page.locator("#detail-status").inner_text()
    assert "xfail" in status and "200 examples" in status
    assert "known: splits markers" in page.locator("#detail").inner_text()
    assert page.locator("#detail-chunking .delta").count() == 0
    page.locator("#detail-status a.tag").click()  # the bug it cites, in the page's known-broken list
    assert page.evaluate("location.hash") == "#bug-reference/splits-markers"
    assert "1 cell, 1 parser · known: splits markers" in page.locator("#bug-reference\\/splits-markers").inner_text()
    page.locator('#detail-modes li[data-mode="random"]').click()

    page.locator("#detail-copy").click()
    page.keyboard.press("Escape")
    assert page.locator("#detail").is_hidden()

    page.locator('td.cell[data-parser="vllm/hermes"][data-case="tool.parallel"]').click()
    assert "recorded" in page.locator("#detail-diff").inner_text()

    assert errors == []
    assert dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in requests), requests
    page.close()


def test_matrix_opens_the_cell_named_in_the_link(browser, tmp_path: Path) -> None:
    """`matrix.html#cell=<parser>:<case>:<mode>` (as the markdown summary links it) opens that cell's detail on
    that mode; `#parser-…` targets a parser's row; a hostile or unknown fragment does nothing."""
    from urllib.parse import quote

    from reports.summary import cell_fragment, row_anchor

    page_path = write_matrix(sample_results(), tmp_path / "matrix.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    page.goto(page_path.as_uri() + "#" + cell_fragment("reference/hermes:tool.single:random"))
    assert page.locator("#detail").is_visible()
    assert page.locator("#detail-title").inner_text() == "reference/hermes · tool.single"
    assert page.locator('#detail-modes li[data-mode="random"]').get_attribute("aria-current") == "true"
    assert page.locator('td.cell[data-parser="reference/hermes"][data-case="tool.single"]').get_attribute(
        "class").endswith("selected")

    page.evaluate("hash => { location.hash = hash; }", "#" + cell_fragment("vllm/hermes:tool.parallel:batch"))
    page.wait_for_function("document.getElementById('detail-title').textContent.indexOf('tool.parallel') > 0")
    assert "recorded" in page.locator("#detail-diff").inner_text()

    for hostile in ("#cell=" + quote('"><img src=x onerror=alert(1)>'), "#cell=%E0%A4%A", "#cell=__proto__",
                    "#cell=constructor", "#cell=reference/hermes:tool.single"):
        page.goto("about:blank")
        page.goto(page_path.as_uri() + hostile)
        assert page.locator("#detail").is_hidden(), hostile
    assert page.locator("img").count() == 0

    page.goto(page_path.as_uri() + "#" + row_anchor("vllm/hermes"))
    assert page.evaluate("document.querySelector('tr:target').id") == "parser-vllm/hermes"
    assert errors == [] and dialogs == []
    page.close()
