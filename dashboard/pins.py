"""Pinned candidates, the history of candidates looked at, and the session file, in the dashboard: one
`engine.project.Project` per browser tab, for the dataset in use. Pins are measured from the page's sweep
(the numbers the page showed); the session file reopens them, and "Check the numbers" measures them again."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import caching, compute, display, exporting, session
from dashboard.loading import UPLOAD_TYPES, Origin, load_source, load_upload
from engine.candidates import Candidate, diff_releases, measure_candidate, metrics_table
from engine.data.dataset import Dataset
from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.export.registry import release_warnings
from engine.measures.settings import MeasureSettings
from engine.project import Pin, Project, differences
from engine.protect import method_class
from engine.sweep import metrics_with_intervals

PROJECT = "pins_project"
AWAITING_DATA = "pins_session_awaiting_data"
HISTORY_AT = "pins_history_at"
DIFF_SHOWN = 50


def project(dataset: Dataset) -> Project:
    """The session of the dataset in use (a new one when the dataset changed)."""
    p = st.session_state.get(PROJECT)
    if p is None or p.fingerprint != dataset.fingerprint:
        origin = session.current_origin()
        schema = exporting.schema_file_name(dataset, origin)
        p = Project(
            data=origin.data if origin is not None else dataset.name,
            fingerprint=dataset.fingerprint,
            schema=schema,
            encoding=origin.encoding if origin is not None and origin.encoding not in (None, "", "utf-8") else None,
            delimiter=origin.delimiter if origin is not None else None,
            bad_rows=origin.bad_rows if origin is not None else "error",
            schema_toml=dataset.schema.to_toml() if schema is not None else None,
        )
        st.session_state[PROJECT] = p
    return p


def candidate_of(chosen: session.Chosen, name: str = "") -> Candidate:
    """The candidate a page's choice names (its name by default "method at knob")."""
    knob = method_class(chosen.method).knob
    options = (chosen.options or MeasureSettings()).values()
    return Candidate(
        name or f"{chosen.method} at {display.release_setting_text(chosen.method, chosen.params, knob, chosen.knob)}",
        chosen.method,
        float(chosen.knob),
        seed=int(chosen.seed),
        replicates=int(chosen.replicates),
        params=dict(chosen.params),
        options={k: v for k, v in options.items() if v is not None},
    )


def pin(dataset: Dataset, candidate: Candidate) -> Pin:
    """Pin ``candidate`` with the numbers of its method's sweep at its knob value (swept now if needed)."""
    options = candidate.measure_options()
    sweep = compute.get_sweep(
        dataset, candidate.method, candidate.replicates, candidate.seed, params=dict(candidate.params), options=options
    )
    value = compute.nearest_grid_value(sweep.grid, candidate.knob)
    metrics = metrics_with_intervals(sweep, value)
    release = compute.get_release(
        dataset, candidate.method, value, candidate.seed, sweep.replicates, dict(candidate.params)
    )
    new = Pin(candidate, metrics_table(metrics), release_warnings(dataset, release, metrics))
    project(dataset).add(new)
    return new


def pin_control(dataset: Dataset, chosen: session.Chosen) -> None:
    """Under a page's knob: pin the release it shows, by a name the steward gives."""
    suggested = candidate_of(chosen).name
    c_name, c_button = st.columns([3, 1], vertical_alignment="bottom")
    name = c_name.text_input(
        "Pin as",
        key=f"pin_name::{chosen.method}",
        placeholder=suggested,
        help="Keep this release aside as a candidate: the Compare page lists the pins side by side and diffs "
        "them, the Export page exports one with your decision note.",
    )
    if c_button.button("Pin this candidate", key=f"pin_button::{chosen.method}", icon=":material/push_pin:"):
        done = session.guarded(lambda: pin(dataset, candidate_of(chosen, name.strip() or suggested)))
        if done is not None:
            st.toast(f"Pinned '{done.candidate.name}' ({len(project(dataset).pins)} pinned)")


def _cursor_key(state_key: str) -> str:
    return f"{state_key}::history_at"


def look_at(dataset: Dataset, chosen: session.Chosen, state_key: str) -> None:
    """Record the release a page shows in the history (not twice in a row), unless the page's own Back or
    Forward brought it back; the page's place in the history becomes the latest entry."""
    if st.session_state.pop(f"{state_key}::navigated", False):
        return
    p = project(dataset)
    p.look_at(candidate_of(chosen))
    st.session_state[_cursor_key(state_key)] = len(p.history) - 1


def _step(state_key: str, to: int, knob: float) -> None:
    """Move a page's slider to history entry ``to`` (a button's callback: runs before the knob redraws)."""
    st.session_state[_cursor_key(state_key)] = to
    st.session_state[state_key] = knob
    st.session_state[f"{state_key}::navigated"] = True


