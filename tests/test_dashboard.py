"""The dashboard driven headlessly with Streamlit's AppTest: the real app, its navigation and its pages.

The fit, the Evaluator and the sweeps are shared by every test of the run: in memory through Streamlit's
process-wide resource cache and on disk through the session's private cache folder (tests/conftest.py). The
first Protect test pays for the spaCy fit of airline-tweets (about 25 s); the others reuse it.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
import zipfile
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from dashboard import display, session
from dashboard.app import data_argument
from engine.cli import main as cli_main

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
TIMEOUT = 240


@pytest.fixture(autouse=True)
def _plain_argv(monkeypatch):
    """The app reads ``--data`` from sys.argv; under pytest that holds pytest's own arguments."""
    monkeypatch.setattr(sys, "argv", ["app.py"])


def start(argv: list[str] | None = None) -> AppTest:
    if argv is not None:
        sys.argv = ["app.py", *argv]
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def caption_starting(at: AppTest, prefix: str) -> str:
    hits = [c for c in captions(at) if c.startswith(prefix)]
    assert hits, f"no caption starting {prefix!r} in {captions(at)}"
    return hits[0]


def knob_payload(at: AppTest) -> tuple[dict, int]:
    """The views the page sent with its knob (`dashboard.knob_view`) and the grid index it put the knob at."""
    components = at.get("component_instance")
    assert components, "no knob view on the page"
    args = json.loads(components[-1].proto.json_args)
    from dashboard import knob_view

    return json.loads((knob_view.component_folder() / args["views"]).read_text(encoding="utf-8")), args["start"]


def blocks(at: AppTest) -> list[dict]:
    """Every block of the view at the knob's grid value, nested ones included."""
    payload, index = knob_payload(at)
    out: list[dict] = []

    def walk(b: dict) -> None:
        out.append(b)
        for x in b.get("blocks", []):
            walk(x)
        for col in b.get("cols", []):
            for x in col:
                walk(x)
        for tab in b.get("tabs", []):
            for x in tab["blocks"]:
                walk(x)

    for b in payload["views"][index]:
        walk(b)
    return out


def current_knob(at: AppTest) -> str:
    payload, index = knob_payload(at)
    return payload["caption_prefix"] + payload["values"][index]


def view_texts(at: AppTest, style: str | None = None) -> list[str]:
    return [b["text"] for b in blocks(at) if b["t"] == "text" and style in (None, b["style"])]


def view_plots(at: AppTest) -> set[str]:
    return {b["name"] for b in blocks(at) if b["t"] == "plot"}


def view_cards(at: AppTest) -> dict[str, dict]:
    return {c["label"]: c for b in blocks(at) if b["t"] == "cards" for c in b["cards"]}


def assert_every_page_cards(cards: dict[str, dict], metrics: dict) -> None:
    """The singling out, linkability and inference cards: the measured value, its own interval and the chance
    level in the worst attack card's format, by the measures' declaration (`Measure.on_every_page`); the one that
    is the worst attack shown once, on the worst attack's card."""
    from engine.measures.attacks import worst_attack
    from engine.measures.base import metric_info

    every = [m for m in ("singling_out_risk", "linkability_risk", "inference_risk") if metric_info(m).on_every_page]
    assert len(every) == 3
    worst = worst_attack(metrics)
    for mid in every:
        info, m = metric_info(mid), metrics[mid]
        shown = [label for label in cards if label in (info.card, f"Worst attack: {info.card}")]
        assert len(shown) == 1, (mid, sorted(cards))  # never twice
        card = cards[shown[0]]
        assert shown[0] == (f"Worst attack: {info.card}" if worst is not None and worst.id == mid else info.card)
        assert card["value"] == info.format(m.value)
        assert (
            card["note"]
            == f"[{info.format(m.lo)}–{info.format(m.hi)}], beyond control (chance {info.format(m.chance)})"
        )
        assert "e-" not in card["note"] and "e+" not in card["value"]


def view_table(at: AppTest, column: str):
    """The view's table that has ``column``, as a DataFrame."""
    import pandas as pd

    hits = [b for b in blocks(at) if b["t"] == "table" and column in b["columns"]]
    assert hits, f"no table with {column!r} in the view"
    return pd.DataFrame(hits[0]["rows"], columns=hits[0]["columns"])


def protected_samples(at: AppTest) -> list[str]:
    """The protected side of each sample record in the view, as plain text."""
    out = []
    for b in blocks(at):
        if b["t"] == "html":
            for found in re.finditer(r'<div class="textsdc-protected">(.*?)</div>', b["html"]):
                out.append(unescape(re.sub(r"<[^>]+>", "", found.group(1).replace("<br>", "\n"))))
    return out


def move_knob(at: AppTest, key: str, value: float) -> AppTest:
    """Move the knob to ``value`` as the page's own buttons do, and rerun what a move reruns."""
    at.session_state[key] = value
    return fragment_run(at, "_knob_fragment")


def fragment_run(at: AppTest, function: str) -> AppTest:
    """Rerun only the page's fragment ``function`` with the widget values set on ``at``, as the browser asks
    when a widget inside a fragment moves (AppTest itself always reruns the whole script)."""
    import streamlit.testing.v1.local_script_runner as runner

    ids = [
        fid
        for fid, wrapped in at._fragment_storage._fragments.items()
        if any(getattr(c.cell_contents, "__qualname__", None) == function for c in wrapped.__closure__ or ())
    ]
    assert ids, f"no fragment {function!r} registered"
    original = runner.RerunData
    runner.RerunData = lambda **kw: original(**kw, fragment_id_queue=ids[-1:])
    try:
        at.run()
    finally:
        runner.RerunData = original
    assert not at.exception, [e.value for e in at.exception]
    return at


