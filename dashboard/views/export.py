"""Export page: write the release chosen on the Protect page with its manifest and reviewer report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from dashboard import caching, compute, display, exporting, pages, session
from engine.export.bundle import MANIFEST_JSON, REPORT_HTML, file_sha256
from engine.export.checks import risk_at_unprotected_level
from engine.measures.base import metric_info
from engine.protect import METHODS


def _facts(chosen: session.Chosen) -> None:
    protector = METHODS[chosen.method]
    knob = protector.knob
    rows = [
        ("Dataset", chosen.dataset),
        ("Method", f"{protector.title} ({chosen.method})"),
        ("Knob", f"{knob.label}: {display.knob_text(knob, chosen.knob)}"),
        ("Seed", str(chosen.seed)),
        ("Replicates", str(chosen.replicates)),
    ]
    st.dataframe(pd.DataFrame(rows, columns=["", "Chosen"]), hide_index=True, width="content", key="export_facts")


def _show_result(exported: dict) -> None:
    result = exported["result"]
    st.success(f"Wrote {len(result.files)} files to {result.out_dir.resolve()}")
    for warning in result.warnings:
        st.warning(f"Warning: {display.md_escape(warning)}.")
    if result.internal_report is not None:
        st.info(
            f"The internal review report, with the before/after samples and confidential excerpts, is at "
            f"{display.md_escape(str(result.internal_report.resolve()))}. It is not part of the bundle or the zip: "
            "keep it for your own review."
        )
    listed = result.manifest.get("files", {})
    rows = []
    for name, path in sorted(result.files.items()):
        sha = listed.get(name) or file_sha256(path)
        rows.append({"file": name, "bytes": path.stat().st_size if path.exists() else None, "SHA-256": sha})
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="export_files")
    st.caption(
        f"The SHA-256 of {MANIFEST_JSON} is recorded in the audit log (row {result.audit_row_id}); the "
        "manifest lists the checksums of the other files."
    )
    st.download_button(
        "Download the bundle (.zip)",
        exported["zip"],
        file_name=f"{result.out_dir.resolve().name}.zip",
        mime="application/zip",
        on_click="ignore",
        key="export_zip",
        type="primary",
    )
    st.subheader("Report preview (the report in the bundle)")
    if hasattr(st, "iframe"):  # st.components.v1.html is deprecated in newer Streamlit
        st.iframe(exported["report"], height=900)
    else:
        components.html(exported["report"], height=900, scrolling=True)


def render() -> None:
    """The Export page."""
    st.title("Export")
    dataset = session.current_dataset()
    chosen = session.get_choice(dataset)
    if dataset is None or chosen is None:
        st.info(
            "Nothing is chosen yet: pick a method and a knob setting on the Protect, Synthesize fields or "
            "Counts and amounts page first."
        )
        st.page_link(pages.page("protect"), label="Go to Protect", icon=":material/tune:")
        st.page_link(pages.page("synthesize"), label="Go to Synthesize fields", icon=":material/casino:")
        st.page_link(pages.page("counts"), label="Go to Counts and amounts", icon=":material/bar_chart:")
        return
    _facts(chosen)
    same = risk_at_unprotected_level(compute.metrics_at(chosen.sweep, chosen.knob))
    if same:
        st.warning(
            "At this setting the risk equals that of the unprotected data on "
            f"{display.md_escape(', '.join(metric_info(m).label for m in same))}: the release is not protected "
            "there. The manifest and the report will say so."
        )
    origin = session.current_origin()
    tag = f"{chosen.fingerprint[:12]}::{chosen.method}::{chosen.knob:g}::{chosen.seed}::{chosen.replicates}"
    out_dir = st.text_input(
        "Output folder",
        value=exporting.default_export_dir(chosen),
        key=f"export_dir::{tag}",
        help="Created if it does not exist. An earlier bundle in it is replaced whole, only once the new one is "
        "complete; a folder holding other files is refused.",
    )
    st.caption(f"Resolves to {display.md_escape(Path(out_dir).expanduser().resolve())}")
    with_frontier = st.checkbox(
        "Include the frontier in the report",
        value=True,
        key="export_frontier",
        persist_state="session",
        help="Uses the sweep already computed on the Protect page.",
    )
    st.caption("The same release from the command line:")
    st.code(exporting.replay_command(dataset, origin, chosen, out_dir, with_frontier), language="bash", wrap_lines=True)
    schema_file = exporting.schema_file_name(dataset, origin)
    if schema_file:
        st.caption(
            f"The command needs the column roles chosen on the Data page: save them as "
            f"{display.md_escape(schema_file)} beside the data file."
        )
        st.download_button(
            f"Download {schema_file}",
            dataset.schema.to_toml(),
            file_name=schema_file,
            mime="application/toml",
            on_click="ignore",
            key="export_schema",
        )

    if st.button("Export", type="primary", key="export_run"):
        progress_area = st.empty()
        result = session.guarded(
            lambda: exporting.export_chosen(
                dataset, origin, chosen, out_dir, with_frontier, caching.progress_reporter(progress_area)
            ),
            prefix=f"Could not write the export to {out_dir}: ",
        )
        progress_area.empty()
        if result is not None:
            st.session_state[session.EXPORTED] = {
                "tag": tag,
                "result": result,
                "zip": exporting.zip_bundle(result),
                "report": result.files[REPORT_HTML].read_text(encoding="utf-8"),
            }
    exported = st.session_state.get(session.EXPORTED)
    if exported is not None and exported["tag"] == tag:
        _show_result(exported)


if __name__ == "__main__":
    render()
