"""Process-wide cache slots. Each entry is a slot with a lock that the first caller fills, so a progress bar can
be drawn while it fills (Streamlit replays elements drawn inside a cached function, which a progress bar must
not be) and two sessions asking for the same fit wait for one computation instead of doing two.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from engine.data.background import read_background
from engine.errors import TextsdcError
from engine.measures.evaluate import MeasureSettings
from engine.measures.risk.background_attack import BACKGROUND
from engine.progress import Progress
from engine.protect.base import Protector

T = TypeVar("T")


class Slot:
    """One cache entry: filled once under its lock by the first caller."""

    EMPTY = object()

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: Any = Slot.EMPTY

    def get(self, compute: Callable[[], T]) -> T:
        with self.lock:
            if self.value is Slot.EMPTY:
                self.value = compute()
            return self.value

    @property
    def filled(self) -> bool:
        return self.value is not Slot.EMPTY


@st.cache_resource(show_spinner=False, max_entries=8)
def demo_slot(name: str) -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=8)
def fit_slot(fingerprint: str, method: str, params: str) -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=8)
def evaluator_slot(fingerprint: str, fields: tuple[str, ...], options: str, method: str = "") -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=32)
def sweep_slot(fingerprint: str, method: str, params: str, replicates: int, seed: int, options: str) -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=32)
def kept_slot(fingerprint: str, method: str, params: str, seed: int, replicates: int) -> Slot:
    """The releases a sweep kept (`engine.results.SweepResult.releases`), found by what decides a release."""
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=64)
def release_slot(fingerprint: str, method: str, params: str, value: float, seed: int, replicates: int) -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=16)
def replicates_slot(
    fingerprint: str, method: str, params: str, value: float, seed: int, replicates: int, k: int
) -> Slot:
    return Slot()


@st.cache_resource(show_spinner=False, max_entries=16)
def samples_slot(fingerprint: str, method: str, params: str, seed: int, replicates: int) -> Slot:
    return Slot()


def params_key(protector: Protector) -> str:
    return json.dumps(protector.params(), sort_keys=True, default=str)


def progress_reporter(placeholder: Any) -> Progress:
    """A progress callback drawing an st.progress bar into ``placeholder`` (only once something is reported)."""
    state: dict[str, Any] = {"bar": None, "last": 0.0, "what": None}

    def update(done: int, total: int, what: str = "") -> None:
        now = time.monotonic()
        if state["bar"] is not None and done < total and what == state["what"] and now - state["last"] < 0.2:
            return  # every update is a message to the browser; a few per second is plenty (a new step is shown)
        state["last"], state["what"] = now, what
        fraction = 0.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
        label = (what[:1].upper() + what[1:]) if what else "Working"
        text = f"{label}: {done:,} of {total:,}" if total > 1 else f"{label}…"
        if state["bar"] is None:
            state["bar"] = placeholder.progress(fraction, text=text)
        else:
            state["bar"].progress(fraction, text=text)

    return update


def options_key(options: MeasureSettings | None) -> str:
    """The measure settings as a cache key: their values, and the checksum of a declared background corpus (a
    file changed in place is another background)."""
    options = options or MeasureSettings()
    path = options[BACKGROUND.name]
    if path is None:
        return repr(options)
    try:
        digest = read_background(path).sha256
    except TextsdcError:
        digest = "unreadable"
    return f"{options!r} background={digest}"