def counting(monkeypatch, module, *names: str) -> dict[str, int]:
    """Calls of ``module.<name>`` counted from now on (each still does its work)."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        real = getattr(module, name)

        def counted(*a, _name=name, _real=real, **k):
            calls[_name] += 1
            return _real(*a, **k)

        monkeypatch.setattr(module, name, counted)
    return calls


def by_label(widgets, label: str):
    hits = [w for w in widgets if w.label == label]
    assert hits, f"no widget labelled {label!r} among {[w.label for w in widgets]}"
    return hits[0]


# ---------------------------------------------------------------------------------------------------------------


def test_data_argument_reads_data_after_the_double_dash():
    assert data_argument([]) == ("airline-tweets", None, None, "error")
    assert data_argument(["--data", "nyc-airbnb"]) == ("nyc-airbnb", None, None, "error")
    argv = ["-q", "tests", "--data", "x.csv", "--other", "--encoding", "latin-1", "--delimiter", ";"]
    assert data_argument([*argv, "--bad-rows", "drop"]) == ("x.csv", "latin-1", ";", "drop")


def test_a_file_given_at_start_is_mapped_on_the_data_page(tmp_path):
    """`textsdc dashboard --data calls.csv --encoding latin-1`: the Data page shows that file, not a demo, with
    its columns' roles (the ticker left out, and why); loading it as mapped keeps it a file the CLI reads alone,
    another text column makes the replay need a schema file."""
    n = 24
    frame = pd.DataFrame(
        {
            "text": [f"Prepared remarks of call {i}: revenue grew, margins held, café sales rose." for i in range(n)],
            "call_id": [f"c{i}" for i in range(n)],
            "ticker": [f"T{i:02d}X" for i in range(n)],
            "notes": [f"analyst note number {i} on the café business and its outlook" for i in range(n)],
        }
    )
    path = tmp_path / "calls.csv"
    path.write_bytes(frame.to_csv(index=False).encode("latin-1"))
    at = start(["--data", str(path), "--encoding", "latin-1"])
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key="data_source").value == "File given at start"
    assert at.session_state[session.DATASET].name == "calls"
    assert any("calls.csv, given to `textsdc dashboard --data` (encoding latin-1)" in c for c in captions(at))
    assert by_label(at.selectbox, "Text column").value == "text"
    assert by_label(at.selectbox, "Document column").value == "call_id"
    from dashboard import loading

    schema, _ = loading.default_schema_for(frame, None)
    fields = loading.field_table(frame, schema, {"text", "call_id"}).set_index("column")
    assert fields.loc["ticker", "role"] == "drop" and "one value per record" in fields.loc["ticker", "note"]
    why = caption_starting(at, "Why they are left out or treated so:")  # in full: the table's cells cut long notes
    assert "**ticker**: one value per record (24 different)" in why and "(sensitive, for the swap to protect it)" in why

    by_label(at.button, "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    origin = at.session_state[session.ORIGIN]
    assert (origin.kind, origin.data, origin.encoding, origin.custom_schema) == ("file", str(path), "latin-1", False)
    by_label(at.selectbox, "Text column").set_value("notes").run()
    by_label(at.button, "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[session.DATASET].schema.text == "notes"
    assert at.session_state[session.ORIGIN].custom_schema
    # the demos and uploads stay one choice away
    at.radio(key="data_source").set_value("Demo dataset").run()
    assert not at.exception and at.selectbox(key="data_demo").value == "airline-tweets"


def test_app_starts_on_the_default_demo_and_previews_it():
    at = start()
    dataset = at.session_state[session.DATASET]
    assert dataset.name == "airline-tweets"
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Records"] == f"{dataset.n_records:,}"
    assert metrics["External records"] == "300"
    preview = at.dataframe[-1].value
    assert len(preview) == 50 and list(preview.columns) == list(dataset.frame.columns)
    # The demo picker shows the demos by title, the mapping is the demo's own.
    assert at.selectbox(key="data_demo").value == "airline-tweets"
    assert by_label(at.selectbox, "Text column").value == "text"
    assert by_label(at.selectbox, "Author column").value == "name"


def test_unknown_startup_data_is_a_message_and_a_demo_can_still_be_loaded():
    at = start(["--data", "no-such-demo"])
    assert session.DATASET not in at.session_state
    assert any("neither a file nor a demo" in e.value for e in at.error)
    by_label(at.button, "Use this data").click().run()
    assert not at.exception
    assert at.session_state[session.DATASET].name == "airline-tweets"
    assert any("Loaded airline-tweets" in s.value for s in at.success)


def open_address(path: str, argv: list[str]) -> AppTest:
    """The app opened at ``/path`` in a new tab, as a bookmark opens it (the browser sends the page's name)."""
    import streamlit.testing.v1.local_script_runner as runner

    sys.argv = ["app.py", *argv]
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    original = runner.RerunData
    runner.RerunData = lambda **kw: original(**kw, page_name=path)
    try:
        at.run()
    finally:
        runner.RerunData = original
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_pages_address_opens_that_page(monkeypatch):
    """Issue 54: a bookmarked ``/data`` said "Page not found" (Streamlit serves its default page at the root
    only); the root opens Data. Without a dataset, so that no page starts a sweep."""
    from streamlit.commands import navigation

    from dashboard import pages

    not_found: list[str] = []
    monkeypatch.setattr(navigation, "send_page_not_found", lambda ctx: not_found.append("page not found"))
    for path, (title, _) in [("", pages.PAGES["data"]), *pages.PAGES.items()]:
        at = open_address(path, ["--data", "no-such-demo"])
        assert not not_found, f"/{path}"
        assert [t.value for t in at.title] == [title], f"/{path}"


def test_another_dataset_keeps_each_pages_method_where_it_allows_it():
    """Issue 54: Synthesize kept CART across a change of dataset while Protect went back to its default. Every
    page now keeps the steward's method when the new data allows it at its default settings (the Compare page
    its methods), and starts from its default otherwise."""
    at = start()
    chosen = {session.METHOD_KEY: "swap", session.SYNTH_METHOD_KEY: "cart", session.COUNTS_METHOD_KEY: "cart"}
    for key, method in chosen.items():
        at.session_state[key] = method
    at.session_state["compare_methods"] = ["swap", "kanon"]

    def use(demo: str) -> None:
        at.selectbox(key="data_demo").set_value(demo).run()
        by_label(at.button, "Use this data").click().run()
        assert not at.exception and at.session_state[session.DATASET].name == demo

    use("clothing-reviews")
    assert {key: at.session_state[key] for key in chosen} == chosen
    at.session_state[session.SYNTH_METHOD_KEY] = "glm"
    use("nyc-airbnb")  # no sensitive categorical field: neither the swap nor the GLM applies
    assert session.METHOD_KEY not in at.session_state and session.SYNTH_METHOD_KEY not in at.session_state
    assert at.session_state[session.COUNTS_METHOD_KEY] == "cart"
    go(at, "compare")
    assert at.multiselect(key="compare_methods").value == ["kanon"]


GOOD_CSV = "text,user,rating\n" + "".join(
    f"Review number {j} by person {i}: the hotel room was clean and the staff friendly,u{i},{(i + j) % 5 + 1}\n"
    for i in range(8)
    for j in range(3)
)


def test_bad_upload_shows_the_error_in_place_and_keeps_the_dataset():
    at = start()
    at.radio(key="data_source").set_value("Upload a file").run()
    assert not at.exception
    # Latin-1 bytes read as UTF-8: a DataError naming the byte, shown as st.error; the demo stays in use.
    at.file_uploader(key="data_upload").set_value(
        ("reviews.csv", "text,user\ncafé au lait,a\n".encode("latin-1"), "text/csv")
    ).run()
    assert not at.exception
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # as shown: the alert escapes punctuation
    assert any("is not valid UTF-8 text" in e and "type cp1252 in the Text encoding box" in e for e in errors), errors
    assert at.session_state[session.DATASET].name == "airline-tweets"

    # A readable file, but a numeric column chosen as the text: the load fails at "Use this data".
    at.file_uploader(key="data_upload").set_value(("reviews.csv", GOOD_CSV.encode(), "text/csv")).run()
    assert not at.error
    assert by_label(at.selectbox, "Text column").value == "text"
    assert by_label(at.selectbox, "Author column").value == "user"
    by_label(at.selectbox, "Text column").set_value("rating").run()
    by_label(at.button, "Use this data").click().run()
    assert not at.exception
    assert any("holds numbers" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state[session.DATASET].name == "airline-tweets"

    # Put right, the upload loads, with one record of each author held out as the intruder's texts.
    by_label(at.selectbox, "Text column").set_value("text").run()
    by_label(at.button, "Use this data").click().run()
    assert not at.exception and not at.error
    dataset = at.session_state[session.DATASET]
    assert dataset.name == "reviews" and dataset.n_records == 16 and len(dataset.external) == 8
    assert at.session_state[session.ORIGIN].kind == "upload"
    assert {m.label: m.value for m in at.metric}["Records"] == "16"


def test_an_upload_whose_text_column_is_unclear_is_mapped_by_the_steward_and_names_are_dropped():
    """A column named like the text but empty: the page says why it cannot tell the text, still shows the
    mapping, and the reviewers' names start as a direct identifier (never released, sought in the text); the
    steward picks the text and loads."""
    rows = "".join(
        f",u{i % 4},Reviewer Number{i},the coat is warm and the zip is sturdy {i},{1 + i % 5}\n" for i in range(12)
    )
    at = start()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="data_upload").set_value(
        ("coats.csv", ("reviewText,reviewerID,reviewerName,notes,overall\n" + rows).encode(), "text/csv")
    ).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    warning = " ".join(w.value for w in at.warning)
    assert "'reviewText' is named like the text but it is empty" in warning and "choose the text column" in warning
    assert "give a schema" not in warning
    from dashboard import loading

    frame = pd.read_csv(io.StringIO("reviewText,reviewerID,reviewerName,notes,overall\n" + rows))
    schema, _ = loading.default_schema_for(frame, None)
    fields = loading.field_table(frame, schema, {schema.text, "reviewerID"}).set_index("column")
    assert fields.loc["reviewerName", "role"] == "direct identifier"
    assert fields.loc["overall", "role"] == "sensitive" and fields.loc["overall", "note"] == ""  # a rating
    assert schema.text == "notes"  # the first guess: the longest values that are not numbers
    # The steward chooses another text column: the guess comes back with its own reason, the fields stay fields.
    frame["title"] = [f"warm coat number {i}" for i in range(len(frame))]
    chosen = loading.schema_for_text(frame, schema, "title", None)
    fields = loading.field_table(frame, chosen, {"title", "reviewerID"}).set_index("column")
    assert fields.loc["overall", "role"] == "sensitive" and fields.loc["notes", "role"] == "other free text"
    assert "left out of every release" in fields.loc["notes", "note"]
    by_label(at.selectbox, "Text column").set_value("notes").run()
    by_label(at.button, "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    dataset = at.session_state[session.DATASET]
    assert dataset.schema.text == "notes" and dataset.schema.author == "reviewerID"
    assert dataset.schema.direct_identifiers == ("reviewerName",) and "overall" in dataset.frame.columns
    assert dataset.schema.identifiers["reviewerName"] == "drop"  # no bundle carries it
    assert not any("No column surely holds" in w.value for w in at.warning)  # chosen and loaded: settled


def test_an_upload_of_calls_kept_as_lists_of_turns_is_read_as_text_and_says_so():
    """JSON Lines whose documents are lists of speakers' turns (as the 2021 Q3 calls are kept): the page names
    the columns read as text, and the turns become the text of the dataset; the list of participants is a
    direct-identifier column, which the dataset keeps for the methods and no bundle releases."""
    turns = [
        [{"speaker": "Operator", "speech": f"Good morning and welcome to call {i}."}, {"speaker": "CEO", "speech": t}]
        for i, t in enumerate(["Revenue grew in every region this quarter", "Margins held despite costs"] * 3)
    ]
    people = ["Ann Lee--Chief Executive Officer", "Bo Chen--Bank -- Analyst"]
    lines = "".join(
        json.dumps({"ticker": f"T{i % 3}", "remarks": r, "participants": people}) + "\n" for i, r in enumerate(turns)
    )
    at = start()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="data_upload").set_value(("calls.jsonl", lines.encode(), "application/json")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "2 columns held lists or records, read as text: remarks, participants" in caption_starting(
        at, "2 columns held lists"
    )
    by_label(at.button, "Use this data").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    dataset = at.session_state[session.DATASET]
    assert dataset.schema.text == "remarks" and dataset.schema.direct_identifiers == ("participants",)
    assert dataset.schema.identifiers["participants"] == "drop"
    assert (
        dataset.texts.iloc[0]
        == "Operator: Good morning and welcome to call 0.\n\nCEO: Revenue grew in every region this quarter"
    )


def test_export_without_a_choice_points_to_protect():
    at = go(start(), "export")
    assert any("Export writes a pinned candidate" in i.value for i in at.info)


def pin(at: AppTest, method: str, name: str = "") -> AppTest:
    """Pin the release the method's page shows (under ``name``, else the suggested one)."""
    if name:
        at.text_input(key=f"pin_name::{method}").set_value(name)
    at.button(key=f"pin_button::{method}").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def decide(at: AppTest, why: str = "the tests' choice") -> AppTest:
    """Fill the Export page's decision note."""
    by_label(at.text_input, "Decided by").set_value("A. Steward").run()
    by_label(at.text_area, "Why this release").set_value(why).run()
    return at


@pytest.mark.slow
def test_protect_sweeps_then_the_slider_moves_everything_from_the_cache(monkeypatch):
    from dashboard import knob_view
    from dashboard.views.protect import MAX_AUTHOR_CHOICES

    monkeypatch.setattr(knob_view, "_SETTLED_FOR", set())
    settled = counting(monkeypatch, knob_view, "settle_heap")
    at = go(start(), "protect")
    assert settled["settle_heap"] >= 1  # the server's heap is settled once the views are new (`settle_heap`)
    assert not at.error and not at.warning, [e.value for e in [*at.error, *at.warning]]
    # the most prolific authors only: a list of every author is slow to draw at each move
    picker = at.selectbox(key=next(k for k in at.session_state if k.startswith("author_texts::")))
    dataset = at.session_state[session.DATASET]
    prolific = dataset.frame[dataset.schema.author].astype(str).value_counts()
    assert len(prolific) > MAX_AUTHOR_CHOICES  # the demo has more authors than the list holds
    assert picker.options == list(prolific.index[:MAX_AUTHOR_CHOICES]) and picker.value == prolific.index[0]
    assert f"{len(prolific) - MAX_AUTHOR_CHOICES:,} more are not listed" in picker.help
    assert current_knob(at) == "Current knob: level = 1"
    point = next(t for t in view_texts(at, "caption") if t.startswith("Risk "))
    assert re.match(r"Risk \d\.\d{3} · Utility \d\.\d{3}", point)
    cards = view_cards(at)
    assert {"Word (unigram) similarity", "Word-pair (bigram) similarity"} <= set(cards)
    from dashboard.knob_view import worst_attack_id
    from engine.measures.base import metric_info

    worst = worst_attack_id(at.session_state[session.CHOICE].sweep.metrics_at(1.0))
    assert worst is not None and f"Worst attack: {metric_info(worst).card}" in cards
    assert metric_info(worst).label not in cards  # no attack shown twice: the worst attack's card is its card
    rate = cards[("Worst attack: " if worst == "attack_identification_rate" else "") + "Attack identification rate"]
    assert (
        rate["value"]
        == f"{at.session_state[session.CHOICE].sweep.metric_at(1.0, 'attack_identification_rate').value:.3f}"
    )
    assert "vs unprotected" in rate["delta"]  # the unprotected data's risk: 0.8
    assert cards["Word (unigram) similarity"]["delta"] is None  # 1 on the unprotected data by construction
    assert {"frontier", "attack_bars"} <= view_plots(at)
    samples = protected_samples(at)
    assert 1 <= len(samples) <= 10 and "[HANDLE_1]" in samples[0]
    assert at.multiselect(key=next(k for k in at.session_state if k.startswith("targets::"))).value
    sweep = at.session_state[session.CHOICE].sweep

    # The move reruns the knob's fragment only: nothing above it runs, nothing is released, swept or drawn.
    from dashboard import compute
    from engine.figures import text as text_figures

    calls = counting(monkeypatch, compute, "page_sweep", "sweep_with_progress", "make_release", "run_sweep")
    page_calls = counting(monkeypatch, session, "page_dataset")
    drawn = counting(monkeypatch, text_figures, "frontier_figure", "attack_bars_figure")
    dataset = at.session_state[session.DATASET]
    payload = knob_payload(at)[0]
    # Back and Forward are under the knob from the first view, disabled: the first move mounts nothing new
    key = session.knob_key("redact")
    assert at.button(key=f"{key}::back").disabled and at.button(key=f"{key}::forward").disabled
    assert any(c.value.startswith("Looked at 1 of 1 on this page") for c in at.caption)
    views_settled = settled["settle_heap"]
    move_knob(at, key, 3.0)
    assert not at.button(key=f"{key}::back").disabled
    assert calls == dict.fromkeys(calls, 0) and page_calls == {"page_dataset": 0}
    assert settled["settle_heap"] == views_settled  # a move's views are not new: no whole-heap collection
    assert drawn == dict.fromkeys(drawn, 0) and knob_payload(at)[0] == payload  # the views sent before
    assert at.session_state[session.DATASET] is dataset
    assert not at.error and not at.warning
    assert current_knob(at) == "Current knob: level = 3"
    assert next(t for t in view_texts(at, "caption") if t.startswith("Risk ")) != point
    moved = protected_samples(at)
    assert moved[0] != samples[0]
    assert at.session_state[session.CHOICE].sweep is sweep  # read from the cache: no re-sweep
    assert at.session_state[session.CHOICE].knob == 3.0

    # "Choose for me": the trade-off rule picks a knob and "Use this knob" moves the slider there.
    at.run()
    at.radio(key="choose_rule").set_value("tradeoff").run()
    at.number_input(key="choose_slope").set_value(1.0).run()
    suggested = [m.value for m in at.markdown if m.value.startswith("Suggested:")]
    assert suggested, [m.value for m in at.markdown]
    level = int(re.search(r"level = (\d)", suggested[0]).group(1))
    at.button(key="choose_use").click().run()
    assert not at.exception and not at.warning
    assert current_knob(at) == f"Current knob: level = {level}"
    assert at.session_state[session.CHOICE].knob == level

    # Back and Forward under the knob walk the releases looked at on this page, moving the slider, and add
    # nothing to the history.
    from dashboard import pins

    looked = [c.knob for c in at.session_state[pins.PROJECT].history]
    assert looked[-2:] == [3.0, float(level)] or level == 3 and looked[-2:] == [1.0, 3.0]
    state_key = session.knob_key("redact")
    at.button(key=f"{state_key}::back").click().run()
    assert not at.exception
    assert at.session_state[session.CHOICE].knob == looked[-2]
    assert current_knob(at) == f"Current knob: level = {int(looked[-2])}"
    assert [c.knob for c in at.session_state[pins.PROJECT].history] == looked
    at.button(key=f"{state_key}::forward").click().run()
    assert at.session_state[session.CHOICE].knob == looked[-1]
    assert [c.knob for c in at.session_state[pins.PROJECT].history] == looked


@pytest.mark.slow
def test_export_writes_the_bundle(tmp_path):
    at = pin(go(start(), "protect"), "redact", "level one")
    at = go(at, "export")
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="export_pin").value == "level one"
    out = tmp_path / "bundle"
    by_label(at.text_input, "Output folder").set_value(str(out)).run()
    command = at.code[0].value
    assert command.startswith("textsdc release --data airline-tweets --method redact --knob 1 ")
    assert "--with-frontier" in command and str(out) in command
    assert at.button(key="export_run").disabled  # not before the decision note says who and why
    decide(at, "level one hides the handles and keeps the words")
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["knob"]["value"] == 1.0 and manifest["method"]["name"] == "redact"
    assert manifest["replay"] == command
    assert (out / "report.html").exists() and (out / "release.csv").exists()
    files = at.dataframe[-1].value
    assert set(files["file"]) >= {"manifest.json", "report.html", "release.csv"}
    assert files.set_index("file").loc["report.html", "SHA-256"] == manifest["files"]["report.html"]
    assert at.download_button(key="export_zip") is not None
    assert any("Wrote" in s.value for s in at.success)
    # The pseudonym key of the pseudonymized author column: a download of its own, apart from the bundle and its
    # zip, under the warning that it must not travel with the bundle (the CLI's --key-out).
    from dashboard import exporting
    from engine.export.keys import key_check

    assert manifest["pseudonym_key"] is not None
    key_button = at.download_button(key="export_key")
    assert key_button.label == "Download the pseudonym key" and manifest["pseudonym_key"]["check"] in key_button.help
    assert any("must never travel with the bundle" in w.value for w in at.warning)
    key = exporting.bundle_key(at.session_state[session.EXPORTED]["result"])
    assert key is not None and key_check(key) == manifest["pseudonym_key"]["check"]
    assert not any(key in p.read_bytes() for p in out.iterdir())
    with zipfile.ZipFile(io.BytesIO(at.session_state[session.EXPORTED]["zip"])) as zf:
        assert zf.namelist() and not any(key in zf.read(name) for name in zf.namelist())

    # The folder holds a bundle now: a second export replaces it only when the steward ticks the box.
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    at.button(key="export_run").click().run()
    assert any("holds a bundle already" in e.value for e in at.error), [e.value for e in at.error]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == written
    by_label(at.checkbox, "Replace the bundle in this folder").check().run()
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == written  # the same choice, the same bytes

    # The command shown replays the same release from the CLI, byte for byte.
    args = shlex.split(command)[1:]
    replay = tmp_path / "replay"
    args[args.index("--out") + 1] = str(replay)
    assert cli_main(args) == 0
    again = json.loads((replay / "manifest.json").read_text())
    for name in ("release.csv", "release.parquet", "changes.csv"):
        assert again["files"][name] == manifest["files"][name], name
    assert again["metrics"] == manifest["metrics"]
    assert manifest["decision"]["why"] == "level one hides the handles and keeps the words"
    assert manifest["decision"]["by"] == "A. Steward" and manifest["decision"]["alternatives"] == []


def test_an_exported_pins_warnings_are_shown_once(tmp_path):
    from engine.protect.params import GUARD_TYPES

    at = start()
    at.session_state["param::redact::guard_off"] = list(GUARD_TYPES)  # the release guard left out too
    at = go(at, "protect")
    move_knob(at, session.knob_key("redact"), 0.0)  # nothing redacted: the release is not protected
    # Issue 54: Protect says so beside the knob, in the words Export uses (one home: the export checks)
    on_protect = view_texts(at, "warning")
    assert any("not protected" in w for w in on_protect), on_protect
    move_knob(at, session.knob_key("redact"), 4.0)
    assert not any("not protected" in w for w in view_texts(at, "warning"))
    move_knob(at, session.knob_key("redact"), 0.0)
    at = go(pin(at, "redact", "level zero"), "export")
    pinned = [w.value for w in at.warning]
    assert any("not protected" in w for w in pinned), pinned
    assert [display.md_escape(w) for w in on_protect] == pinned
    by_label(at.text_input, "Output folder").set_value(str(tmp_path / "bundle")).run()
    decide(at, "to show the warnings")
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    warned = [w.value for w in at.warning]
    assert len(warned) == len(set(warned)) and set(pinned) <= set(warned), warned


def test_pins_compare_side_by_side_diff_and_export_with_the_others_as_alternatives(tmp_path):
    at = pin(go(start(), "protect"), "redact")
    move_knob(at, session.knob_key("redact"), 2.0)
    at = pin(at, "redact")
    at = go(at, "compare")
    assert not at.exception, [e.value for e in at.exception]
    # Issue 54: one column per pin, so that the table fits the page whatever the number of measures
    side = at.table[0].value
    assert list(side.columns) == ["redact at level = 1", "redact at level = 2"]
    assert {"candidate", "Whole-release identification probability", "warnings"} <= set(side.index)
    table = side.T.rename_axis("pin").reset_index()
    counts = next(d.value for d in at.dataframe if "records differing" in d.value.columns).set_index("column")
    assert counts.loc["text", "records differing"] > 0 and counts.loc["airline", "records differing"] == 0
    assert any("records differ between" in m.value for m in at.markdown)
    # The differing values wrap in a table of their own, the words that differ marked on each side.
    diff = next(h.proto.body for h in at.get("html") if "textsdc-diff" in h.proto.body)
    assert diff.count("<tr>") == min(50, counts.loc["text", "records differing"]) + 1
    assert '<mark class="orig">' in diff and '<mark class="repl">' in diff and "white-space:pre-wrap" in diff
    assert at.download_button(key="pins_diff_download").label == "Download these cells as CSV"
    # The session file saves the pins and their numbers.
    path = tmp_path / "work.textsdc.json"
    at.text_input(key="pins_session_path").set_value(str(path)).run()
    at.button(key="pins_save").click().run()
    from engine.project import Project

    saved = Project.load(path)
    assert [p.candidate.name for p in saved.pins] == list(table["pin"])
    at = go(at, "export")
    at.selectbox(key="export_pin").set_value("redact at level = 2").run()
    out = tmp_path / "chosen"
    by_label(at.text_input, "Output folder").set_value(str(out)).run()
    decide(at, "level 2 removes names too")
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    decision = json.loads((out / "manifest.json").read_text())["decision"]
    assert decision["chosen"] == "redact at level = 2"
    assert [a["name"] for a in decision["alternatives"]] == ["redact at level = 1"]
    assert decision["alternatives"][0]["metrics"] == saved.get("redact at level = 1").metrics


def test_export_offers_to_pin_the_release_last_shown_when_another_is_pinned():
    at = pin(go(start(), "protect"), "redact")
    move_knob(at, session.knob_key("redact"), 3.0)
    at = go(at, "export")
    offered = caption_starting(at, "The release last shown, not pinned:")
    assert "Identifier redaction at level = 3" in offered
    at.button(key="export_pin_last").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="export_pin").options == ["redact at level = 1", "redact at level = 3"]
    assert not any(c.startswith("The release last shown") for c in captions(at))  # pinned now: no longer offered


