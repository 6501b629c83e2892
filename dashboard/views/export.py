"""Export page: write a pinned candidate's release with its manifest, reviewer report (HTML and PDF) and the
steward's decision note, after the release ledger's figures: the earlier releases of the same records, what this
export adds, and the findings a steward exports over only with a reason."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from dashboard import caching, display, exporting, pages, pins, session
from engine.data.dataset import Dataset
from engine.export.bundle import MANIFEST_JSON, REPORT_HTML, file_sha256
from engine.export.keys import KEY_FILE
from engine.ledger.explain import adds, ledger_figures, so_far
from engine.ledger.store import default_ledger
from engine.measures.base import CONFIDENTIAL_SUFFIX, METRICS, metric_info
from engine.measures.intruders import intruder
from engine.project import Pin, format_measure
from engine.protect import method_class

PIN_KEY = "export_pin"


def _facts(dataset, candidate) -> None:
    protector = method_class(candidate.method)
    knob = protector.knob
    changed = candidate.settings_text() or "defaults"
    rows = [
        ("Dataset", dataset.name),
        ("Method", f"{protector.title} ({candidate.method}), {changed}"),
        (
            "Knob",
            f"{knob.label}: {display.release_setting_text(candidate.method, candidate.params, knob, candidate.knob)}",
        ),
        ("Seed", str(candidate.seed)),
        ("Replicates", str(candidate.replicates)),
        ("Intruder assumed", intruder(candidate.options.get("intruder")).label),
    ]
    # A Markdown table wraps long values (an intruder's description, a method's settings); a data frame cut them.
    lines = ["| | Candidate |", "|---|---|"] + [f"| {name} | {display.md_escape(value)} |" for name, value in rows]
    st.markdown("\n".join(lines))


def _measures(pin) -> None:
    """The pin's measures as the report will show them: value, interval, unprotected data, better direction."""
    rows = []
    for mid, m in pin.metrics.items():
        if mid.endswith(CONFIDENTIAL_SUFFIX):
            continue
        info = metric_info(mid)
        base = pin.metrics.get(mid + CONFIDENTIAL_SUFFIX, {})
        rows.append(
            {
                "Measure": info.label,
                "Kind": f"{info.kind}, {info.better_text}",
                "Value": format_measure(mid, m),
                "Unprotected data": "—" if base.get("value") is None else info.format(base["value"]),
            }
        )
    order = {info.label: i for i, info in enumerate(METRICS.values())}
    rows.sort(key=lambda r: order.get(r["Measure"], len(order)))
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="export_measures")


def _no_pins(dataset) -> None:
    st.info(
        "Export writes a pinned candidate with your decision note. Pin one or more candidates under the knob of "
        "the Protect text, Synthesize fields or Counts and amounts page, then choose one here."
    )
    _offer_last_shown(dataset, [])
    st.page_link(pages.page("protect"), label="Go to Protect", icon=":material/tune:")
    st.page_link(pages.page("synthesize"), label="Go to Synthesize fields", icon=":material/casino:")
    st.page_link(pages.page("counts"), label="Go to Counts and amounts", icon=":material/bar_chart:")


def _offer_last_shown(dataset: Dataset, pinned: Sequence[Pin]) -> None:
    """The release last shown on a knob page, with a button to pin it, unless it is pinned already: a steward who
    pinned one release and then looked at another may mean to export the other."""
    chosen = session.get_choice(dataset)
    if chosen is None:
        return
    candidate = pins.candidate_of(chosen)
    if any(candidate.same_release(p.candidate) for p in pinned):
        return
    st.caption(f"The release last shown, not pinned: {display.md_escape(candidate.describe())}.")
    if st.button("Pin it", key="export_pin_last", icon=":material/push_pin:"):
        if session.guarded(lambda: pins.pin(dataset, candidate)) is not None:
            st.rerun()


