"""The "Annotate a sample" panel of the Protect page (issue 51): a stratified random sample of the records, shown
one by one with what the detector finds marked; the steward keeps, relabels or removes each span, adds what it
missed, accepts the record and goes on, and sees the detector's recall and precision on the records accepted so
far. The annotations are kept in the cache folder (`engine.annotation.store`), never in a bundle; they download
as span JSON or CoNLL and upload back. From two accepted records on, the panel shows the allow and deny lists the
corrections say (`engine.annotation.corrections`) and the recall and precision they would bring, measured by
cross-validation; the steward keeps them only by choosing "Use these corrections", which keeps the lists beside
the annotations and sets the method's ``corrections`` parameter to "kept". For the k-anonymity tagger the panel
also retrains the tagger on the gold set and the accepted records on request, shows its gain measured by
cross-validation (`engine.annotation.retrain`) and keeps it only on "Use the retrained tagger", which sets the
method's ``tagger`` parameter to "retrained".

A Streamlit fragment: a click in the panel reruns the panel alone, never the page's sweep or knob views, and the
detector runs once per sample (`engine.annotation.residual.found_in`)."""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard import display, session
from engine.annotation.corrections import cross_validated, learnt
from engine.annotation.detectors import Detector, Found, detector, detector_names
from engine.annotation.formats import read_annotations, to_conll, to_span_json
from engine.annotation.residual import annotation_records, detector_at, found_in, label_words
from engine.annotation.retrain import RetrainGain
from engine.annotation.retrain import cross_validated as cross_validated_retrain
from engine.annotation.sample import SAMPLE_STEP, draw_sample, stratifying_field
from engine.annotation.scores import ALL, DetectionScores, score
from engine.annotation.spans import Annotations, RecordAnnotation, checked_spans
from engine.annotation.store import delete_annotations, import_records, load_annotations, save_annotations
from engine.annotation.thresholds import THRESHOLDS, TypeCurve, kept_thresholds, type_curves
from engine.data.dataset import Dataset
from engine.errors import DataError
from engine.figures.detection import precision_recall_figure
from engine.figures.text import label_colours
from engine.protect import METHODS, get_protector
from engine.protect.corrections import KEPT, NONE, Corrections, keep_corrections, kept_corrections
from engine.protect.kanon.retrained import PACKAGED, RETRAINED, keep_retrained, kept_retrained
from engine.protect.params import CORRECTIONS
from engine.text.detection_quality import Span

CSS = """<style>
.textsdc-annotate{border:1px solid #ddd;border-radius:.4rem;padding:.5rem .7rem;white-space:pre-wrap;
word-wrap:break-word;font-size:1rem;line-height:1.9;max-height:22rem;overflow-y:auto}
.textsdc-annotate mark{padding:.05rem .15rem;border-radius:.2rem}
.textsdc-annotate mark::after{content:attr(data-label);font-size:.66rem;color:#333;margin-left:.2rem;
vertical-align:super;white-space:nowrap}
</style>"""


def _key(*parts: object) -> str:
    return "annotate::" + "::".join(map(str, parts))


def record_html(text: str, spans: list[Span], colours: dict[str, str]) -> str:
    """``text`` with ``spans`` marked in their label's colour and named (escaped HTML)."""
    out, at = [], 0
    for start, end, label in sorted(spans):
        out.append(html.escape(text[at:start]))
        colour = colours.get(label, "#eee")
        out.append(
            f'<mark style="background:{colour}" data-label="{html.escape(label)}">{html.escape(text[start:end])}</mark>'
        )
        at = end
    out.append(html.escape(text[at:]))
    body = "".join(out).replace("\r\n", "\n").replace("\n", "<br>").replace("$", "&#36;")
    return f'<div class="textsdc-annotate">{body}</div>'