@pytest.mark.slow
def test_synthesize_sweeps_then_lambda_moves_everything_and_exports(tmp_path, monkeypatch):
    at = start()
    at.session_state["synth_replicates"] = 2
    at.session_state["param::measures::projections"] = 3  # the widgets of the measures' declared settings
    at.session_state["param::measures::topics"] = 4
    go(at, "synthesize")
    assert not at.error and not at.warning, [e.value for e in [*at.error, *at.warning]]
    chosen = at.session_state[session.CHOICE]
    assert chosen.method == "glm" and chosen.params == {"fields": ["airline_sentiment"]}
    sweep = chosen.sweep
    assert sweep.knob.symbol == "λ" and len(sweep.grid) == 12
    assert any("Recommended: **λ\\* = " in i.value for i in at.info), [i.value for i in at.info]
    cards = view_cards(at)
    assert {"Identification probability", "pMSE ratio", "Topic content correlation"} <= set(cards)
    assert_every_page_cards(cards, sweep.metrics_at(chosen.knob))
    assert {
        "synth_complexity",
        "synth_pmse",
        "synth_identification",
        "synth_cells",
        "synth_content",
        "synth_prevalence",
    } <= view_plots(at)
    samples = view_table(at, "airline_sentiment: released")
    assert {
        "airline_sentiment: confidential",
        "airline_sentiment: released",
        "airline_sentiment: P(confidential)",
    } <= set(samples.columns)

    # "Use λ*" moves the slider to the recommendation; moving the slider reads from the cache.
    at.button(key="synth_use_best").click().run()
    key = next(k for k in at.session_state if re.fullmatch(r"synth_knob::glm::\w+", str(k)))
    from engine.frontier import select_by_pmse_ratio

    best = select_by_pmse_ratio(sweep.summary).best
    assert at.session_state[key] == best and at.session_state[session.CHOICE].knob == best
    from dashboard import compute

    calls = counting(monkeypatch, compute, "page_sweep", "make_release", "run_sweep")
    move_knob(at, key, sweep.grid[0])
    assert calls == dict.fromkeys(calls, 0)  # the release shown is the one the sweep kept
    assert not at.error
    after = at.session_state[session.CHOICE]
    assert after.sweep is sweep and after.knob == sweep.grid[0]
    moved = view_table(at, "airline_sentiment: released")
    assert not moved["airline_sentiment: P(confidential)"].equals(samples["airline_sentiment: P(confidential)"])

    # The choice goes to Export, pinned, with the fields and measure settings in the replay command.
    go(pin(at, "glm"), "export")
    decide(at)
    out = tmp_path / "glm"
    by_label(at.text_input, "Output folder").set_value(str(out)).run()
    command = at.code[0].value
    assert "--method glm --fields airline_sentiment --topics 4 --projections 3" in command  # the registry's order
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["method"]["name"] == "glm" and manifest["knob"]["symbol"] == "λ"
    assert manifest["knob"]["value"] == sweep.grid[0]
    assert "identification_probability" in manifest["metrics"]


