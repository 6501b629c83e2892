"""The Plans page in-process (AppTest, the contract data): the line the first slider stands at is swept first
and shown, the others in the background, the page saying which are still being computed; the second knob is
the knob view the other pages have (a move reads the sweep, it releases nothing); Export writes the plan with
its steps, the bundle scanned for leaks (conftest) and verified byte for byte."""

from __future__ import annotations

import json
import re
import time

import pytest
import streamlit as st

from dashboard import compute, knob_view, session
from engine.cli import main
from tests.contract_data import contract_dataset
from tests.test_dashboard import by_label, counting, decide, go, move_knob, pin, start, view_cards, view_plots

pytestmark = pytest.mark.slow
WAIT_S = 600


@pytest.fixture
def plans_page(tmp_path):
    """The Plans page on the contract data (its schema beside it, redaction without the NER model)."""
    dataset = contract_dataset()
    dataset.frame.to_csv(tmp_path / "contract.csv", index=False)
    assert dataset.external is not None
    dataset.external.to_csv(tmp_path / "contract-external.csv", index=False)
    (tmp_path / "contract.schema.toml").write_text(
        dataset.schema.to_toml() + '\n[external]\nfile = "contract-external.csv"\n'
    )
    return go(start(["--data", str(tmp_path / "contract.csv")]), "plans")


def lines_caption(at) -> str:
    hits = [c.value for c in at.caption if c.value.startswith("Lines of the frontier")]
    assert len(hits) == 1, [c.value for c in at.caption]
    return hits[0]


def wait_for_every_line(at):
    """Rerun the page until no line is still being computed (as the page's poll does)."""
    deadline = time.monotonic() + WAIT_S
    while "Still being swept" in lines_caption(at):
        assert time.monotonic() < deadline, lines_caption(at)
        time.sleep(1)
        at.run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_the_current_line_comes_first_then_every_line_and_the_knob_moves_in_the_view(plans_page, monkeypatch):
    at = plans_page
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    chosen = at.session_state[session.CHOICE]
    assert chosen.method == "redact+glm" and chosen.params == {"redact__level": 1}  # redaction's default level
    first = lines_caption(at)
    assert first.startswith("Lines of the frontier (redaction level): ")
    if "Still being swept" in first:  # the lines besides level 1 come from the background
        assert "Still being swept in the background: " in first and "added to the frontier when it is ready" in first

    wait_for_every_line(at)
    assert lines_caption(at) == "Lines of the frontier (redaction level): 0, 1, 2, 3, 4."
    assert "plan_frontier" in view_plots(at) and "plan_identification" in view_plots(at)
    assert {"Whole-release identification probability", "Classifier F1 ratio"} <= set(view_cards(at))
    link = [p for p in at.get("page_link") if "Export the release at" in p.proto.label]
    assert link and link[-1].proto.label.startswith("Export the release at level = 1, λ = ")

    # The second knob is the knob view: a move reads the line's sweep and the releases it kept.
    sweep = chosen.sweep
    key = next(k for k in at.session_state if re.fullmatch(r"plan_last::redact\+glm::\w+", str(k)))
    calls = counting(monkeypatch, compute, "make_release", "run_sweep")
    move_knob(at, key, sweep.grid[0])
    assert calls == dict.fromkeys(calls, 0)
    assert at.session_state[session.CHOICE].knob == sweep.grid[0]

    # The first knob moves to another line, already swept.
    at.run()
    at.select_slider(key="plan_up::redact+glm").set_value(2.0).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    moved = at.session_state[session.CHOICE]
    assert moved.params == {"redact__level": 2} and moved.sweep is not sweep
    link = [p for p in at.get("page_link") if "Export the release at" in p.proto.label]
    assert link[-1].proto.label.startswith("Export the release at level = 2, λ = ")

    # A restart (the process's memory gone, the disk cache kept) shows every line at once, its views read back.
    st.cache_resource.clear()
    calls = counting(monkeypatch, knob_view, "each_value")
    calls.update(counting(monkeypatch, compute, "run_sweep"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert lines_caption(at) == "Lines of the frontier (redaction level): 0, 1, 2, 3, 4."
    assert calls == {"each_value": 0, "run_sweep": 0}


def test_the_plans_page_exports_the_plan_with_its_steps(plans_page, tmp_path, capsys):
    at = wait_for_every_line(plans_page)
    at.select_slider(key="plan_up::redact+glm").set_value(2.0).run()
    chosen = at.session_state[session.CHOICE]
    go(pin(at, "redact+glm"), "export")
    decide(at)
    out = tmp_path / "plan"
    by_label(at.text_input, "Output folder").set_value(str(out)).run()
    command = at.code[0].value
    assert "--method redact+glm" in command and "--knob level=2 --knob lambda=" in command
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["method"] for s in manifest["method"]["steps"]] == ["redact", "glm"]
    assert manifest["method"]["steps"][0]["knob"]["value"] == 2.0
    assert manifest["knob"]["value"] == chosen.knob
    assert main(["verify", str(out)]) == 0
    assert "the replay makes the same files" in capsys.readouterr().out