KEY_WARNING = (
    "The key turns each pseudonym of the bundle back into the identifier it stands for: it must never travel with "
    "the bundle. Do not put it in the bundle's folder or the zip, nor send it by the same way; keep it where only "
    "the people allowed to replay the release can read it (they give it to `textsdc verify --key`)."
)


def _key_download(result) -> None:
    """The pseudonym key of a bundle with pseudonymized columns, as a file of its own apart from the bundle (what
    `textsdc export --key-out` writes), under the warning that it must not travel with the bundle."""
    note = result.record.pseudonym_key
    if note is None:
        return
    st.subheader("The pseudonym key (not part of the bundle)")
    key = exporting.bundle_key(result)
    if key is None:
        st.caption(
            f"The key with check value {note.check} is no longer in the cache folder, so it cannot be downloaded here."
        )
        return
    st.warning(KEY_WARNING, icon=":material/key:")
    st.download_button(
        "Download the pseudonym key",
        key,
        file_name=f"{result.out_dir.resolve().name}.{KEY_FILE}",
        mime="application/octet-stream",
        on_click="ignore",
        key="export_key",
        help=f"Check value {note.check}, which the manifest names (pseudonym_key); the key itself is in no file "
        "of the bundle.",
    )


def _show_result(exported: dict, shown: Sequence[str]) -> None:
    """What the export wrote; of its warnings, those not ``shown`` above it already (the pin's)."""
    result = exported["result"]
    st.success(f"Wrote {len(result.files)} files to {result.out_dir.resolve()}")
    if result.record.ledger is not None:
        st.caption(display.md_escape(f"Release ledger: {ledger_figures(result.record.ledger)}."))
    for warning in result.warnings:
        if warning not in shown:
            st.warning(display.md_escape(display.warning_line(warning)))
    if result.internal_report is not None:
        st.info(
            f"The internal review report, with the before/after samples and confidential excerpts, is at "
            f"{display.md_escape(str(result.internal_report.resolve()))}. It is not part of the bundle or the zip: "
            "keep it for your own review."
        )
    listed = result.record.files
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
    _key_download(result)
    st.subheader("Report preview (the report in the bundle)")
    if hasattr(st, "iframe"):  # st.components.v1.html is deprecated in newer Streamlit
        st.iframe(exported["report"], height=900)
    else:
        components.html(exported["report"], height=900, scrolling=True)


LEDGER_MEMO = "export_ledger_preview"


def _ledger_state() -> tuple[str, int, int]:
    """The ledger file's place, size and time of change: a preview made before an export is made again after."""
    path = default_ledger()
    try:
        stat = path.stat()
    except OSError:
        return str(path), -1, -1
    return str(path), stat.st_size, stat.st_mtime_ns


def _ledger(dataset: Dataset, candidate, tag: str) -> tuple[bool, str | None]:
    """The release ledger beside the candidate: the earlier releases of these records, what this export adds and
    the ledger's findings, with the reason box and confirmation a flagged export needs. Returns whether the export
    may go and the steward's reason to export over the findings (None: no findings, or none given)."""
    st.subheader("Release ledger")
    key = (tag, _ledger_state())
    memo = st.session_state.get(LEDGER_MEMO)
    if memo is None or memo[0] != key:
        gate = session.guarded(lambda: exporting.ledger_preview(dataset, candidate))
        if gate is None:
            return False, None
        st.session_state[LEDGER_MEMO] = memo = (key, gate)
    gate = memo[1]
    st.markdown(display.md_escape(so_far(gate.earlier)))
    st.markdown(display.md_escape(adds(gate.entry, gate.note)))
    if not gate.findings:
        st.caption("The ledger's checks find nothing against the earlier releases of these records.")
        return True, None
    for finding in gate.findings:
        st.warning(display.md_escape(f"The release ledger finds: {finding}."), icon=":material/history:")
    reason = st.text_area(
        "Reason to export over the ledger's findings",
        key=f"export_ledger_reason::{tag}",
        placeholder="e.g. the recipients of both releases are the same team, bound by the same agreement",
        help="The ledger keeps it with the export; the manifest and the report state the findings with it.",
    )
    confirmed = st.checkbox("Export over the ledger's findings", value=False, key=f"export_ledger_confirm::{tag}")
    override = reason.strip() if confirmed and reason.strip() else None
    if override is None:
        st.caption("The ledger stops this export: give your reason and tick the box to export over its findings.")
    return override is not None, override