@pytest.mark.slow
def test_counts_page_sweeps_lambda_and_s_then_exports(tmp_path, monkeypatch):
    at = start(["--data", "nyc-airbnb"])
    at.session_state["counts_replicates"] = 2
    at.session_state["param::count-bayes::draws"] = 100
    go(at, "counts")
    assert not at.error, [e.value for e in at.error]
    chosen = at.session_state[session.CHOICE]
    assert chosen.method == "count-bayes"
    assert chosen.params == {
        "count_field": "availability_365",
        "continuous_field": "price",
        "predictors": ["neighbourhood_group", "room_type", "number_of_reviews"],
        "upper": 365,  # the demo's schema gives the public bound
        "draws": 100,
    }
    sweep = chosen.sweep
    assert sweep.knob.symbol == "λ" and chosen.knob == 1.0 and len(sweep.grid) == 8
    cards = view_cards(at)
    from engine.measures.attacks import worst_attack
    from engine.measures.base import metric_info

    worst = worst_attack(sweep.metrics_at(chosen.knob))  # of the attacks measured, furthest beyond its baseline
    assert worst is not None
    worst_label = f"Worst attack: {metric_info(worst.id).card}"
    assert set(cards) == {
        worst_label,
        "Attribute risk AR (±5, ±5%)",
        "Expected matches EMR",
        "False matches FMR",
        "Propensity utility Up",
        "Interval overlap",
        "Singling out",  # the risks every page shows (Measure.on_every_page), no page listing them
        "Linkability",
        "Inference",
    } - {metric_info(worst.id).card}, cards  # the worst attack is shown once, on its card
    assert_every_page_cards(cards, sweep.metrics_at(chosen.knob))
    assert "chance" in cards[worst_label]["note"]
    assert cards["False matches FMR"]["note"] == "Risk · higher is better"  # which direction is better, said
    assert cards["Expected matches EMR"]["note"] == "Risk · lower is better"
    assert all("e+" not in c["value"] for c in cards.values())  # large values with separators, never exponents
    charts = view_plots(at)
    assert {
        "counts_hist_availability_365",
        "counts_density_price",
        "counts_overlap",
        "counts_ar",
        "counts_curves",
        "counts_complexity",
    } <= charts, charts
    samples = view_table(at, "price: released")
    assert {"availability_365: confidential", "availability_365: released", "price: confidential"} <= set(
        samples.columns
    )

    # Moving λ and S reads the cached sweep.
    key = next(k for k in at.session_state if re.fullmatch(r"counts_knob::count-bayes::\w+", str(k)))
    from dashboard import compute

    calls = counting(monkeypatch, compute, "page_sweep", "make_release", "run_sweep")
    at.select_slider(key="counts_s").set_value(0.1)
    fragment_run(at, "_at_knob")
    move_knob(at, key, sweep.grid[-1])
    assert calls == dict.fromkeys(calls, 0)  # three synthetic datasets shown, each kept by the sweep
    assert not at.error
    after = at.session_state[session.CHOICE]
    assert after.sweep is sweep and after.knob == sweep.grid[-1]
    assert current_knob(at).endswith(sweep.knob.format(sweep.grid[-1]))
    assert any("Identification risk at S = 0.10" in t for t in view_texts(at))

    # Export writes the release, pinned; the replay command carries the method's settings.
    go(pin(at, "count-bayes"), "export")
    decide(at)
    out = tmp_path / "counts"
    by_label(at.text_input, "Output folder").set_value(str(out)).run()
    command = at.code[0].value
    assert "--method count-bayes --count-field availability_365 --continuous-field price" in command
    assert "--draws 100" in command
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["method"]["name"] == "count-bayes" and manifest["knob"]["value"] == sweep.grid[-1]
    assert {"attribute_risk_r5_p5", "emr", "fmr", "ci_overlap"} <= set(manifest["metrics"])
    report = (out / "report.html").read_text()
    assert "Identification risk under intruder uncertainty" in report and "MCMC convergence" in report

    # CART, Guo & Hu's comparator, on the same page: the knob becomes α.
    go(at, "counts")
    at.radio(key="counts_method").set_value("cart").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    cart = at.session_state[session.CHOICE]
    assert cart.method == "cart" and cart.sweep.knob.symbol == "α"
    assert cart.params == {
        "fields": ["availability_365", "price"],
        "predictors": ["neighbourhood_group", "room_type", "number_of_reviews"],
    }
    assert {"counts_hist_availability_365", "counts_overlap", "counts_curves"} <= view_plots(at)


