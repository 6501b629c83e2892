"""The knob view (`dashboard/knob_view.py`): what it sends the browser, and how the value the browser reports and
the value a page sets agree."""

from __future__ import annotations

import json
import math
import os
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import knob_view
from engine.protect.base import Knob

KNOB = Knob(name="level", symbol="L", label="Level", low=0, high=4, default=2, more_privacy="higher", integer=True)
GRID = [0.0, 1.0, 2.0, 3.0, 4.0]


def _figure(y: list[float]) -> go.Figure:
    return go.Figure(go.Scatter(x=[1, 2, 3], y=y)).update_layout(template="plotly_white", title="t")


def test_payload_sends_each_figure_and_template_once_and_every_value_formatted():
    same, other = _figure([1, 2, 3]), _figure([3, 2, np.nan])
    views = [
        [knob_view.plot(same, "a")],
        [knob_view.plot(same, "a")],
        [knob_view.row([knob_view.plot(other, "b")], [])],
    ]
    payload = json.loads(knob_view.payload(KNOB, GRID[:3], views))
    assert payload["values"] == ["0", "1", "2"]
    assert payload["caption_prefix"] == "Current knob: L = "
    assert payload["label"] == "Level (L) · higher = more privacy"
    assert len(payload["figures"]) == 2 and len(payload["templates"]) == 1
    refs = [payload["views"][0][0]["ref"], payload["views"][1][0]["ref"], payload["views"][2][0]["cols"][0][0]["ref"]]
    assert refs[0] == refs[1] != refs[2]
    b = payload["figures"][refs[2]]
    assert "template" not in b["layout"] and b["tpl"] == 0
    assert b["data"][0]["y"][2] is None  # NaN goes to the browser as a gap, not as invalid JSON


def test_table_block_rounds_numbers_keeps_text_as_text_and_marks_bars():
    frame = pd.DataFrame(
        {"text": ["<b>not html</b>", "two"], "p": [0.123456, math.nan], "n": [1234.5678, 2], "flag": [True, False]}
    )
    block = knob_view.table(frame, bars=["p"], long=["text"], digits=3)
    assert block["columns"] == ["text", "p", "n", "flag"]
    assert block["rows"][0] == ["<b>not html</b>", 0.123456, "1,235", "True"]
    assert block["rows"][1][1] is None and block["rows"][1][2] == "2"
    assert block["bars"] == [1] and block["long"] == [0] and 2 in block["numeric"]
    # One notation a column: posterior means at a large λ read in fixed decimals, not 6.336e-7 beside 0.031.
    means = knob_view.table(pd.DataFrame({"mean": [5.2138, 0.0312, -8.14e-6, 6.336e-7, math.nan]}))
    assert [r[0] for r in means["rows"]] == ["5.214", "0.031", "0.000", "0.000", None]
    assert knob_view.column_numbers(pd.Series([3.377e-6, -8.14e-6])) == ["0.000003", "-0.000008"]
    many = knob_view.table(pd.DataFrame({"x": range(knob_view.MAX_TABLE_ROWS + 50)}))
    assert len(many["rows"]) == knob_view.MAX_TABLE_ROWS


def _app() -> None:
    import streamlit as st

    from dashboard import knob_view
    from engine.protect.base import Knob

    knob = Knob(name="level", symbol="L", label="Level", low=0, high=4, default=2, more_privacy="higher", integer=True)
    grid = [0.0, 1.0, 2.0, 3.0, 4.0]
    payload = knob_view.payload(knob, grid, [[knob_view.text(f"at {g}")] for g in grid])
    page_run = st.session_state.get("page_run", 0)
    st.session_state["value"] = knob_view.knob_view("k", grid, payload, default=2.0, page_run=page_run)


@pytest.fixture
def reported(monkeypatch):
    """What the browser reports (set by a test) and the arguments the page sent it."""
    state: dict = {"value": None, "sent": []}

    def component(**kwargs):
        state["sent"].append(kwargs)
        return state["value"]

    monkeypatch.setattr(knob_view, "_component", lambda: component)
    return state