def scores_table(scores: DetectionScores) -> pd.DataFrame:
    """The token-level recall and precision per label with their intervals, and the span-level recall."""
    rows = []
    for label in scores.labels:
        token, span = scores.get(label, "token"), scores.get(label, "span")
        if token is None or span is None:
            continue
        rows.append(
            {
                "Label": "All labels" if label == ALL else label,
                "Marked tokens": token.recall.total,
                "Recall": token.recall.text(),
                "Precision": token.precision.text(),
                "Whole spans found": span.recall.text(),
            }
        )
    return pd.DataFrame(rows)


def _find_occurrence(text: str, words: str, occurrence: int) -> tuple[int, int] | None:
    at = -1
    for _ in range(occurrence):
        at = text.find(words, at + 1)
        if at < 0:
            return None
    return at, at + len(words)


def render(dataset: Dataset, method: str, params: dict, seed: int) -> None:
    """The panel, for a method with a detector (nothing otherwise), folded until opened."""
    protector = get_protector(method, **params)
    if not protector.detects:
        return
    with st.expander("Annotate a sample", expanded=bool(st.session_state.get(_key("on", method)))):  # open while on
        st.caption(
            "Mark what the detector should find in a random sample of your records: its spans are filled in; keep, "
            "relabel or remove them, add what it missed, and accept each record. Recall and precision below are "
            "measured on the records you accepted, and the residual detection risk of this method's releases is "
            "then measured on them instead of the shipped gold. Annotations stay on this machine with your "
            "session, never in a bundle."
        )
        if not st.toggle("Annotate", key=_key("on", method)):
            return
        _panel(dataset, method, params, seed)


@st.fragment
def _panel(dataset: Dataset, method: str, params: dict, seed: int) -> None:
    protector = get_protector(method, **params)
    knob = float(st.session_state.get(session.knob_key(method), protector.knob.default))  # read, never moved here
    names = detector_names(protector)
    chosen = st.radio(
        "Detector",
        names,
        horizontal=True,
        key=_key("detector", method),
        format_func=lambda n: f"{METHODS[method].title}" if n == method else "The release guard",
    )
    det = detector(protector, chosen)
    fp = dataset.fingerprint
    size_col, where_col = st.columns([1, 3])
    with size_col:
        size = int(
            st.number_input(
                "Records in the sample",
                min_value=SAMPLE_STEP,
                max_value=max(SAMPLE_STEP, dataset.n_records + SAMPLE_STEP - 1),
                step=SAMPLE_STEP,
                key=_key("size", fp[:12]),
                help="Drawn at random within text-length quartiles"
                + (f" and the values of '{stratifying_field(dataset)}'" if stratifying_field(dataset) else "")
                + f", with the page's seed ({seed}); {SAMPLE_STEP} more keep the records drawn before.",
            )
        )
    kept = session.guarded(lambda: load_annotations(fp, det.name))
    sample = tuple(draw_sample(dataset, size, seed))
    annotations = Annotations(fp, det.name, sample, {} if kept is None else dict(kept.done))
    with st.spinner(f"Finding what {det.title} finds in the sample…"):
        found = session.guarded(lambda: found_in(det, dataset, annotation_records(annotations)))
    if found is None:
        return
    prefilled = found.at(None)
    position_key = _key("at", fp[:12], det.name)
    at = min(int(st.session_state.get(position_key, 0)), len(sample) - 1)
    record = sample[at]
    text = str(dataset.texts.iloc[record])
    work_key = _key("work", fp[:12], det.name, record)
    if work_key not in st.session_state:
        done = annotations.done.get(record)
        st.session_state[work_key] = list(done.spans) if done is not None else list(prefilled[record])
    working: list[Span] = st.session_state[work_key]
    reviewed = len(annotations.done)
    with where_col:
        status = "accepted" if record in annotations.done else "not yet accepted"
        st.markdown(
            f"**Record {at + 1} of {len(sample)}** (row {record + 1} of the data, {status}) · "
            f"{display.counted(reviewed, 'record')} accepted"
        )
    colours = label_colours(list(det.labels))
    st.html(CSS + record_html(text, working, colours))
    if det.name == "redact":
        st.caption(
            "What redaction finds at any level is filled in; recall and precision below are measured at the knob's "
            f"value, {detector_at(det, knob).removeprefix('redaction ')}."
        )
    _span_rows(det, record, working, text, work_key)
    _add_span(det, record, text, working, work_key)
    c_prev, c_accept, c_next, c_undo = st.columns(4)

    def go(step: int) -> None:
        st.session_state[position_key] = max(0, min(len(sample) - 1, at + step))

    def accept() -> None:
        spans = checked_spans(text, st.session_state[work_key], f"record {record}", det.labels)
        save_annotations(annotations.with_record(RecordAnnotation(record, text, spans)))
        go(1)

    def undo() -> None:
        save_annotations(annotations.without_record(record))
        st.session_state[work_key] = list(prefilled[record])

    c_prev.button("← Previous", key=_key("prev"), on_click=go, args=(-1,), disabled=at == 0, width="stretch")
    c_accept.button("Accept and next", key=_key("accept"), on_click=accept, type="primary", width="stretch")
    c_next.button("Next →", key=_key("next"), on_click=go, args=(1,), disabled=at == len(sample) - 1, width="stretch")
    c_undo.button(
        "Forget this record", key=_key("undo"), on_click=undo, disabled=record not in annotations.done, width="stretch"
    )
    current = load_annotations(fp, det.name)
    _measures(det, current, found, knob, dataset)
    _thresholds(det, current, dataset, method, params, knob)
    _corrections(det, current, dataset, method, params, knob)
    if det.name == "kanon":
        _retrain(current, dataset, method, params)
    _files(dataset, det, current)