def test_a_restarted_dashboard_finds_the_persisted_sweep(monkeypatch):
    """A sweep is kept on disk: once the process's caches are gone (a restart), the same settings read it back
    instead of sweeping again; other settings sweep anew."""
    import streamlit as st

    from dashboard import compute
    from tests.contract_data import contract_dataset

    calls = []
    original = compute.run_sweep
    monkeypatch.setattr(compute, "run_sweep", lambda *a, **k: calls.append(1) or original(*a, **k))
    dataset = contract_dataset()
    first = compute.get_sweep(dataset, "md", 2, 987_654)
    assert len(calls) == 1
    st.cache_resource.clear()  # what a restart loses
    again = compute.get_sweep(dataset, "md", 2, 987_654)
    assert len(calls) == 1
    assert again.summary.equals(first.summary) and again is not first
    compute.get_sweep(dataset, "md", 2, 987_655)
    assert len(calls) == 2


def test_a_method_whose_fit_leaves_cores_idle_has_its_measures_prepared_beside_it(monkeypatch):
    """With `Protector.fits_in_threads` the measures every method shares are prepared in a thread while the
    method fits (the fit below cannot end before they have begun), and the sweep is the engine's; without it
    they are prepared after the fit, in the page's thread."""
    import threading

    import streamlit as st

    from dashboard import compute
    from engine.protect import get_protector, method_class
    from engine.sweep import run_sweep
    from tests.contract_data import contract_dataset

    began = threading.Event()
    built: list[str] = []
    make_evaluator, fit_cached = compute.Evaluator, compute.fit_cached

    def evaluator(*a, **k):
        built.append(threading.current_thread().name)
        began.set()
        return make_evaluator(*a, **k)

    def fit(*a, **k):
        if method_class("md").fits_in_threads:
            assert began.wait(60), "the measures were not begun while the method fitted"
        return fit_cached(*a, **k)

    monkeypatch.setattr(compute, "Evaluator", evaluator)
    monkeypatch.setattr(compute, "fit_cached", fit)
    monkeypatch.setattr(method_class("md"), "fits_in_threads", True)
    dataset = contract_dataset()
    st.cache_resource.clear()
    # seeds no other test sweeps with: a sweep kept on disk would be read back, and another test's found made
    sweep = compute.get_sweep(dataset, "md", 1, 737_371)
    assert built == ["textsdc-measures-beside-fit"]
    # the engine's sweep in one process: the same up to rounding (a changed text's writing-style distances are
    # computed in batches of the texts new to a process, which differ with the processes)
    pd.testing.assert_frame_equal(
        sweep.summary, run_sweep(dataset, get_protector("md"), None, 1, 737_371).summary, rtol=1e-9
    )
    monkeypatch.setattr(method_class("md"), "fits_in_threads", False)
    st.cache_resource.clear()
    compute.get_sweep(dataset, "md", 1, 737_372)
    assert built[1:] == [threading.current_thread().name]