def render() -> None:
    """The Export page."""
    st.title("Export")
    dataset = session.page_dataset()
    if dataset is None:
        return
    project = pins.project(dataset)
    if not project.pins:
        _no_pins(dataset)
        return
    names = [p.candidate.name for p in project.pins]
    if st.session_state.get(PIN_KEY) not in names:
        st.session_state[PIN_KEY] = names[-1]
    name = st.selectbox("Candidate to export", names, key=PIN_KEY, help="The pins of the Compare page.")
    _offer_last_shown(dataset, project.pins)
    pin = project.get(name)
    candidate = pin.candidate
    _facts(dataset, candidate)
    for warning in pin.warnings:
        st.warning(display.md_escape(display.warning_line(warning)))
    _measures(pin)

    st.subheader("Decision note")
    others = [n for n in names if n != name]
    st.caption(
        "The manifest and the report carry who decided, when, why, and the other pins as the alternatives "
        "weighed, with their measures and the commands that make each again: "
        + (", ".join(display.md_escape(n) for n in others) if others else "none, as no other candidate is pinned")
        + "."
    )
    by = st.text_input("Decided by", key="export_by", persist_state="session", placeholder="name, role")
    why = st.text_area(
        "Why this release",
        key=f"export_why::{name}",
        placeholder="e.g. the lowest whole-release risk among the pins that keep the classifier's F1 above 0.8",
    )
    origin = session.current_origin()
    tag = f"{dataset.fingerprint[:12]}::{json.dumps(candidate.to_dict(), sort_keys=True)}"
    out_dir = st.text_input(
        "Output folder",
        value=exporting.default_export_dir(dataset, candidate),
        key=f"export_dir::{tag}",
        help="Created if it does not exist. An earlier bundle in it is replaced only when you tick the box that "
        "then shows, and whole, once the new one is complete; a folder holding other files is refused.",
    )
    st.caption(f"Resolves to {display.md_escape(Path(out_dir).expanduser().resolve())}")
    replace = exporting.holds_bundle(out_dir) and st.checkbox(
        "Replace the bundle in this folder",
        value=False,
        key=f"export_replace::{tag}",
        help="The folder holds a bundle already. Tick to replace it with this one; or choose a new folder.",
    )
    with_frontier = st.checkbox(
        "Include the frontier in the report",
        value=True,
        key="export_frontier",
        persist_state="session",
        help="Uses the method's sweep, already computed on its page.",
    )
    st.caption(
        "The same release from the command line, as the manifest records it: it writes into a new folder "
        "beside the bundle, named with -replay, so running it never replaces the bundle."
    )
    st.code(
        exporting.replay_spec(dataset, origin, candidate, out_dir, with_frontier).command(),
        language="bash",
        wrap_lines=True,
    )
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

    ledger_ok, override = _ledger(dataset, candidate, tag)
    ready = bool(by.strip() and why.strip())
    if not ready:
        st.caption("Say who decided and why to export.")
    if st.button("Export", type="primary", key="export_run", disabled=not (ready and ledger_ok)):
        progress_area = st.empty()
        with st.spinner("Writing the release, its manifest and its report (printing the PDF takes a few seconds)…"):
            result = session.guarded(
                lambda: exporting.export_pin(
                    dataset,
                    origin,
                    candidate,
                    out_dir,
                    with_frontier,
                    exporting.decision_for(dataset, origin, project, name, by, why),
                    caching.progress_reporter(progress_area),
                    replace,
                    override,
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
        _show_result(exported, pin.warnings)


if __name__ == "__main__":
    render()