def _span_rows(det: Detector, record: int, working: list[Span], text: str, work_key: str) -> None:
    """One row per span: its text, its label (a choice), and a button that removes it."""
    if not working:
        st.caption("No span in this record: accept it if it holds nothing to find.")
        return
    for i, (start, end, label) in enumerate(list(working)):
        c_text, c_label, c_remove = st.columns([3, 2, 1], vertical_alignment="center")
        c_text.markdown(f"**{display.md_escape(text[start:end])}** · characters {start}–{end}")
        options = list(det.labels) if label in det.labels else [label, *det.labels]
        new = c_label.selectbox(
            "Label",
            options,
            index=options.index(label),
            key=_key("label", work_key, start, end),
            label_visibility="collapsed",
            format_func=lambda lab: f"{lab} ({label_words(det, lab)})" if det.name == "kanon" else lab,
        )
        if new != label:
            working[i] = (start, end, new)
        c_remove.button(
            "Remove", key=_key("remove", work_key, start, end), on_click=working.remove, args=((start, end, new),)
        )


def _add_span(det: Detector, record: int, text: str, working: list[Span], work_key: str) -> None:
    """Add a span the detector missed: the words as written in the text (the n-th time they occur) and a label."""
    c_words, c_nth, c_label, c_add = st.columns([3, 1, 2, 1], vertical_alignment="bottom")
    words = c_words.text_input("Add a span: its words, as in the text", key=_key("words", work_key))
    nth = int(c_nth.number_input("Occurrence", min_value=1, value=1, step=1, key=_key("nth", work_key)))
    label = c_label.selectbox("Label of the span to add", list(det.labels), key=_key("add_label", det.name))

    def add() -> None:
        place = _find_occurrence(text, words, nth) if words.strip() else None
        if place is None:
            st.session_state[_key("add_error", work_key)] = f"{words!r} does not occur {nth} time(s) in this record"
            return
        kept = [s for s in working if s[1] <= place[0] or place[1] <= s[0]]  # what it overlaps gives way
        try:
            spans = checked_spans(text, [*kept, (*place, label)], f"record {record}")
        except DataError as exc:
            st.session_state[_key("add_error", work_key)] = str(exc)
            return
        st.session_state[work_key] = list(spans)
        st.session_state[_key("words", work_key)] = ""

    c_add.button("Add", key=_key("add", work_key), on_click=add, width="stretch")
    error = st.session_state.pop(_key("add_error", work_key), None)
    if error:
        st.error(display.error_text(error))