def test_prepared_views_are_built_once_per_sweep_and_key():
    from dashboard import compute, prepared
    from tests.contract_data import contract_dataset

    sweep = compute.get_sweep(contract_dataset(), "md", 1, 31)
    builds: list[str] = []
    assert prepared.prepared(sweep, ("x", 1), lambda: builds.append("a") or "A") == "A"
    assert prepared.prepared(sweep, ("x", 1), lambda: builds.append("b") or "B") == "A"
    assert prepared.prepared(sweep, ("x", 2), lambda: builds.append("c") or "C") == "C"
    assert builds == ["a", "c"]


def test_the_progress_bar_shows_each_new_step_at_once_and_thins_out_the_rest():
    from dashboard.caching import progress_reporter

    shown: list[str] = []

    class Bar:
        def progress(self, fraction: float, text: str) -> Bar:
            shown.append(text)
            return self

    update = progress_reporter(Bar())
    update(0, 1, "training the sentiment classifier")
    update(1, 1, "training the sentiment classifier")
    update(0, 5, "protecting and measuring")  # a new step, a moment later: shown, not thinned out
    update(1, 5, "protecting and measuring")  # the same step within 0.2 s: thinned out
    update(5, 5, "protecting and measuring")  # the end of a step: always shown
    assert shown == [
        "Training the sentiment classifier…",
        "Training the sentiment classifier…",
        "Protecting and measuring: 0 of 5",
        "Protecting and measuring: 5 of 5",
    ]


