"""Widgets built from declarations: a method's parameters and the measures' settings (`engine.protect.params.Param`),
so a new method or measure gets its settings on its page without a line of dashboard code."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import display
from engine.data.dataset import Dataset
from engine.data.levels import levels_by_frequency
from engine.errors import TextsdcError
from engine.measures.base import Target
from engine.measures.intruders import INTRUDER, intruder
from engine.measures.registry import setting_parameters
from engine.measures.risk.background_attack import BACKGROUND
from engine.protect import METHODS, schema_parameters
from engine.protect.params import Param

NONE = "(none)"
JS_SAFE = 2**53 - 1


def _key(method: str, p: Param, dataset: Dataset, from_schema: bool = False) -> str:
    # Field choices depend on the dataset, and so does a setting its schema gives; other settings carry over
    # from one dataset to the next.
    suffix = f"::{dataset.fingerprint[:12]}" if p.fields or from_schema else ""
    return f"param::{method}::{p.name}{suffix}"


def _field_options(p: Param, dataset: Dataset, kinds: tuple[str, ...]) -> list[str]:
    allowed = set(p.fields) & set(kinds) if p.synthesized and kinds else set(p.fields)
    return [f.name for f in dataset.schema.fields if f.kind in allowed]


def _suggested(p: Param, dataset: Dataset, options: list[str], kinds: tuple[str, ...]) -> list[str]:
    """What a field widget starts with: the sensitive fields it may synthesize, or — on a page that synthesizes
    counts and amounts only — the key fields as predictors (synthpop's and Guo & Hu's set-up; elsewhere the
    method's own default, which for text-based synthesis is the text alone)."""
    if p.suggest == "sensitive":
        return [f for f in options if dataset.schema.field(f).role == "sensitive"]
    if p.suggest == "key" and kinds and "categorical" not in kinds:
        return [f for f in options if dataset.schema.field(f).role == "key"]
    return []


def _field_widget(p: Param, dataset: Dataset, key: str, kinds: tuple[str, ...]) -> Any:
    options = _field_options(p, dataset, kinds)
    suggested = _suggested(p, dataset, options, kinds)
    help_text = _help(p)
    if p.many:
        stored = st.session_state.get(key)
        if not isinstance(stored, list) or any(f not in options for f in stored):
            st.session_state[key] = suggested or ([] if p.default is None or not p.synthesized else options[:1])
        chosen = st.multiselect(p.title, options, key=key, persist_state="session", help=help_text)
        return list(chosen) if chosen else None
    choices = [NONE, *options]
    if st.session_state.get(key) not in choices:
        st.session_state[key] = suggested[0] if suggested else NONE
    unset = _unset_label(p)
    value = st.selectbox(
        p.title,
        choices,
        key=key,
        persist_state="session",
        help=help_text,
        format_func=lambda v: unset if v == NONE else v,
    )
    return None if value == NONE else value


def _unset_label(p: Param) -> str:
    """How a field widget names "no field chosen": the method's default where its help states one (the swap's
    "(default: the first sensitive categorical field, else the document column)"), else "(none)"."""
    stated = re.search(r"\(default: ([^)]*)\)", p.help)
    return f"(default: {stated.group(1)})" if stated else NONE


def _text_list(p: Param, key: str) -> Any:
    st.session_state.setdefault(key, ", ".join(map(str, p.default or ())))
    text = st.text_input(p.title + " (separated by commas)", key=key, persist_state="session", help=_help(p))
    try:
        return list(p.parse(text)) if text.strip() else []
    except TextsdcError as exc:
        st.error(display.error_text(exc))
        return p.default


def _choice_list(p: Param, key: str) -> Any:
    """A list of declared choices (entity categories, ...): a multiselect of them."""
    if not isinstance(st.session_state.get(key), list) or any(v not in p.choices for v in st.session_state[key]):
        st.session_state[key] = list(p.default or ())
    return list(st.multiselect(p.title, list(p.choices), key=key, persist_state="session", help=_help(p)))


def _help(p: Param) -> str:
    return p.help[:1].upper() + p.help[1:]


def _big_number(p: Param, key: str) -> Any:
    """A number whose range the browser cannot hold exactly (beyond 2^53, e.g. a population of 1e20): typed as
    text and checked by the declaration, the message in place."""
    st.session_state.setdefault(key, f"{p.default:g}")
    text = st.text_input(p.title, key=key, persist_state="session", help=f"{_help(p)}. Accepted: {p.accepted}.")
    try:
        return p.coerce(p.parse(text)) if text.strip() else p.default
    except TextsdcError as exc:
        st.error(display.error_text(exc))
        return p.default


def _levels_widget(p: Param, dataset: Dataset, key: str, synthesized: list[str]) -> Any:
    """FIELD=LEVEL of the fields a release synthesizes (each but its most frequent level, the reference)."""
    fields = synthesized or [f.name for f in dataset.schema.fields if f.kind in p.fields and f.role == "sensitive"]
    choices = [NONE] + [f"{f}={v}" for f in fields for v in levels_by_frequency(dataset.frame[f])[1:]]
    if st.session_state.get(key) not in choices:
        st.session_state[key] = NONE
    value = st.selectbox(
        p.title, choices, key=key, help=_help(p), format_func=lambda v: "(default)" if v == NONE else v
    )
    return None if value == NONE else value


def _widget(p: Param, dataset: Dataset, key: str, kinds: tuple[str, ...]) -> Any:
    if p.fields:
        return _field_widget(p, dataset, key, kinds)
    if p.many and p.choices:
        return _choice_list(p, key)
    if p.many:
        return _text_list(p, key)
    if p.type is bool:
        st.session_state.setdefault(key, bool(p.default))
        return st.checkbox(p.title, key=key, persist_state="session", help=_help(p))
    if p.choices:
        if st.session_state.get(key) not in p.choices:
            st.session_state[key] = p.default
        names = dict(zip(p.choices, p.choice_labels))
        return st.selectbox(
            p.title,
            list(p.choices),
            key=key,
            persist_state="session",
            help=_help(p),
            format_func=lambda v: names.get(v, str(v)),
        )
    if p.type in (int, float):
        if p.default is None:
            text = st.text_input(p.title + " (empty: from the data)", key=key, persist_state="session", help=_help(p))
            try:
                return p.parse(text) if text.strip() else None
            except TextsdcError as exc:
                st.error(display.error_text(exc))
                return None
        if p.type is float and max(abs(p.default), abs(p.high or 0.0)) > JS_SAFE:
            return _big_number(p, key)
        st.session_state.setdefault(key, p.default if p.quick is None else p.quick)
        # The browser holds numbers as doubles: bounds beyond ±(2^53 − 1) (a 64-bit seed) are clipped to it.
        low = max(p.low, -JS_SAFE) if p.low is not None else None
        high = min(p.high, JS_SAFE) if p.high is not None else None
        return st.number_input(
            p.title,
            min_value=p.type(low) if low is not None else None,
            max_value=p.type(high) if high is not None else None,
            step=1 if p.type is int else None,
            format=None if p.type is int else "%g",
            key=key,
            persist_state="session",
            help=_help(p),
        )
    st.session_state.setdefault(key, p.default or "")
    text = st.text_input(p.title, key=key, persist_state="session", help=_help(p))
    return text.strip() or p.default


def parameter_widgets(
    method: str, dataset: Dataset, kinds: tuple[str, ...] = (), folded: bool = False
) -> dict[str, Any]:
    """One widget per declared parameter of ``method`` (expert ones in an expander, the others too when
    ``folded``: a page that keeps its knob in sight above the fold), starting from the settings the data's schema
    gives the method ([methods.METHOD]) where it gives them; returns the values that differ from the method's
    own defaults, as keywords for `get_protector`. ``kinds`` limits the fields a page offers to synthesize (its
    own kinds)."""
    declared = METHODS[method].parameters
    try:
        from_schema = schema_parameters(dataset.schema, method)
    except TextsdcError as exc:
        st.error(f"{display.error_text(exc)} The method's own defaults are used instead.")
        from_schema = {}
    params = tuple(replace(p, default=from_schema[p.name]) if p.name in from_schema else p for p in declared)
    values: dict[str, Any] = {}
    for group in ([p for p in params if not p.expert], [p for p in params if p.expert]):
        if not group:
            continue
        container: DeltaGenerator
        if group[0].expert:
            container = st.expander("Expert settings of the method")
        else:
            container = st.expander("Settings of the method") if folded else st.container()
        with container:
            for p in group:
                key = _key(method, p, dataset, p.name in from_schema)
                values[p.name] = _widget(p, dataset, key, kinds)
    return {k: v for k, v in values.items() if v is not None and not _is_default(declared, k, v)}


def setting_widgets(targets: tuple[Target, ...], dataset: Dataset, synthesized: Sequence[str] = ()) -> dict[str, Any]:
    """One widget per setting the measures of ``targets`` declare (`setting_parameters`), but the intruder
    (`intruder_picker`, shown apart); returns the values set (None for "from the data"), for
    `MeasureSettings.from_values`. A FIELD=LEVEL setting offers the levels of the ``synthesized`` fields."""
    out: dict[str, Any] = {}
    for p in setting_parameters(targets):
        if p.name in (INTRUDER.name, BACKGROUND.name):  # the background is declared on the Data page
            continue
        key = _key("measures", p, dataset)
        out[p.name] = (
            _levels_widget(p, dataset, key, list(synthesized)) if p.field_levels else _widget(p, dataset, key, ())
        )
    return out


def intruder_picker(dataset: Dataset) -> str:
    """The attacker preset every page's measures assume (one setting shared by the pages), with what it means."""
    name = str(_widget(INTRUDER, dataset, _key("measures", INTRUDER, dataset), ()))
    st.caption(
        intruder(name).describe() + " Every risk measure assumes this intruder; each says how in its meaning "
        "(an attack she cannot make, without texts or known fields, is listed as not measured)."
    )
    return name


def _is_default(params: tuple[Param, ...], name: str, value: Any) -> bool:
    """Whether ``value`` is the parameter's default (a list and a tuple of the same values are the same)."""
    p = next(q for q in params if q.name == name)
    default = tuple(p.default) if isinstance(p.default, (list, tuple)) else p.default
    return (tuple(value) if isinstance(value, (list, tuple)) else value) == default