def _measures(det: Detector, annotations: Annotations | None, found, knob: float, dataset: Dataset) -> None:
    """Recall and precision per label on the accepted records, at the knob's current value."""
    st.markdown(f"**What {detector_at(det, knob)} finds on your accepted records**")
    if annotations is None or not annotations.done:
        st.caption("Accept a record to measure recall and precision on it.")
        return
    reviewed = annotations.reviewed()
    at = found.at(knob)
    scores = score(reviewed, [at[a.record] for a in reviewed], det.by_label)
    every = scores.get(ALL, "token")
    assert every is not None
    with st.container(key=f"annotate-recall-{det.name}"):  # one stable home the browser test reads
        st.markdown(
            f"Recall **{every.recall.text()}**, precision **{every.precision.text()}** on "
            f"{display.counted(len(reviewed), 'accepted record')} (token level; brackets: Wilson 95% intervals)."
        )
    how = "under its own label" if det.by_label else "under any label"
    st.dataframe(scores_table(scores), hide_index=True, key=_key("scores", det.name))
    st.caption(
        f"Token level: a marked token is found when the detector finds it {how}; precision is the share of the "
        "tokens it finds that you marked. Whole spans found: a marked value found all of it."
    )


def threshold_table(curves: Sequence[TypeCurve], chosen: dict[str, float]) -> pd.DataFrame:
    """Per type: the threshold chosen (or "–" where the detector has none), recall and precision there."""
    rows = []
    for curve in curves:
        at = chosen.get(curve.label, curve.current)
        point = curve.at(at) if at is not None else curve.points[0]
        rows.append(
            {
                "Type": curve.label,
                "Threshold": f"{at:g}" if at is not None else "–",
                "Recall": point.recall.text(),
                "Precision": point.precision.text(),
                "Points": curve.why,
            }
        )
    return pd.DataFrame(rows)


def _thresholds(
    det: Detector, annotations: Annotations | None, dataset: Dataset, method: str, params: dict, knob: float
) -> None:
    """Precision against recall per type as its threshold moves, a threshold per scored type set against the
    sample, and the choice to use them (redaction's ``thresholds`` parameter, which the manifest records)."""
    st.markdown("**Precision and recall per type**")
    if annotations is None or not annotations.done:
        st.caption("Accept a record to see each type's precision and recall as its threshold moves.")
        return
    shown = st.toggle(
        "Show each type's precision and recall as its threshold moves",
        key=_key("curves_on", det.name),
        help="The detector runs once per threshold on the sample: a few seconds.",
    )
    if not shown:
        return
    with st.spinner("Measuring each type at each of its thresholds…"):
        curves = session.guarded(lambda: type_curves(det, dataset, annotations, knob))
    if not curves:
        if curves is not None:
            st.caption(f"{detector_at(det, knob).capitalize()} finds nothing you marked nor anything else here.")
        return
    chosen: dict[str, float] = {}
    scored = [c for c in curves if c.scored or (c.current is not None and len(c.points) > 1)]
    if scored:
        columns = st.columns(min(3, len(scored)))
        for i, curve in enumerate(scored):
            levels = [p.threshold for p in curve.points]
            start = curve.at(curve.current if curve.current is not None else levels[0]).threshold
            chosen[curve.label] = columns[i % len(columns)].select_slider(
                f"{curve.label} threshold",
                options=levels,
                value=start,
                key=_key("threshold", det.name, curve.label, ",".join(map(str, levels))),
                help="A found span of this type is replaced when its confidence reaches the threshold; each step "
                "is a confidence the detector gave a span in your sample (1: none of the lower ones).",
            )
    st.plotly_chart(precision_recall_figure(curves, chosen), key=_key("pr", det.name))
    st.dataframe(threshold_table(curves, chosen), hide_index=True, key=_key("threshold_table", det.name))
    st.caption(
        f"At {detector_at(det, knob)}, token level, on {display.counted(len(annotations.done), 'accepted record')}; "
        "brackets: Wilson 95% intervals. Ringed: the threshold chosen."
    )
    if det.name != "redact" or not scored:
        return
    current = tuple(params.get(THRESHOLDS) or ())
    moved = {  # a slider left where the threshold in use acts changes nothing
        c.label: chosen[c.label] for c in scored if c.current is None or chosen[c.label] != c.at(c.current).threshold
    }
    kept = kept_thresholds(current, moved)
    flag = _key("thresholds_changed", det.name)

    def use() -> None:
        st.session_state[f"param::{method}::{THRESHOLDS}"] = ", ".join(kept)
        st.session_state[flag] = True

    st.button(
        "Use these thresholds",
        key=_key("use_thresholds", det.name),
        on_click=use,
        disabled=kept == tuple(kept_thresholds(current, {})),
        help="Sets redaction's per-type confidence thresholds to these: the release records them and its replay "
        "command carries them.",
    )
    if st.session_state.pop(flag, False):
        st.rerun()  # the whole page: the method's settings changed


