"""The Plans page in a real headless Chromium: a text method then a field synthesizer, one slider per step, the
frontier over both knobs (the contract data, small enough to sweep the grid of both knobs in a test); and the
plan beside the single methods on Compare (AppTest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.contract_data import contract_dataset
from tests.test_browser import CHROMIUM_ARGS, free_port, playwright_api, wait_healthy  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SWEEP_TIMEOUT_MS = 600_000
MOVE_TIMEOUT_MS = 60_000


@pytest.fixture
def plan_dashboard(playwright_api, tmp_path):  # noqa: F811 (the fixture imported above)
    """`textsdc dashboard` on the contract data (its schema beside it); yields its URL."""
    dataset = contract_dataset()
    dataset.frame.to_csv(tmp_path / "contract.csv", index=False)
    assert dataset.external is not None
    dataset.external.to_csv(tmp_path / "contract-external.csv", index=False)
    (tmp_path / "contract.schema.toml").write_text(
        dataset.schema.to_toml() + '\n[external]\nfile = "contract-external.csv"\n'
    )
    port, log = free_port(), tmp_path / "streamlit.log"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    cmd = [
        sys.executable,
        "-m",
        "engine.cli",
        "dashboard",
        "--port",
        str(port),
        "--data",
        str(tmp_path / "contract.csv"),
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_the_plans_page_moves_with_each_steps_slider(playwright_api, plan_dashboard, tmp_path):  # noqa: F811
    sync_api, executable = playwright_api
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(plan_dashboard)
            expect(page.get_by_text("Dataset in use", exact=True)).to_be_visible(timeout=MOVE_TIMEOUT_MS)
            page.locator('[data-testid="stSidebarNav"] a', has_text="Plans").click()
            view = page.frame_locator('iframe[title*="knob_view"]')
            shown = view.locator(".view:not(.off):not(.ahead)")  # the view of the knob's value (others drawn ahead)
            expect(shown.get_by_text("Sample records of the whole release")).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            # The first step's slider is the page's; the second step's is the knob view's, switched in the browser.
            up = page.get_by_role("slider")
            assert up.count() == 1
            expect(up).to_have_attribute("aria-valuetext", "1")  # redaction's default level
            knob = view.get_by_role("slider")
            legend = shown.locator(".js-plotly-plot .legendtext")
            expect(legend.filter(has_text="This release: level 1")).to_have_count(1, timeout=MOVE_TIMEOUT_MS)
            # The other lines are swept in the background; once every one is, the steward adds them (the page is not
            # redrawn on its own under a moving knob; a run of the page for another reason adds them too), and the
            # page then lists none left.
            lines = page.get_by_text("Lines of the frontier (redaction level): 0, 1, 2, 3, 4.", exact=True)
            add = page.get_by_role("button", name=re.compile(r"^Add \d+ ready lines? to the frontier$"))
            every = page.get_by_text("ready: every line is swept", exact=False)
            expect(lines.or_(every)).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            if not lines.is_visible():
                add.click()
            expect(lines).to_be_visible(timeout=SWEEP_TIMEOUT_MS)
            expect(legend.filter(has_text="Redaction level 0 (along λ)")).to_have_count(1, timeout=MOVE_TIMEOUT_MS)
            caption = view.locator("#caption")
            first_card = shown.locator(".card .value").first
            before, at_knob = first_card.inner_text(), caption.inner_text()
            knob.focus()
            knob.press("ArrowLeft")
            expect(caption).not_to_have_text(at_knob, timeout=MOVE_TIMEOUT_MS)
            expect(first_card).not_to_have_text(before, timeout=MOVE_TIMEOUT_MS)
            link = page.get_by_role("link", name="Export the release at level = 1, λ = ")
            expect(link).to_have_count(1, timeout=MOVE_TIMEOUT_MS)
            up.focus()
            up.press("ArrowRight")
            expect(legend.filter(has_text="This release: level 2")).to_have_count(1, timeout=MOVE_TIMEOUT_MS)
            expect(page.get_by_role("link", name="Export the release at level = 2, λ = ")).to_have_count(
                1, timeout=MOVE_TIMEOUT_MS
            )
            assert not page.locator('[data-testid="stException"]').count()
            page.wait_for_timeout(1000)
            shot = tmp_path / "plans.png"
            if os.environ.get("TEXTSDC_SHOTS"):
                shot = Path(os.environ["TEXTSDC_SHOTS"]) / "plans.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000

        finally:
            browser.close()


def test_compare_offers_the_plans_page_plan_beside_the_single_methods(tmp_path):
    from tests.test_dashboard import go, start

    dataset = contract_dataset()
    dataset.frame.to_csv(tmp_path / "contract.csv", index=False)
    (tmp_path / "contract.schema.toml").write_text(dataset.schema.to_toml())
    at = go(start(["--data", str(tmp_path / "contract.csv")]), "compare")
    options = at.multiselect(key="compare_methods").options
    assert "Identifier redaction" in options and options[-1] == "Identifier redaction, then shrinkage GLM synthesis"