@pytest.mark.slow
def test_compare_puts_two_methods_on_one_frontier_and_lists_the_pareto_set():
    at = go(start(), "compare")
    assert not at.get("plotly_chart")
    at.multiselect(key="compare_methods").set_value(["redact", "md"]).run()
    assert not at.get("plotly_chart")  # nothing runs before the steward asks
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.get("plotly_chart")
    assert by_label(at.selectbox, "Risk").value == "release_identification_probability"  # the whole release
    table = at.dataframe[0].value
    assert set(table["Method"]) == {"Identifier redaction", "Multinomial–Dirichlet text synthesis (ε-DP)"}
    assert (table["On the frontier"] == "yes").any()
    # Level 0 redacts nothing, but the release guard takes out the tweets' handles, URLs and phone numbers: that
    # release protects something, and is not labelled as protecting nothing.
    assert table.loc[table["Knob"] == "level = 0", "On the frontier"].item() != "protects nothing"
    # Redaction depends on finding identifiers: each level says what share of them its detector finds on gold
    assert "Detection found" not in table.columns
    found = at.dataframe[1].value
    assert set(found["Method"]) == {"Identifier redaction"}  # md's protection finds nothing
    assert found.loc[found["Knob"] == "level = 0", "Detection found"].item() == "nothing replaced"
    top = found.loc[found["Knob"] == "level = 4", "Detection found"].item()
    assert re.fullmatch(r"direct identifiers \d+% \[\d+–\d+%\]; places \d+% \[\d+–\d+%\]", top)
    assert any("Detection found: " in c.value and "shipped gold set" in c.value for c in at.caption)


def test_a_session_of_an_uploaded_file_reopens_when_the_file_is_uploaded_again(tmp_path):
    at = start()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="data_upload").set_value(("reviews.csv", GOOD_CSV.encode(), "text/csv")).run()
    by_label(at.button, "Use this data").click().run()
    dataset = at.session_state[session.DATASET]
    at = go(at, "compare")
    path = tmp_path / "uploaded.textsdc.json"
    at.text_input(key="pins_session_path").set_value(str(path)).run()
    at.button(key="pins_save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]

    # A fresh app: the session names reviews.csv, deleted after the upload; the page asks for it again.
    at = go(start(), "compare")
    at.text_input(key="pins_open_path").set_value(str(path)).run()
    at.button(key="pins_open").click().run()
    assert not at.exception
    assert any("reviews.csv" in w.value and "Upload the same file again" in w.value for w in at.warning)
    assert at.session_state[session.DATASET].name == "airline-tweets"  # nothing changed yet
    # Another file is refused, naming what differs; the data in use stays.
    other = GOOD_CSV.replace("clean", "dirty")
    at.file_uploader(key="pins_session_upload").set_value([("reviews.csv", other.encode(), "text/csv")]).run()
    at.button(key="pins_session_use").click().run()
    assert any("not the data this session was made on" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state[session.DATASET].name == "airline-tweets"
    # The same file: the session and its data are in use again.
    at.file_uploader(key="pins_session_upload").set_value([("reviews.csv", GOOD_CSV.encode(), "text/csv")]).run()
    at.button(key="pins_session_use").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[session.DATASET].fingerprint == dataset.fingerprint
    assert at.session_state[session.ORIGIN].kind == "upload"


def test_use_this_data_keeps_the_release_treatments_of_the_schema_the_data_came_with():
    """The Data page rebuilds the schema from its column roles; the [release] section it does not show stays
    (no shipped demo has one, so the demo's schema is given one here)."""
    from dataclasses import replace

    from dashboard import loading
    from dashboard.views import data as data_page

    schema = replace(loading.demo_schema("airline-tweets"), author_release="drop", document_release="keep")
    table = loading.load_demo("airline-tweets").frame
    source = data_page.Source(id="demo:airline-tweets", table=table, schema=schema, demo="airline-tweets")
    fields = loading.field_table(table, schema, {schema.text, schema.author})
    dataset, origin = data_page._load(source, schema.text, schema.author, None, fields, schema.external)
    assert (dataset.schema.author_release, dataset.schema.document_release) == ("drop", "keep")
    assert origin.custom_schema  # not the demo as shipped: the export writes this schema for its replay


def test_no_page_module_holds_a_bare_expression_streamlit_would_write():
    """A page (dashboard/app.py, dashboard/views/*.py) runs as a Streamlit script, where "magic" writes every
    bare expression to the page: an attribute's docstring became a developer's note above every Protect view.
    `textsdc dashboard` turns magic off; a page module keeps none either way (calls are not written)."""
    import ast

    root = Path(__file__).resolve().parent.parent / "dashboard"
    found = []
    for path in [root / "app.py", *sorted((root / "views").glob("*.py"))]:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node in body[1:]:  # the module's docstring is not written
            if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await)):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found