def history_steps(dataset: Dataset, chosen: session.Chosen, state_key: str) -> None:
    """Back and Forward under a page's knob: its slider walks the releases looked at on this page with the same
    method, parameters, seed and measures (the Compare page's history lists every page's). Shown from the first
    view on, disabled while there is nowhere to go: a row that appeared at the first move moved what is below
    the knob and made that move the slowest of the first ten (new elements mounted in the browser)."""
    p = project(dataset)
    here = candidate_of(chosen)
    same = [i for i, c in enumerate(p.history) if c.same_setup(here)]
    if not same:
        return
    at = st.session_state.get(_cursor_key(state_key))
    if at not in same:
        at = same[-1]
    back = [i for i in same if i < at]
    forward = [i for i in same if i > at]
    knob = method_class(chosen.method).knob
    c_back, c_where, c_forward = st.columns([1, 4, 1], vertical_alignment="center")
    if back:
        c_back.button(
            "← Back", key=f"{state_key}::back", on_click=_step, args=(state_key, back[-1], p.history[back[-1]].knob)
        )
    else:
        c_back.button("← Back", key=f"{state_key}::back", disabled=True)
    if forward:
        c_forward.button(
            "Forward →",
            key=f"{state_key}::forward",
            on_click=_step,
            args=(state_key, forward[0], p.history[forward[0]].knob),
        )
    else:
        c_forward.button("Forward →", key=f"{state_key}::forward", disabled=True)
    c_where.caption(
        f"Looked at {same.index(at) + 1} of {len(same)} on this page: {knob.symbol} = {knob.format(p.history[at].knob)}"
    )


def panel(dataset: Dataset) -> None:
    """The Compare page's candidates: pins side by side, unpinning, a diff of two, history, session file."""
    p = project(dataset)
    st.header("Pinned candidates")
    if not p.pins:
        st.info(
            "No candidate is pinned yet. On a method page, move the knob to a release worth keeping and press "
            "“Pin this candidate” under it; pins from several methods are compared here."
        )
    else:
        # One column per pin and one row per setting or measure: it fits the page's width however many measures
        # were taken, and its long values (the settings, the warnings) wrap instead of being cut.
        st.table(side_by_side(p.table()))
        st.caption(
            "Each measure with its 95% interval over the replicates, where they differ; the unprotected data's "
            "values and what each measure means are in the Export page's report."
        )
        c_which, c_unpin = st.columns([3, 1], vertical_alignment="bottom")
        names = [q.candidate.name for q in p.pins]
        gone = c_which.selectbox("Unpin which", names, key="pins_unpin_which")
        if c_unpin.button("Unpin", key="pins_unpin"):
            p.unpin(gone)
            st.rerun()
    if len(p.pins) >= 2:
        _diff(dataset, p)
    _history(dataset, p)
    _session_file(dataset, p)


def side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """`Project.table` turned: one column per pin (named by the pin), one row per setting or measure."""
    return table.set_index("pin").T.rename_axis(None, axis=1)


def _diff(dataset: Dataset, p: Project) -> None:
    st.subheader("What differs between two pins")
    names = [q.candidate.name for q in p.pins]
    c_a, c_b = st.columns(2)
    a = c_a.selectbox("First", names, index=0, key="pins_diff_a")
    b = c_b.selectbox("Second", names, index=1, key="pins_diff_b")
    if a == b:
        st.caption("Choose two different pins.")
        return
    releases = []
    for name in (a, b):
        c = p.get(name).candidate
        release = session.guarded(
            functools.partial(compute.get_release, dataset, c.method, c.knob, c.seed, c.replicates, dict(c.params))
        )
        if release is None:
            return
        releases.append(release)
    diff = diff_releases(releases[0], releases[1], text_column=dataset.schema.text, names=(a, b), limit=DIFF_SHOWN)
    st.markdown(
        f"**{diff.differing_records:,}** of {diff.n_records:,} records differ between "
        f"*{display.md_escape(a)}* and *{display.md_escape(b)}*."
    )
    st.dataframe(diff.counts, hide_index=True, key="pins_diff_counts")
    if len(diff.records):
        st.caption(
            f"The first {len(diff.records):,} differing values, as each release shows them: red, words of the first "
            "that the second does not have there; green, those the second has instead."
        )
        st.html(display.diff_html(diff.records, (a, b)))
        st.download_button(
            "Download these cells as CSV",
            diff.csv(),
            file_name=f"{dataset.name}.diff.csv",
            mime="text/csv",
            on_click="ignore",
            key="pins_diff_download",
            help="Texts that begin like a spreadsheet formula are written with an apostrophe in front.",
        )


def _history(dataset: Dataset, p: Project) -> None:
    st.subheader("History")
    if not p.history:
        st.caption("The releases you look at on the method pages are listed here.")
        return
    at = min(st.session_state.get(HISTORY_AT, len(p.history) - 1), len(p.history) - 1)
    c_back, c_where, c_forward = st.columns([1, 4, 1], vertical_alignment="center")
    if c_back.button("← Back", key="pins_back", disabled=at == 0):
        at -= 1
    if c_forward.button("Forward →", key="pins_forward", disabled=at >= len(p.history) - 1):
        at += 1
    st.session_state[HISTORY_AT] = at
    shown = p.history[at]
    c_where.markdown(f"{at + 1} of {len(p.history)}: {display.md_escape(shown.describe())}")
    if st.button("Pin this one", key="pins_history_pin"):
        done = session.guarded(lambda: pin(dataset, shown))
        if done is not None:
            st.toast(f"Pinned '{done.candidate.name}'")
            st.rerun()


