"""A method's check against a gold file the steward uploads (`engine.protect.base.GoldCheck`), on its page."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import session
from dashboard.caching import progress_reporter
from engine.figures.detection import detection_figure
from engine.protect import METHODS, get_protector

RESULTS_KEY = "gold_check_results"


def render(method: str, params: dict) -> None:
    """The upload, the table by knob value and the figure of the value picked; nothing when the method
    declares no check. A result is kept per file and settings for the session."""
    check = METHODS[method].gold_check
    if check is None:
        return
    with st.expander(check.title):
        st.caption(check.help)
        upload = st.file_uploader("Gold file", type=list(check.suffixes), key=f"gold_check::{method}")
        if upload is None:
            return
        data = upload.getvalue()
        key = (method, hashlib.sha256(data).hexdigest(), repr(sorted(params.items())))
        results = st.session_state.setdefault(RESULTS_KEY, {})
        if key not in results:
            area = st.empty()
            report = session.guarded(lambda: _run(check, method, params, upload.name, data, area))
            area.empty()
            if report is None:
                return
            results[key] = report
        _show(results[key], method)


def _run(check, method: str, params: dict, name: str, data: bytes, area):
    """Run the check on the uploaded bytes, written to a private temporary file of the same suffix."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(name).name
        path.write_bytes(data)
        return check.run(path, get_protector(method, **params), progress_reporter(area))


def _show(report, method: str) -> None:
    table = report.table.copy()
    for column in table.columns:
        if pd.api.types.is_float_dtype(table[column]):  # a score that cannot be computed reads "–", not "None"
            table[column] = [("–" if pd.isna(v) else f"{v:.3f}") for v in table[column]]
    st.dataframe(table, hide_index=True, key=f"gold_check_table::{method}")
    for line in report.notes:
        st.caption(line)
    names = list(report.scores)
    if names:
        chosen = st.selectbox(
            "Per type at",
            names,
            index=names.index(report.default) if report.default in names else 0,
            key=f"gold_check_at::{method}",
        )
        st.plotly_chart(detection_figure(report.scores[chosen]), key=f"gold_check_figure::{method}")
