"""Session state of one steward's browser tab: the dataset in use and where it came from, the choice handed
from a page to Export, widget keys, and errors shown in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import display, knob_view, pages
from dashboard.loading import Origin, load_source
from engine.compare import applicable_methods
from engine.data.dataset import Dataset
from engine.data.demos import is_demo
from engine.errors import TextsdcError, os_error_message
from engine.measures.evaluate import MeasureSettings
from engine.results import SweepResult

T = TypeVar("T")


DEFAULT_SOURCE = "airline-tweets"


DEFAULT_METHOD = "redact"


DEFAULT_RISK = "attack_identification_rate"


DEFAULT_UTILITY = "unigram_cosine"


DATASET = "dataset"


ORIGIN = "dataset_origin"


STARTUP_ERROR = "startup_error"


STARTUP_DONE = "startup_done"


STARTUP_FILE = "startup_file"
"""The data file given to `textsdc dashboard --data` and how it is read (encoding, delimiter, bad rows), offered
on the Data page to map its columns again (also when it could not be opened as it is)."""


CHOICE = "choice"


EXPORTED = "exported"


METHOD_KEY = "protect_method"


SYNTH_METHOD_KEY = "synth_method"


COUNTS_METHOD_KEY = "counts_method"


METHOD_KEYS = (METHOD_KEY, SYNTH_METHOD_KEY, COUNTS_METHOD_KEY)
"""The method the steward chose on each page that sweeps one (Protect, Synthesize, Counts)."""


RISK_KEY = "protect_risk"


UTILITY_KEY = "protect_utility"


REPLICATES_KEY = "protect_replicates"


SEED_KEY = "protect_seed"


BACKGROUND_KEY = "background_corpus"
"""The path of the background corpus the steward declared on the Data page (absent: none)."""


def background() -> str | None:
    """The background corpus the steward declared on the Data page, as the measure setting ``background``."""
    return st.session_state.get(BACKGROUND_KEY)


def knob_key(method: str) -> str:
    """The session-state key of the knob slider of ``method``."""
    return f"knob::{method}"


def area(name: str, fresh: bool) -> DeltaGenerator:
    """A container for a part of a page that a long computation may redraw. Streamlit redraws a container in
    place: what the last run drew in it stays, greyed, until this run draws over it or ends (a new container of
    the same kind at the same place inherits the old one's children). So the area has two places, one left empty;
    with ``fresh`` it moves to the other, and what it held goes at once (the last method's cards and settings are
    not left on screen while a new method's sweep runs); otherwise it stays and is redrawn in place."""
    key = f"area_{name}"
    at = int(st.session_state.get(key, 0)) ^ int(fresh)
    st.session_state[key] = at
    places = (st.empty(), st.empty())
    return places[at].container()


def guarded(fn: Callable[[], T], prefix: str = "") -> T | None:
    """``fn()``; a `TextsdcError`, or an `OSError` of the machine (a full disk, a folder that cannot be
    written), is shown in place with st.error and gives None (the session lives on)."""
    try:
        return fn()
    except TextsdcError as exc:
        message = str(exc)
    except OSError as exc:
        message = os_error_message(exc)
    st.error(f"{prefix}{display.md_literal(message)}" if prefix else display.error_text(message))  # a prefix starts it
    return None


def init_session(
    default_source: str, encoding: str | None = None, delimiter: str | None = None, bad_rows: str = "error"
) -> None:
    """On the first run of a session, load the default dataset (a demo, or a file read with ``encoding``,
    ``delimiter`` and ``bad_rows``); a failure is kept to show on the Data page."""
    ss = st.session_state
    if ss.get(STARTUP_DONE):
        return
    ss[STARTUP_DONE] = True
    if not is_demo(default_source) and Path(default_source).is_file():
        ss[STARTUP_FILE] = (default_source, encoding, delimiter, bad_rows)
    try:
        ss[DATASET], ss[ORIGIN] = load_source(default_source, encoding, delimiter, bad_rows)
    except TextsdcError as exc:
        ss[STARTUP_ERROR] = f"Could not open '{default_source}': {exc}"


def page_dataset() -> Dataset | None:
    """The dataset in use, or None after pointing the steward to the Data page (the start of every page that
    needs one)."""
    dataset = current_dataset()
    if dataset is None:
        st.info("No dataset is loaded yet.")
        st.page_link(pages.page("data"), label="Choose a dataset on the Data page", icon=":material/table:")
    return dataset


def current_dataset() -> Dataset | None:
    return st.session_state.get(DATASET)


def current_origin() -> Origin | None:
    return st.session_state.get(ORIGIN)


def use_dataset(dataset: Dataset, origin: Origin) -> None:
    """Make ``dataset`` the one in use. A choice made on another dataset stays but no longer applies; the method
    chosen on each page stays where ``dataset`` allows it at the method's default settings, and otherwise the
    page starts again from its default."""
    previous = st.session_state.get(DATASET)
    if previous is not None and previous.fingerprint != dataset.fingerprint:
        allowed = [name for name, refused in applicable_methods(dataset).items() if not refused]
        for key in METHOD_KEYS:
            if key in st.session_state and st.session_state[key] not in allowed:
                st.session_state.pop(key)
    st.session_state[DATASET] = dataset
    st.session_state[ORIGIN] = origin
    st.session_state.pop(STARTUP_ERROR, None)


@dataclass(frozen=True)
class Chosen:
    """What the Protect page shows and the Export page writes."""

    fingerprint: str
    dataset: str
    method: str
    knob: float
    seed: int
    replicates: int
    risk: str | None
    utility: str | None
    sweep: SweepResult
    params: dict = field(default_factory=dict)
    options: MeasureSettings | None = None


def set_choice(chosen: Chosen) -> None:
    st.session_state[CHOICE] = chosen


def choose(
    dataset: Dataset,
    method: str,
    value: float,
    seed: int,
    sweep: SweepResult,
    params: dict,
    options: MeasureSettings | None,
    risk: str | None,
    utility: str | None,
) -> Chosen:
    """Make the release a page shows at knob ``value`` the one Export writes, and link to Export."""
    chosen = Chosen(
        fingerprint=dataset.fingerprint,
        dataset=dataset.name,
        method=method,
        knob=value,
        seed=seed,
        replicates=sweep.replicates,
        risk=risk,
        utility=utility,
        sweep=sweep,
        params=params,
        options=options,
    )
    set_choice(chosen)
    pages.export_link(display.release_setting_text(method, params, sweep.knob, value))
    return chosen


def live_knob(
    dataset: Dataset,
    method: str,
    params: dict,
    options: MeasureSettings | None,
    seed: int,
    sweep: SweepResult,
    views: str,
    state_key: str,
    default: float,
    risk: str | None,
    utility: str | None,
) -> None:
    """A page's knob with its ``views`` (`dashboard.knob_view`), and the release it chooses for Export."""
    runs = f"{state_key}::page_runs"
    st.session_state[runs] = st.session_state.get(runs, 0) + 1
    _knob_fragment(
        dataset, method, params, options, seed, sweep, views, state_key, default, risk, utility, st.session_state[runs]
    )


@st.fragment
def _knob_fragment(
    dataset: Dataset,
    method: str,
    params: dict,
    options: MeasureSettings | None,
    seed: int,
    sweep: SweepResult,
    views: str,
    state_key: str,
    default: float,
    risk: str | None,
    utility: str | None,
    page_run: int,
) -> None:
    """All that a move of the knob reruns (a Streamlit fragment, called again with the arguments of the page's
    last run: ``page_run`` tells a move from a run of the page)."""
    from dashboard import pins  # pins reads this module's choice

    value = knob_view.knob_view(state_key, sweep.grid, views, default, page_run)
    chosen = choose(dataset, method, value, seed, sweep, params, options, risk=risk, utility=utility)
    pins.look_at(dataset, chosen, state_key)
    pins.history_steps(dataset, chosen, state_key)
    pins.pin_control(dataset, chosen)


def get_choice(dataset: Dataset | None) -> Chosen | None:
    """The choice made on the Protect page, if it was made on ``dataset``."""
    c = st.session_state.get(CHOICE)
    if c is None or dataset is None or c.fingerprint != dataset.fingerprint:
        return None
    return c
