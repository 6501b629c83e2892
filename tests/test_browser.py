"""The dashboard in a real headless Chromium: start the server, open Protect, move the knob, see it all move.

Needs Debian's chromium (or any `chromium` on PATH) and the playwright Python package; skips otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from engine.cli import is_loopback

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
INSTALL_HINT = "install chromium: apt-get install chromium; the Makefile does this when run as root"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SWEEP_TIMEOUT_MS = 240_000
MOVE_TIMEOUT_MS = 60_000
LIVE = '[data-testid="stElementContainer"]:not([data-stale="true"])'  # an element as drawn now, not a stale copy kept while the page reruns


def chromium_path() -> str | None:
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, server: subprocess.Popen, log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the dashboard exited with status {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the dashboard did not answer {url} within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def from_this_machine(url: str) -> bool:
    """Whether a request of the page stays on this machine: a loopback host, or a data:/blob: address."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about"):
        return True
    return parsed.hostname is not None and is_loopback(parsed.hostname)


@pytest.fixture
def playwright_api():
    """Playwright's sync API and the Chromium to drive, or a skip saying how to get them."""
    executable = chromium_path()
    if executable is None:
        pytest.skip(f"no chromium found; {INSTALL_HINT}")
    try:
        from playwright import sync_api
    except ImportError:
        pytest.skip(f"the playwright Python package is not installed (pip install playwright); {INSTALL_HINT}")
    return sync_api, executable