def test_the_browsers_report_and_the_pages_setting_agree(reported):
    at = AppTest.from_function(_app)
    at.run()
    assert not at.exception
    assert at.session_state["value"] == 2.0 and at.session_state["k"] == 2.0
    first = reported["sent"][-1]
    assert first["start"] == 2 and first["key"] == "k::slider"
    # The views go in a file the browser fetches once; what a run sends is its name and the knob's position.
    assert set(first) == {"views", "start", "revision", "key"}
    views = json.loads((knob_view.component_folder() / first["views"]).read_text(encoding="utf-8"))
    assert [v[0]["text"] for v in views["views"]] == [f"at {g}" for g in (0.0, 1.0, 2.0, 3.0, 4.0)]

    # A move in the browser, reported under the revision it was sent: taken, and the slider is not told to move.
    reported["value"] = {"index": 4, "revision": first["revision"]}
    at.run()
    assert at.session_state["value"] == 4.0 and at.session_state["k"] == 4.0
    assert reported["sent"][-1]["revision"] == first["revision"] and reported["sent"][-1]["start"] == 2
    at.run()  # the same report again changes nothing
    assert at.session_state["value"] == 4.0

    # The page runs again (opened anew, say): the browser draws the knob anew and is told it is at 4.
    at.session_state["page_run"] = 1
    at.run()
    assert at.session_state["value"] == 4.0
    anew = reported["sent"][-1]
    assert anew["start"] == 4 and anew["revision"] == first["revision"] + 1
    reported["value"] = {"index": 4, "revision": anew["revision"]}
    first = anew

    # The page sets the value (a "Use this knob" button): the slider is told to go there under a new revision ...
    at.session_state["k"] = 1.0
    at.run()
    assert at.session_state["value"] == 1.0
    again = reported["sent"][-1]
    assert again["start"] == 1 and again["revision"] == first["revision"] + 1

    # ... so the browser's last report, made before, is not taken for a move.
    at.run()
    assert at.session_state["value"] == 1.0
    reported["value"] = {"index": 3, "revision": again["revision"]}
    at.run()
    assert at.session_state["value"] == 3.0

    # A value between grid values goes to the nearest; a report out of range is ignored.
    at.session_state["k"] = 2.4
    at.run()
    assert at.session_state["value"] == 2.0
    reported["value"] = {"index": 9, "revision": reported["sent"][-1]["revision"]}
    at.run()
    assert at.session_state["value"] == 2.0


def test_views_files_are_written_once_and_old_ones_removed(monkeypatch, tmp_path):
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(tmp_path))
    knob_view.component_folder.cache_clear()
    try:
        text = knob_view.payload(KNOB, GRID[:2], [[knob_view.text("a")], [knob_view.text("b")]])
        path = knob_view.views_file(text)
        assert path.parent == knob_view.component_folder() and path.read_text(encoding="utf-8") == text
        assert knob_view.views_file(text) == path and len(list(path.parent.glob("views-*.json"))) == 1
        other = knob_view.views_file(text.replace('"a"', '"c"'))
        assert other != path
        stale = time.time() - (knob_view.VIEWS_FILES_KEPT_DAYS + 1) * 86_400
        os.utime(other, (stale, stale))
        knob_view.component_folder.cache_clear()
        knob_view.component_folder()
        assert path.exists() and not other.exists()
    finally:
        knob_view.component_folder.cache_clear()


def test_a_cards_change_that_rounds_to_nothing_is_said_so():
    from dashboard.display import change_text

    assert change_text(0.1234) == "+0.123 vs unprotected" and change_text(-0.0006) == "-0.001 vs unprotected"
    assert change_text(-0.00002) == "within 0.001 of unprotected" and change_text(0.0) == "same as unprotected"
    assert change_text(1234.4, integer=True) == "+1,234 vs unprotected"
    assert change_text(0.3, integer=True) == "under 1 from unprotected"


def test_an_engine_message_reads_as_a_sentence_without_touching_a_knob_symbol():
    from dashboard.display import as_sentence

    assert as_sentence("no column 'x'; columns: a, b") == "No column 'x'; columns: a, b."
    assert as_sentence("ε = 1000 split over 396 authors") == "ε = 1000 split over 396 authors."
    assert as_sentence("'data.csv' is empty.") == "'data.csv' is empty."