def _tier(det: Detector):
    """The knob value from which the detector replaces a span of a label (redaction's level; else 0)."""
    if det.name != "redact":
        return lambda label: 0.0
    from engine.text.entities import TIERS

    return lambda label: float(TIERS.get(label, 1))


def corrections_table(lists: Corrections) -> pd.DataFrame:
    """The lists as the panel shows them: one row per string, what happens to it and its label."""
    rows = [{"String": s, "From now on": "never replaced", "Label": ""} for s in lists.allow]
    rows += [{"String": s, "From now on": "always replaced", "Label": label} for s, label in lists.deny]
    return pd.DataFrame(rows, columns=["String", "From now on", "Label"])


def _corrections(
    det: Detector, annotations: Annotations | None, dataset: Dataset, method: str, params: dict, knob: float
) -> None:
    """The allow and deny lists learnt from the accepted records, the cross-validated gain, and the choice to use
    them (kept beside the annotations; the method's ``corrections`` parameter set to "kept")."""
    st.markdown("**Learn from your corrections**")
    reviewed = [] if annotations is None else annotations.reviewed()
    if annotations is None or len(reviewed) < 2:
        st.caption(
            "Accept 2 records or more: the strings you removed become an allow list (never replaced again) and "
            "those you added a deny list (always replaced, with your label)."
        )
        return
    raw = detector(get_protector(method, **{**params, CORRECTIONS.name: NONE}), det.name)
    found: Found | None = session.guarded(lambda: found_in(raw, dataset, annotation_records(annotations)))
    if found is None:
        return
    lists = learnt(annotations, found)
    kept = session.guarded(lambda: kept_corrections(dataset.fingerprint, det.name))
    in_use = params.get(CORRECTIONS.name) == KEPT
    if not lists and kept is None:
        st.caption(
            "Your corrections remove no string the detector found and add none it missed, without contradiction."
        )
        return
    if lists:
        gain = cross_validated(annotations, found, knob if det.name == "redact" else None, det.by_label, _tier(det))
        before, after = gain.before.get(ALL, "token"), gain.after.get(ALL, "token")
        assert before is not None and after is not None
        st.markdown(
            f"With these lists: recall **{before.recall.text()} → {after.recall.text()}**, precision "
            f"**{before.precision.text()} → {after.precision.text()}** on the "
            f"{display.counted(len(reviewed), 'record')} you accepted, measured by {gain.folds}-fold cross-validation "
            "(each record scored with lists learnt on the other folds, never on itself)."
        )
        st.dataframe(corrections_table(lists), hide_index=True, key=_key("lists", det.name))
    state = (
        "in use: this method runs with the kept lists"
        if in_use and kept is not None
        else "kept, not in use (corrections = none)"
        if kept is not None
        else "none kept"
    )
    same = kept is not None and kept.digest() == lists.digest()
    st.caption(
        f"Kept corrections for {det.title}: {state}"
        + (
            " — the lists above."
            if same
            else f" ({kept.counts()['allow']} never, {kept.counts()['deny']} always replaced)."
            if kept
            else "."
        )
        + " A release records their digest and counts, never their strings; its replay needs them kept on this "
        "machine."
    )
    param_key = f"param::{method}::{CORRECTIONS.name}"
    flag = _key("corrections_changed", det.name)

    def use() -> None:
        keep_corrections(lists)
        st.session_state[param_key] = KEPT
        st.session_state[flag] = True

    def stop() -> None:  # the lists stay kept, unused, until replaced
        st.session_state[param_key] = NONE
        st.session_state[flag] = True

    c_use, c_stop = st.columns(2)
    c_use.button(
        "Use these corrections",
        key=_key("use_corrections", det.name),
        on_click=use,
        disabled=not lists or (same and in_use),
        type="primary",
        width="stretch",
    )
    c_stop.button(
        "Stop using corrections",
        key=_key("stop_corrections", det.name),
        on_click=stop,
        disabled=not in_use,
        width="stretch",
    )
    if st.session_state.pop(flag, False):
        st.rerun()  # the whole page: the method's settings changed