def _session_file(dataset: Dataset, p: Project) -> None:
    st.subheader("Session file")
    st.caption(
        "Saves the data's name and fingerprint, the pins with their numbers and the history; no confidential "
        "value. `textsdc session FILE --check` measures the pins again from the command line."
    )
    c_path, c_save = st.columns([3, 1], vertical_alignment="bottom")
    path = c_path.text_input("File", value=f"./{dataset.name}.textsdc.json", key="pins_session_path")
    if c_save.button("Save", key="pins_save"):
        written = session.guarded(lambda: p.save(path))
        if written is not None:
            st.success(f"Saved {display.counted(len(p.pins), 'pin')} to {display.md_escape(written.resolve())}")
    c_open, c_open_button = st.columns([3, 1], vertical_alignment="bottom")
    other = c_open.text_input("Open a session file", key="pins_open_path")
    if c_open_button.button("Open", key="pins_open") and other.strip():
        opened = session.guarded(lambda: open_session(other.strip()))
        if opened is not None and opened.data_found():
            st.rerun()
    _upload_for_session()
    if p.pins and st.button("Check the numbers", key="pins_check", help="Measure every pin again and compare"):
        found = []
        area = st.empty()
        for q in p.pins:
            measured = session.guarded(
                functools.partial(measure_candidate, dataset, q.candidate, caching.progress_reporter(area))
            )
            if measured is None:
                return
            found += [f"{q.candidate.name}: {d}" for d in differences(q.metrics, metrics_table(measured.metrics))]
        area.empty()
        if found:
            st.error("Numbers that differ:\n\n" + "\n".join(f"- {display.md_escape(f)}" for f in found))
        else:
            st.success(f"Every pin's numbers are reproduced ({display.counted(len(p.pins), 'pin')}).")


def open_session(path: str) -> Project:
    """Open a session file: its data becomes the dataset in use and its pins and history this tab's. When its
    data file is not found from here (an upload, deleted after loading as every upload is), the session waits
    for the file to be uploaded again (`_upload_for_session`)."""
    opened = Project.load(path)
    if not opened.data_found():
        st.session_state[AWAITING_DATA] = opened
        return opened
    if opened.schema is None and opened.schema_toml is None:
        dataset, origin = load_source(opened.data, opened.encoding, opened.delimiter, opened.bad_rows)
        opened.check_dataset(dataset.fingerprint)
    else:
        dataset = opened.load_data()
        origin = Origin("file", opened.data, opened.encoding, True, opened.delimiter, opened.bad_rows)
    _use(opened, dataset, origin)
    return opened


def _use(opened: Project, dataset: Dataset, origin: Origin) -> None:
    session.use_dataset(dataset, origin)
    st.session_state[PROJECT] = opened
    st.session_state.pop(HISTORY_AT, None)
    st.session_state.pop(AWAITING_DATA, None)


def _upload_for_session() -> None:
    """A session whose data file is not found from here: the steward uploads it again; it is read with the
    session's own schema and accepted only when it is the data the session was made on (its fingerprint)."""
    waiting: Project | None = st.session_state.get(AWAITING_DATA)
    if waiting is None:
        return
    name = Path(waiting.data).name
    schema = waiting.data_schema()
    external = schema.external.file if isinstance(schema, Schema) and schema.external is not None else None
    st.warning(
        f"This session's data, {display.md_escape(name)}, is not found from here (an uploaded file is deleted "
        "once it is read). Upload the same file again"
        + (f", with its external file {display.md_escape(external)}" if external else "")
        + "; it is accepted only if it is the data the session was made on."
    )
    files = st.file_uploader(
        "The session's data", accept_multiple_files=True, key="pins_session_upload", type=list(UPLOAD_TYPES)
    )
    if not files or not st.button("Use it for the session", key="pins_session_use"):
        return

    def reopen() -> Project:
        if not isinstance(schema, Schema):
            raise ConfigError(
                "this session names no schema to read an uploaded file with; open its data on the Data page"
            )
        by_name = {Path(f.name).name: f.getvalue() for f in files}
        if name not in by_name:
            raise ConfigError(f"the session's data is named {name}; the files given: {', '.join(sorted(by_name))}")
        ext = (external, by_name[external]) if external and external in by_name else None
        if external and ext is None:
            raise ConfigError(f"the session's data has an external file, {external}: upload it with {name}")
        dataset = load_upload(name, by_name[name], schema, waiting.encoding, ext, waiting.delimiter, waiting.bad_rows)
        waiting.check_dataset(dataset.fingerprint)
        _use(waiting, dataset, Origin("upload", name, waiting.encoding, True, waiting.delimiter, waiting.bad_rows))
        return waiting

    if session.guarded(reopen) is not None:
        st.rerun()