def test_a_card_shows_no_change_from_an_unprotected_value_at_an_end_of_the_range():
    """A McNemar p of 1 or a swap DR of 1 on the unprotected data is so by construction: "-0.992 vs
    unprotected" only repeated the value (and was coloured as good news)."""
    from dashboard.display import compares_with_unprotected
    from engine.measures.base import MetricResult

    def shows(mid: str, base: float, value: float) -> bool:
        return compares_with_unprotected(mid, MetricResult(mid, base), MetricResult(mid, value))

    assert not shows("swap_mcnemar_p", 1.0, 0.008) and not shows("swap_dr", 1.0, 0.98)
    assert not shows("cell_difference_1way", 0.0, 0.2) and not shows("pmse_ratio", 0.0, 1.4)
    assert shows("attack_identification_rate", 0.08, 0.003)
    assert not shows("attack_identification_rate", float("nan"), 0.003)


def test_the_worst_attack_card_names_the_attack_its_interval_and_chance():
    from dashboard.knob_view import worst_attack_card
    from engine.measures.base import MetricResult

    mid = "background_document_attack"
    worst = worst_attack_card({mid: MetricResult(mid, 0.652, lo=0.61, hi=0.69, chance=1 / 225)})
    assert worst is not None
    assert (worst["label"], worst["value"]) == ("Worst attack: Background passage attack", "0.652")
    assert worst["note"] == "[0.610–0.690], chance 0.004" and "background corpus" in worst["help"]
    assert worst_attack_card({"unigram_cosine": MetricResult("unigram_cosine", 0.9)}) is None


def test_every_page_shows_the_risks_declared_for_every_page_with_interval_and_chance():
    from dashboard.knob_view import every_page_cards
    from engine.measures.base import METRICS, MetricResult

    declared = [m for m in METRICS if METRICS[m].on_every_page]
    assert declared == ["singling_out_risk", "linkability_risk", "inference_risk"]
    metrics = {
        "inference_risk": MetricResult("inference_risk", 0.0123, lo=0.0, hi=0.03, chance=0.5),
        "singling_out_risk": MetricResult("singling_out_risk", 0.02, lo=0.0, hi=0.06, chance=0.001),
        "inference_risk_confidential": MetricResult("inference_risk_confidential", 0.3),  # a baseline: no card
        "unigram_cosine": MetricResult("unigram_cosine", 0.9),  # not declared for every page
        # the worst attack ((0.3 − 0.004) / 0.996 = 0.297): its card comes first, and only there
        "background_author_attack": MetricResult("background_author_attack", 0.3, chance=0.004),
    }
    cards = every_page_cards(metrics)
    assert [c["label"] for c in cards] == ["Singling out", "Inference"]  # registry order, measured ones only
    assert [c["value"] for c in cards] == ["0.020", "0.012"]
    assert [c["note"] for c in cards] == [  # read against their control: the chance level is not their baseline
        "[0.000–0.060], beyond control (chance 0.001)",
        "[0.000–0.030], beyond control (chance 0.500)",
    ]


def test_no_attack_is_shown_twice_the_worst_has_the_first_card_alone():
    from dashboard.knob_view import every_page_cards, worst_attack_card, worst_attack_id
    from engine.measures.base import MetricResult

    metrics = {
        "singling_out_risk": MetricResult("singling_out_risk", 0.213, lo=0.15, hi=0.28, chance=0.2),
        "inference_risk": MetricResult("inference_risk", 0.05, lo=0.0, hi=0.1, chance=0.5),
        "background_author_attack": MetricResult("background_author_attack", 0.2, lo=0.1, hi=0.3, chance=0.004),
    }
    # singling out 0.213 as it is; the author attack (0.2 − 0.004) / 0.996 = 0.197; inference 0.05
    assert worst_attack_id(metrics) == "singling_out_risk"
    worst = worst_attack_card(metrics)
    assert worst is not None and worst["label"] == "Worst attack: Singling out"
    assert worst["note"] == "[0.150–0.280], beyond control (chance 0.200)"
    assert [c["label"] for c in every_page_cards(metrics)] == ["Inference"]  # singling out once, on the first card
    own = {"label": "Singling-out risk (Anonymeter)", "value": "0.213", "delta": "−0.1", "tone": "good", "help": "h"}
    merged = worst_attack_card(metrics, own)
    assert merged is not None and merged["label"] == "Worst attack: Singling out" and merged["delta"] == "−0.1"
    assert merged["help"].endswith("\n\nh") and "control" in merged["help"]