def retrain_table(gain: RetrainGain) -> pd.DataFrame:
    """Per label (all labels first), token recall and precision of the packaged tagger and the retrained one."""
    rows = []
    for label in dict.fromkeys([*gain.before.labels, *gain.after.labels]):
        was, now = gain.before.get(label, "token"), gain.after.get(label, "token")
        if was is None or now is None:
            continue
        rows.append(
            {
                "Label": "All labels" if label == ALL else label,
                "Marked tokens": was.recall.total,
                "Recall, packaged": was.recall.text(),
                "Recall, retrained": now.recall.text(),
                "Precision, packaged": was.precision.text(),
                "Precision, retrained": now.precision.text(),
            }
        )
    return pd.DataFrame(rows)


def _retrain(annotations: Annotations | None, dataset: Dataset, method: str, params: dict) -> None:
    """Retrain the tagger on the gold set and the accepted records, its gain measured by cross-validation, and
    the choice to use it (kept beside the annotations; the method's ``tagger`` parameter set to "retrained")."""
    st.markdown("**Retrain the tagger on your annotations**")
    reviewed = [] if annotations is None else annotations.reviewed()
    if annotations is None or len(reviewed) < 2:
        st.caption("Accept 2 records or more: the tagger can then learn from them, beside its gold set.")
        return
    fp = dataset.fingerprint
    result_key = _key("retrained", fp[:12], annotations.digest()[:16])
    if st.button("Retrain the tagger", key=_key("retrain")):
        with st.spinner(f"Retraining the tagger on the gold set and {display.counted(len(reviewed), 'record')}…"):
            done = session.guarded(lambda: cross_validated_retrain(annotations))
        if done is not None:
            st.session_state[result_key] = done
    gain: RetrainGain | None = st.session_state.get(result_key)
    if gain is not None:
        before, after = gain.before.get(ALL, "token"), gain.after.get(ALL, "token")
        assert before is not None and after is not None
        st.markdown(
            f"Retrained: recall **{before.recall.text()} → {after.recall.text()}**, precision "
            f"**{before.precision.text()} → {after.precision.text()}** on the "
            f"{display.counted(gain.records, 'record')} you accepted, measured by {gain.folds}-fold cross-validation "
            "(each record tagged by a tagger trained on the gold set and the other folds, never on itself; "
            f"brackets: Wilson 95% intervals). Trained in {gain.seconds:.0f} s."
        )
        st.dataframe(retrain_table(gain), hide_index=True, key=_key("retrain_table"))
    kept = session.guarded(lambda: kept_retrained(fp))
    in_use = params.get("tagger") == RETRAINED
    record = None if kept is None else kept[1]
    same = record is not None and gain is not None and record.digest == hashlib.sha256(gain.model).hexdigest()
    state = (
        "in use: this method tags with it"
        if in_use and record is not None
        else "kept, not in use (tagger = packaged)"
        if record is not None
        else "none kept"
    )
    st.caption(
        f"Retrained tagger: {state}"
        + (f", trained on {display.counted(record.records, 'annotated record')}." if record is not None else ".")
        + " It stays on this machine, never in a bundle; a release records how many records it learnt from and "
        "its digest, and its replay needs it kept here."
    )
    param_key = f"param::{method}::tagger"
    flag = _key("tagger_changed")

    def use() -> None:
        assert gain is not None
        keep_retrained(fp, gain.model, gain.records)
        st.session_state[param_key] = RETRAINED
        st.session_state[flag] = True

    def stop() -> None:  # the model stays kept, unused, until replaced
        st.session_state[param_key] = PACKAGED
        st.session_state[flag] = True

    c_use, c_stop = st.columns(2)
    c_use.button(
        "Use the retrained tagger",
        key=_key("use_retrained"),
        on_click=use,
        disabled=gain is None or (same and in_use),
        type="primary",
        width="stretch",
    )
    c_stop.button(
        "Use the packaged tagger", key=_key("use_packaged"), on_click=stop, disabled=not in_use, width="stretch"
    )
    if st.session_state.pop(flag, False):
        st.rerun()  # the whole page: the method's settings changed