@pytest.fixture
def dashboard(playwright_api, tmp_path):
    """`textsdc dashboard` on a free local port; yields its URL."""
    port = free_port()
    log = tmp_path / "streamlit.log"
    env = dict(os.environ)
    env.pop("TEXTSDC_CHROMIUM", None)  # the reviewer PDF printed as on a user's machine
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    textsdc = Path(sys.executable).parent / "textsdc"
    # From another folder than the project's: `textsdc dashboard` passes every privacy setting itself.
    cmd = [
        *([str(textsdc)] if textsdc.is_file() else [sys.executable, "-m", "engine.cli"]),
        "dashboard",
        "--port",
        str(port),
        "--data",
        "airline-tweets",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def test_protect_page_moves_with_the_knob(playwright_api, dashboard, tmp_path):
    sync_api, executable = playwright_api
    expect = sync_api.expect

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            page.on("websocket", lambda ws: requested.append(ws.url))
            page.goto(dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)

            page.locator('[data-testid="stSidebarNav"] a', has_text="Protect").click()
            # The knob and its views live in one frame (dashboard/knob_view.py); a move is drawn there and
            # reported to the server, which makes the release at the new value the one Export writes.
            view = page.frame_locator('iframe[title*="knob_view"]')
            knob_caption = view.locator("#caption")
            expect(knob_caption).to_have_text("Current knob: level = 1", timeout=SWEEP_TIMEOUT_MS)
            # Issue 54: the knob is in sight on a laptop's screen (1280 × 800) without scrolling, the settings
            # folded in expanders above it.
            page.set_viewport_size({"width": 1280, "height": 800})
            page.wait_for_timeout(1000)
            knob_box = view.get_by_role("slider").bounding_box()
            assert knob_box is not None and 0 <= knob_box["y"] and knob_box["y"] + knob_box["height"] <= 800, knob_box
            assert page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop") == 0
            # The chips naming the intruder's targets, beside the view, show each name whole (wrapped, not cut).
            chips = page.locator('[data-testid="stMultiSelect"]', has_text="Targets of the intruder").locator(
                "[data-tag] > span[title]"
            )
            expect(chips.first).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            cut = chips.evaluate_all(
                """els => els.filter(e => {
                    const box = e.closest('[data-testid="stMultiSelectTagsContainer"]').getBoundingClientRect();
                    const r = e.getBoundingClientRect();
                    return e.scrollWidth > e.clientWidth + 1 || r.right > box.right + 1 || r.left < box.left - 1;
                }).map(e => e.title)"""
            )
            assert chips.count() >= 2 and cut == [], cut
            page.set_viewport_size({"width": 1500, "height": 1100})
            first_sample = view.locator(".view:not(.off) .textsdc-protected").first
            expect(first_sample).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            expect(view.locator(".view:not(.off) .js-plotly-plot").first).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            export_link = page.locator("a", has_text="Export the release at")
            expect(export_link).to_contain_text("level = 1", timeout=MOVE_TIMEOUT_MS)

            sample_before = first_sample.inner_text().strip()
            assert "[HANDLE_1]" in sample_before

            slider = view.get_by_role("slider")
            slider.focus()
            slider.press("ArrowRight")
            expect(knob_caption).to_have_text("Current knob: level = 2", timeout=MOVE_TIMEOUT_MS)
            expect(first_sample).not_to_have_text(sample_before, timeout=MOVE_TIMEOUT_MS)
            expect(export_link).to_contain_text("level = 2", timeout=MOVE_TIMEOUT_MS)
            assert view.locator(".view:not(.off) .js-plotly-plot").count() >= 1
            expect(view.locator(".view:not(.off) .card").first).to_be_visible()
            assert not page.locator('[data-testid="stException"]').count()

            # Let the figures finish drawing, then keep a picture of the page.
            page.wait_for_timeout(1500)
            # Streamlit scrolls inside its main block, so grow the window to the content to picture all of it.
            height = page.evaluate(
                "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], body')]"
                ".map(e => e.scrollHeight))"
            )
            page.set_viewport_size({"width": 1500, "height": min(max(int(height), 1100), 8000)})
            page.wait_for_timeout(1000)
            shot = tmp_path / "protect.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000

            # A bookmarked page address opens that page inside the app, with its navigation and dataset.
            page.goto(f"{dashboard}/export")
            expect(page.get_by_role("heading", name="Export")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            expect(page.locator('[data-testid="stSidebarNav"] a', has_text="Protect")).to_be_visible()
            expect(page.get_by_text("Dataset in use:")).to_be_visible()
            for path in ("data", "synthesize", "counts"):
                page.goto(f"{dashboard}/{path}")
                expect(page.locator('[data-testid="stSidebarNav"] a', has_text="Protect")).to_be_visible(
                    timeout=MOVE_TIMEOUT_MS
                )
                page.wait_for_timeout(1500)

            # Confidential data stays on this machine: the page asks nothing of any other host (no font or icon
            # host, no usage statistics).
            outside = sorted({url for url in requested if not from_this_machine(url)})
            assert not outside, f"the page made requests to other hosts: {outside}"
            assert len(requested) > 10
        finally:
            browser.close()


def test_pin_three_diff_two_and_export_one_with_a_decision(playwright_api, dashboard, tmp_path, monkeypatch):
    """The steward's decision in a real browser: pin three redaction levels, diff two on the Compare page,
    export one with a decision note; the bundle's PDF report renders with its figures."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stSidebarNav"] a', has_text="Protect").click()
            view = page.frame_locator('iframe[title*="knob_view"]')
            caption = view.locator("#caption")
            expect(caption).to_have_text("Current knob: level = 1", timeout=SWEEP_TIMEOUT_MS)
            slider = view.get_by_role("slider")
            pin = page.get_by_role("button", name="Pin this candidate")
            for level in (1, 2, 3):
                if level > 1:
                    slider.focus()
                    slider.press("ArrowRight")
                    expect(caption).to_have_text(f"Current knob: level = {level}", timeout=MOVE_TIMEOUT_MS)
                    expect(page.locator("a", has_text="Export the release at")).to_contain_text(
                        f"level = {level}", timeout=MOVE_TIMEOUT_MS
                    )
                pin.click()
                expect(page.get_by_text(f"Pinned 'redact at level = {level}'")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            # Back and Forward under the knob move the slider through the levels looked at.
            page.get_by_role("button", name="← Back").click()
            expect(caption).to_have_text("Current knob: level = 2", timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_text("Looked at 2 of 3 on this page")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.screenshot(path=str(tmp_path / "back.png"), full_page=True)
            page.get_by_role("button", name="Forward →").click()
            expect(caption).to_have_text("Current knob: level = 3", timeout=MOVE_TIMEOUT_MS)

            page.locator('[data-testid="stSidebarNav"] a', has_text="Compare").click()
            expect(page.get_by_role("heading", name="Pinned candidates")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_text("records differ between")).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            assert not page.locator('[data-testid="stException"]').count()
            page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)

            page.locator('[data-testid="stSidebarNav"] a', has_text="Export").click()
            expect(page.get_by_text("Candidate to export")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.get_by_label("Decided by").fill("A. Steward, data office")
            page.get_by_label("Decided by").press("Enter")
            page.get_by_label("Why this release").fill("level 2 removes the names and keeps the words")
            page.get_by_label("Why this release").press("Control+Enter")
            folder = page.get_by_role("textbox", name="Output folder")
            folder.fill(str(tmp_path / "bundle"))
            folder.press("Enter")
            page.wait_for_timeout(1500)
            page.screenshot(path=str(tmp_path / "export.png"), full_page=True)
            page.get_by_role("button", name="Export", exact=True).click()
            expect(page.get_by_text("Wrote ")).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            browser.close()

    import json

    bundle = tmp_path / "bundle"
    manifest = json.loads((bundle / "manifest.json").read_text())
    decision = manifest["decision"]
    assert decision["by"] == "A. Steward, data office" and decision["chosen"] == "redact at level = 3"
    assert [a["name"] for a in decision["alternatives"]] == ["redact at level = 1", "redact at level = 2"]
    from engine.data.load import load_dataset
    from engine.export.verify import verify_checksums, verify_replay
    from tests.leakage import scan_bundle

    assert verify_checksums(bundle) == []
    assert scan_bundle(bundle, load_dataset("airline-tweets")) == []  # identifiers, manifest, files allowed
    monkeypatch.delenv("TEXTSDC_CHROMIUM", raising=False)  # the replay prints its PDF as the dashboard did
    again = verify_replay(bundle)  # `textsdc verify`: made again byte for byte, the PDF too
    assert again.differences == () and again.not_replayed == ()
    pdfium = pytest.importorskip("pypdfium2")
    pdf = pdfium.PdfDocument(str(bundle / "report.pdf"))
    assert len(pdf) >= 2
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    assert "Candidates weighed" in text and "Risk and utility across the knob" in text
    for i in range(len(pdf)):
        pdf[i].render(scale=1).to_pil().save(tmp_path / f"report-page-{i + 1}.png")


def test_switching_method_page_or_dataset_during_a_sweep_never_shows_a_traceback(playwright_api, dashboard, tmp_path):
    """Issue 54: a steward who changes method while redaction finds named entities, while k-anonymity tags its
    attributes, or changes page while releases are measured, sees the new work start and no traceback; the
    server logs none (joblib's workers ended under the next method's work raised "The executor underlying
    Parallel has been shutdown")."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.get_by_role("combobox", name="Demo dataset").click()
            page.get_by_role("option", name="Twitter profiles with gender", exact=True).click()
            expect(page.get_by_text(re.compile("name: twitter-profiles"))).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.get_by_role("button", name="Use this data").click()
            expect(page.get_by_text("Loaded twitter-profiles")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            nav = page.locator('[data-testid="stSidebarNav"] a')
            bar = page.locator('[data-testid="stProgress"]')
            traceback = page.locator('[data-testid="stException"]')

            def switch_method(title: str) -> None:
                page.get_by_role("combobox", name="Protection method").click()
                page.get_by_role("option", name=title, exact=True).click()

            nav.filter(has_text="Protect text").click()
            expect(bar).to_contain_text("named entities", timeout=SWEEP_TIMEOUT_MS)
            switch_method("k-anonymity of attributes in text")
            expect(bar).to_contain_text(re.compile("tagging|spaCy and word lists"), timeout=SWEEP_TIMEOUT_MS)
            assert not traceback.count()
            switch_method("Identifier redaction")
            expect(bar).to_contain_text("Protecting and measuring", timeout=SWEEP_TIMEOUT_MS)
            assert not traceback.count()
            nav.filter(has_text="Data").click()
            expect(page.get_by_role("combobox", name="Demo dataset")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            nav.filter(has_text="Protect text").click()
            caption = page.frame_locator('iframe[title*="knob_view"]').locator("#caption")
            expect(caption).to_contain_text("Current knob: level", timeout=SWEEP_TIMEOUT_MS)
            assert not traceback.count()
            page.screenshot(path=str(tmp_path / "switched.png"), full_page=True)
        finally:
            browser.close()
    log = (tmp_path / "streamlit.log").read_text(errors="replace")
    assert "Traceback" not in log and "ShutdownExecutorError" not in log, log[-3000:]
    # joblib's warning that it ended the workers under the work left: the next work's workers may be those
    assert "were still being processed by the workers have been cancelled" not in log, log[-3000:]


def test_a_click_right_after_another_choice_is_not_lost(playwright_api, dashboard):
    """Issue 54: "Compare" pressed right after a method is added, and "Use this data" pressed right after another
    demo is picked, act on the first click (the page may still be redrawing the previous choice's button)."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{dashboard}/compare")
            compare = page.get_by_role("button", name="Compare", exact=True)
            expect(compare).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.get_by_role("button", name="Remove Neural text synthesis (recurrent generator)").click()
            expect(page.get_by_role("button", name="Remove Neural text synthesis (recurrent generator)")).to_have_count(
                0, timeout=MOVE_TIMEOUT_MS
            )
            expect(compare).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.wait_for_timeout(1000)
            box = compare.bounding_box()
            assert box is not None
            page.get_by_role("combobox", name="Methods").click()
            page.get_by_role("option", name="Named-entity swap").click()
            # at once, where the button is (the open list of methods hides it from the accessibility tree)
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            expect(page.get_by_role("button", name="Comparing 3 methods…")).to_be_disabled(timeout=MOVE_TIMEOUT_MS)
            expect(compare).to_have_count(0)  # no faded button from before the click is left to click again
            # the comparison runs (a method an earlier test swept comes from the cache, so it may be past the first)
            expect(page.get_by_text(re.compile(r"^Method [1-3] of 3"))).to_be_visible(timeout=MOVE_TIMEOUT_MS)

            page.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
            use = page.get_by_role("button", name="Use this data")
            for title, name in (
                ("Twitter profiles with gender", "twitter-profiles"),
                ("Women's clothing e-commerce reviews", "clothing-reviews"),
            ):
                expect(use).to_be_visible(timeout=MOVE_TIMEOUT_MS)
                option = page.get_by_role("option", name=title, exact=True)
                for _ in range(5):  # a redraw after the load may close the list just opened
                    page.get_by_role("combobox", name="Demo dataset").click()
                    try:
                        expect(option).to_be_visible(timeout=3000)
                        break
                    except AssertionError:
                        page.keyboard.press("Escape")
                option.click()
                use.click()  # at once, while the page redraws for the demo picked
                expect(page.get_by_text(f"Loaded {name}")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            browser.close()


def test_compare_the_methods_on_the_protect_page_acts_on_the_first_click(playwright_api, dashboard, tmp_path):
    """Issue 54's lost first click, on the Protect page: "Compare the methods" pressed once, as soon as it shows
    (the knob's view may still be reporting its value, which reruns the page), starts the comparison."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(f"{dashboard}/protect")
            compare = page.get_by_role("button", name="Compare the methods", exact=True)
            expect(compare).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            compare.scroll_into_view_if_needed()
            compare.click()  # once
            comparing = page.get_by_role("button", name=re.compile(r"^Comparing \d+ methods…$"))
            expect(comparing).to_be_disabled(timeout=MOVE_TIMEOUT_MS)
            expect(compare).to_have_count(0)  # no faded button from before the click is left to click again
            expect(page.get_by_text(re.compile(r"Method \d+ of \d+"))).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.wait_for_timeout(1000)
            expect(compare).to_have_count(0)
            page.screenshot(path=str(tmp_path / "protect-compare.png"), full_page=True)
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            browser.close()


def test_annotate_ten_records_and_see_the_recall_change(playwright_api, dashboard, tmp_path):
    """Issue 51: on the Protect page a steward annotates a sample in Chromium: ten records accepted one by one
    (one with a span added, one with a span removed), the recall on the accepted records shown beside the measure
    and changing as they go; the residual detection risk's cards then say they are measured on those records."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stSidebarNav"] a', has_text="Protect").click()
            view = page.frame_locator('iframe[title*="knob_view"]')
            expect(view.locator("#caption")).to_have_text("Current knob: level = 1", timeout=SWEEP_TIMEOUT_MS)
            page.get_by_text("Annotate a sample", exact=True).click()
            page.get_by_text("Annotate", exact=True).last.click()
            expect(page.get_by_text("Record 1 of 50")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_text("Accept a record to measure recall and precision on it.")).to_be_visible()
            marked = page.locator(".textsdc-annotate mark")
            recall = page.locator(  # the current line, not a stale copy Streamlit keeps while it reruns
                f'.st-key-annotate-recall-redact {LIVE} [data-testid="stMarkdownContainer"]',
                has_text="Recall",
            )
            seen: list[str] = []
            for i in range(10):
                expect(page.get_by_text(f"Record {i + 1} of 50")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
                if i == 0:  # the tweet's destination, a place the detector leaves at level 1, added by its words
                    before = marked.count()
                    page.get_by_label("Add a span: its words, as in the text").fill("Tucson")
                    page.get_by_role("combobox", name="Label of the span to add").click()
                    page.keyboard.type("GPE")  # the keyboard picks the label
                    page.keyboard.press("Enter")
                    page.get_by_role("button", name="Add", exact=True).click()
                    expect(marked).to_have_count(before + 1, timeout=MOVE_TIMEOUT_MS)
                    expect(marked.last).to_have_text("Tucson")
                if i == 3:  # a span the steward does not want: removed
                    before = marked.count()
                    page.get_by_role("button", name="Remove", exact=True).first.click()
                    expect(marked).to_have_count(before - 1, timeout=MOVE_TIMEOUT_MS)
                page.locator(LIVE).get_by_role("button", name="Accept and next").click()
                expect(page.get_by_text(f"{i + 1} record{'s' if i else ''} accepted")).to_be_visible(
                    timeout=MOVE_TIMEOUT_MS
                )
                expect(recall).to_contain_text(f"on {i + 1} accepted record", timeout=MOVE_TIMEOUT_MS)
                seen.append(recall.inner_text().split(",")[0])
            # the tokens "@" and "united" found, "Tucson" missed at level 1: 2 of 3, Wilson [21%, 94%]
            assert seen[0] == "Recall 67% [21–94%]", seen
            assert len(set(seen)) > 2, seen  # it moves as records are accepted
            page.locator(LIVE).get_by_role("button", name="Accept and next").scroll_into_view_if_needed()
            page.wait_for_timeout(800)
            page.screenshot(path=str(tmp_path / "annotate.png"))
            assert (tmp_path / "annotate.png").stat().st_size > 10_000
            # downloaded as CoNLL, forgotten, uploaded back: the same ten records and the same recall
            with page.expect_download() as download:
                page.get_by_role("button", name="Download CoNLL").click()
            conll = tmp_path / "annotations.conll"
            download.value.save_as(conll)
            assert conll.read_text(encoding="utf-8").count("# record = ") == 10
            page.get_by_role("button", name="Forget every annotation").click()
            expect(page.get_by_text("0 records accepted")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stFileUploader"]', has_text="Import annotations").locator(
                'input[type="file"]'
            ).set_input_files(str(conll))
            expect(page.get_by_text("10 records accepted")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_text("Imported 10 annotated records from annotations.conll.")).to_be_visible()
            expect(recall).to_contain_text(seen[-1], timeout=MOVE_TIMEOUT_MS)

            # the corrections: the removed span an allow list, the gain cross-validated, kept on the steward's choice
            gain = page.locator(f'{LIVE} [data-testid="stMarkdownContainer"]', has_text="fold cross-validation")
            expect(gain).to_contain_text("With these lists: recall", timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_text("Kept corrections for redaction: none kept.", exact=False)).to_be_visible()
            use = page.get_by_role("button", name="Use these corrections")
            use.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.screenshot(path=str(tmp_path / "corrections.png"))
            use.click()
            expect(page.get_by_text("in use: this method runs with the kept lists", exact=False)).to_be_visible(
                timeout=SWEEP_TIMEOUT_MS
            )
            expect(page.get_by_role("button", name="Use these corrections")).to_be_disabled()

            # The page drawn again: the detection cards are measured on the ten records
            page.locator('[data-testid="stSidebarNav"] a', has_text="Data").click()
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stSidebarNav"] a', has_text="Protect").click()
            expect(view.locator(".view:not(.off)").get_by_text("in your 10 annotated records").first).to_be_visible(
                timeout=SWEEP_TIMEOUT_MS
            )
            view.locator(".view:not(.off)").get_by_text("What the detector finds").first.scroll_into_view_if_needed()
            page.wait_for_timeout(800)
            page.screenshot(path=str(tmp_path / "annotated-cards.png"))
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            browser.close()
            # the server shares the session's cache folder: what was annotated here must not measure the bundles
            # later tests export of the same demo
            from engine.paths import cache_dir
            from engine.protect.corrections import ANNOTATIONS_FOLDER

            shutil.rmtree(cache_dir() / ANNOTATIONS_FOLDER, ignore_errors=True)


def test_retrain_the_tagger_on_annotations_and_use_it(playwright_api, dashboard, tmp_path):
    """Issue 51: with k-anonymity on the Protect page a steward accepts three records, retrains the tagger on the
    gold set and them, sees its cross-validated recall and precision beside the packaged tagger's, and keeps it:
    the method then tags with it (its ``tagger`` set to "retrained", the page drawn again without an error)."""
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stSidebarNav"] a', has_text="Protect").click()
            box = page.get_by_role("combobox", name="Protection method")
            expect(box).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            box.click()
            page.keyboard.type("k-anonymity")
            page.keyboard.press("Enter")
            view = page.frame_locator('iframe[title*="knob_view"]')
            expect(view.locator("#caption")).to_contain_text("Current knob: k", timeout=SWEEP_TIMEOUT_MS)
            page.get_by_text("Annotate a sample", exact=True).click()
            page.get_by_text("Annotate", exact=True).last.click()
            for i in range(3):
                expect(page.get_by_text(f"Record {i + 1} of 50")).to_be_visible(timeout=MOVE_TIMEOUT_MS)
                page.locator(LIVE).get_by_role("button", name="Accept and next").click()
                expect(page.get_by_text(f"{i + 1} record{'s' if i else ''} accepted")).to_be_visible(
                    timeout=MOVE_TIMEOUT_MS
                )
            expect(page.get_by_text("Retrained tagger: none kept.", exact=False)).to_be_visible()
            page.get_by_role("button", name="Retrain the tagger").click()
            gain = page.locator(f'{LIVE} [data-testid="stMarkdownContainer"]', has_text="Retrained: recall")
            expect(gain).to_contain_text("on the 3 records you accepted, measured by 3-fold", timeout=SWEEP_TIMEOUT_MS)
            expect(page.get_by_text("Recall, retrained", exact=True)).to_have_count(1)  # the table's header
            use = page.get_by_role("button", name="Use the retrained tagger")
            use.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.screenshot(path=str(tmp_path / "retrained.png"))
            use.click()
            expect(page.get_by_text("in use: this method tags with it, trained on 3 annotated records")).to_be_visible(
                timeout=SWEEP_TIMEOUT_MS
            )
            expect(page.get_by_role("button", name="Use the retrained tagger")).to_be_disabled()
            expect(view.locator("#caption")).to_contain_text("Current knob: k", timeout=SWEEP_TIMEOUT_MS)
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            browser.close()
            from engine.paths import cache_dir
            from engine.protect.corrections import ANNOTATIONS_FOLDER

            shutil.rmtree(cache_dir() / ANNOTATIONS_FOLDER, ignore_errors=True)