def _area_script() -> None:
    import streamlit as st

    from dashboard import session

    with session.area("views", fresh=st.session_state.get("fresh", False)):
        st.markdown(st.session_state.get("text", "first"))


def test_an_area_moves_to_its_other_place_when_fresh_and_stays_otherwise(monkeypatch):
    """What the last run drew goes at once only if the area moves: Streamlit's browser keeps a container's
    children when a container takes its place, so a fresh area must be drawn in the place left empty."""
    # AppTest runs the function's script as __main__ and leaves it there; a process spawned later (the Dask
    # test's workers) would run that script again, so __main__ is put back afterwards.
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    at = AppTest.from_function(_area_script)
    at.run()

    def place() -> int:
        holding = [i for i, child in enumerate(at.main.children.values()) if isinstance(child, Block)]
        assert len(at.main.children) == 2 and len(holding) == 1, at.main.children
        return holding[0]

    start_place = place()
    at.session_state["text"] = "redrawn"
    at.run()
    assert place() == start_place and at.markdown[0].value == "redrawn"
    at.session_state["fresh"] = True
    at.session_state["text"] = "another method"
    at.run()
    assert place() == 1 - start_place and at.markdown[0].value == "another method"
    at.run()  # fresh again: back to the first place
    assert place() == start_place


def test_the_samples_promise_colours_only_where_the_release_marks_changes():
    """Issue 54: a text synthesizer's samples (drawn anew, no changed spans) are not promised red and green; a
    redaction's are, and carry the marks."""
    import numpy as np

    from dashboard.views import protect
    from engine.protect import METHODS, get_protector
    from tests.contract_data import contract_dataset

    dataset = contract_dataset()
    records = list(range(10))

    def caption_and_html(method: str, knob: float) -> tuple[str, str]:
        release = get_protector(method).fit(dataset).release(knob, np.random.default_rng(0))
        out = protect._sample_blocks(dataset, release, METHODS[method].knob, records)
        caption = next(b["text"] for b in out if b["t"] == "text" and "in the sample changed" in b["text"])
        return caption, "".join(b["html"] for b in out if b["t"] == "html")

    caption, shown = caption_and_html("md", 1.0)
    assert "generated anew" in caption and "Red" not in caption and "green" not in caption
    assert "<mark" not in shown and shown.count('class="textsdc-sample"') == 10
    caption, shown = caption_and_html("redact", 4.0)
    assert "Red: what was removed; green: what replaced it." in caption and '<mark class="orig"' in shown


@pytest.mark.slow
def test_protect_shows_what_redaction_finds_of_the_gold_on_a_card_at_its_level():
    from engine.protect.redact import GOLD_KINDS, gold_found

    at = go(start(), "protect")
    assert current_knob(at) == "Current knob: level = 1"
    found = gold_found({}, True)[1][next(iter(GOLD_KINDS))]  # the default settings' detectors at level 1
    card = view_cards(at)["Direct identifiers found"]
    assert card["value"] == f"{found.share:.0%}" and f"{found.found:,} of {found.total:,} on gold" in card["note"]
    lo, hi = found.interval()
    assert f"95% interval {lo:.0%}–{hi:.0%}" in card["note"]
    assert "redaction at level 1 finds an estimated" in card["help"] and "no gold for URLs" in card["help"]
    assert "What the detector finds" in view_texts(at, "heading")


def test_every_csv_the_dashboard_offers_is_formula_escaped():
    # a review table or a diff holds released and confidential texts: one that begins with "=" must not run as a
    # formula in the steward's spreadsheet, so the dashboard writes CSV only through engine.export.safe_csv
    unsafe = [
        f"{path.relative_to(APP.parents[1])}:{n}"
        for path in sorted(APP.parent.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ".to_csv(" in line
    ]
    assert unsafe == []


@pytest.mark.slow
def test_export_shows_the_release_ledger_and_needs_a_reason_to_export_over_its_findings(tmp_path):
    from engine.ledger.store import read_ledger

    at = pin(go(start(), "protect"), "redact")
    move_knob(at, session.knob_key("redact"), 2.0)
    at = go(pin(at, "redact"), "export")
    at.selectbox(key="export_pin").set_value("redact at level = 2").run()
    assert "The release ledger holds no release of these records yet." in [m.value for m in at.markdown]
    by_label(at.text_input, "Output folder").set_value(str(tmp_path / "two")).run()
    decide(at, "level 2 first")
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(c.value.startswith("Release ledger: 1 release of these records") for c in at.caption)

    at.selectbox(key="export_pin").set_value("redact at level = 1").run()
    shown = [m.value for m in at.markdown]
    assert any(m.startswith("The release ledger holds 1 release of these records: the bundle two") for m in shown)
    assert any(m.startswith("This export adds redact at level = 1 on") for m in shown), shown
    found = [w.value for w in at.warning if w.value.startswith("The release ledger finds")]
    assert found and "which protects less than 2 in ledger release 1 of the same records" in found[0]
    by_label(at.text_input, "Output folder").set_value(str(tmp_path / "one")).run()
    decide(at, "level 1 for the analysts")
    assert at.button(key="export_run").disabled  # not without a reason and the tick
    by_label(at.text_area, "Reason to export over the ledger's findings").set_value(
        "the analysts hold no release 1"
    ).run()
    assert at.button(key="export_run").disabled
    by_label(at.checkbox, "Export over the ledger's findings").check().run()
    assert not at.button(key="export_run").disabled
    at.button(key="export_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    entries = read_ledger().entries
    assert [e.bundle for e in entries] == ["two", "one"] and entries[1].override == "the analysts hold no release 1"
    assert json.loads((tmp_path / "one" / "manifest.json").read_text())["ledger"]["releases"] == 2