def _files(dataset: Dataset, det: Detector, annotations: Annotations | None) -> None:
    """Download the accepted records as span JSON or CoNLL, upload a file to import, forget them all."""
    c_json, c_conll, c_forget = st.columns(3)
    reviewed = [] if annotations is None else annotations.reviewed()
    stem = f"{dataset.name}.{det.name}.annotations"
    c_json.download_button(
        "Download span JSON",
        to_span_json(reviewed),
        file_name=f"{stem}.json",
        mime="application/json",
        on_click="ignore",
        disabled=not reviewed,
        key=_key("download_json"),
    )
    c_conll.download_button(
        "Download CoNLL",
        to_conll(reviewed),
        file_name=f"{stem}.conll",
        mime="text/plain",
        on_click="ignore",
        disabled=not reviewed,
        key=_key("download_conll"),
    )
    if c_forget.button("Forget every annotation", key=_key("forget"), disabled=not reviewed):
        delete_annotations(dataset.fingerprint, det.name)
        for key in [k for k in st.session_state if str(k).startswith(_key("work"))]:
            del st.session_state[key]
        st.session_state.pop(_key("imported", det.name), None)  # the same file may be imported again
        st.rerun(scope="fragment")
    note = st.session_state.pop(_key("imported_note"), None)
    if note:
        st.success(note)
    upload = st.file_uploader(
        "Import annotations (span JSON or CoNLL written here)",
        type=["json", "jsonl", "conll", "txt"],
        key=_key("upload", det.name),
    )
    if upload is None:
        return
    data = upload.getvalue()
    seen = _key("imported", det.name)
    digest = hashlib.sha256(data).hexdigest()
    if st.session_state.get(seen) == digest:
        return
    texts = dict(enumerate(dataset.texts.fillna("").astype(str).tolist()))

    def read() -> list[RecordAnnotation]:
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{upload.name} is not UTF-8 text; save it as UTF-8") from None
        return read_annotations(content, upload.name, texts, det.labels)

    records = session.guarded(read)
    if records is None:
        return
    import_records(dataset.fingerprint, det.name, records)
    for record in records:
        st.session_state.pop(_key("work", dataset.fingerprint[:12], det.name, record.record), None)
    st.session_state[seen] = digest
    st.session_state[_key("imported_note")] = (
        f"Imported {display.counted(len(records), 'annotated record')} from {display.md_escape(upload.name)}."
    )
    st.rerun(scope="fragment")
