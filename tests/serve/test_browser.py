"""The inbox end to end in a real headless browser (Debian's chromium driven by Playwright) against a real
`hookloop serve` process over checkpoints a real `hookloop run` wrote. A screenshot of each page is saved under
the test's tmp dir (``screenshots/``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from inbox_helpers import XSS, Project, Server
from playwright.sync_api import Browser, Page, expect, sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium (`.ci/run` installs it; Playwright's own browser download cannot work offline)."""
    assert Path(CHROMIUM).exists(), "chromium is not installed (apt-get install chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


def shot(page: Page, tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000
    return path


def test_open_the_inbox_approve_a_call_and_see_the_run_finish(
    page: Page, server: Server, project: Project, tmp_path: Path
) -> None:
    run_id = project.pause("touch browser.marker")
    response = page.goto(server.url)
    assert response is not None
    assert response.ok
    assert "token=" not in page.url  # the token became a cookie and left the address bar
    expect(page.locator("h1")).to_have_text("Runs")
    expect(page.locator(f"tr:has-text('{run_id}') .badge")).to_have_text("paused")
    shot(page, tmp_path, "runs")
    page.click(f"text={run_id}")
    expect(page.locator("#pending legend")).to_contain_text("Bash")
    expect(page.locator("#pending")).to_contain_text("Allow always: Bash(touch:*)")
    shot(page, tmp_path, "run-pending")
    page.click("button:has-text('Approve once')")
    expect(page.locator("#status")).to_have_text("finished", timeout=30_000)
    expect(page.locator("pre.answer")).to_have_text("All done.")
    expect(page.locator("#timeline")).to_contain_text("Bash: approved once")
    assert (project.root / "browser.marker").exists()
    shot(page, tmp_path, "run-finished")
    page.goto(server.base + "/runs?status=finished")
    expect(page.locator(f"tr:has-text('{run_id}') .badge")).to_have_text("finished")


RECORD_LIVE_ROWS = """() => new MutationObserver(changes => {
  for (const change of changes) for (const node of change.addedNodes)
    if (node.nodeType === 1)
      sessionStorage.setItem("live", (sessionStorage.getItem("live") || "") + "|" + node.innerText);
}).observe(document.getElementById("timeline"), {childList: true})"""


def test_the_timeline_updates_live_while_the_run_goes_on(
    page: Page, server: Server, project: Project, tmp_path: Path
) -> None:
    release = project.root / "release.go"
    run_id = project.pause(f"until [ -e {release.name} ]; do sleep 0.05; done; echo released")
    page.goto(server.url)
    page.goto(f"{server.base}/runs/{run_id}")
    page.click("button:has-text('Approve once')")
    expect(page.locator("#status")).to_have_text("running", timeout=30_000)  # the tool waits for the file
    expect(page.locator("#timeline")).to_contain_text("Bash started")
    page.evaluate(RECORD_LIVE_ROWS)  # rows that arrive over server-sent events are recorded in this tab
    shot(page, tmp_path, "run-running")
    release.touch()
    expect(page.locator("#status")).to_have_text("finished", timeout=30_000)
    live = page.evaluate("sessionStorage.getItem('live')") or ""
    assert "result of Bash" in live, live  # appended to the open page before the final reload
    assert "model reply" in live, live
    expect(page.locator("li.result pre")).to_have_text("released")


def test_deny_with_a_reason(page: Page, server: Server, project: Project, tmp_path: Path) -> None:
    page.goto(server.url)
    expect(page.locator("#runs")).to_contain_text("No runs")
    run_id = project.pause("touch denied.marker")
    expect(page.locator(f"tr:has-text('{run_id}') .badge")).to_have_text("paused")  # the list refreshes itself
    page.goto(f"{server.base}/approvals")
    expect(page.locator("h1")).to_have_text("Pending approvals")
    expect(page.locator("section.pause")).to_contain_text(run_id)
    page.fill("input[name='reason:call_0001']", "not before the release")
    shot(page, tmp_path, "approvals")
    page.click("button:has-text('Deny')")
    expect(page.locator("#status")).to_have_text("finished", timeout=30_000)
    expect(page.locator("#timeline")).to_contain_text("not before the release")
    assert not (project.root / "denied.marker").exists()
    shot(page, tmp_path, "run-denied")


def test_an_xss_payload_in_a_tool_result_stays_text(
    page: Page, server: Server, project: Project, tmp_path: Path
) -> None:
    payload = XSS.replace("'", "")  # inside single quotes for the shell
    run_id = project.pause(f"printf '%s' '{payload}'")
    page.goto(server.url)
    page.goto(f"{server.base}/runs/{run_id}")
    expect(page.locator("#pending textarea")).to_contain_text("<script>")  # the call's own arguments: text
    page.click("button:has-text('Approve once')")
    expect(page.locator("#status")).to_have_text("finished", timeout=30_000)
    result = page.locator("li.result pre")
    expect(result).to_have_text(payload)  # shown as the characters it is
    assert page.evaluate("typeof window.__xss") == "undefined"  # neither the script nor the onerror ran
    assert page.locator("li.result img").count() == 0
    assert page.locator("li.result script").count() == 0
    shot(page, tmp_path, "run-xss")


def test_a_request_without_the_token_is_refused(browser: Browser, server: Server, tmp_path: Path) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        for address in (f"{server.base}/runs", f"{server.base}/approvals", f"{server.base}/runs?token=guessed"):
            response = page.goto(address)
            assert response is not None
            assert response.status == 403
            expect(page.locator("h1")).to_have_text("Access token required")
        shot(page, tmp_path, "refused")
    finally:
        context.close()
