"""The knob and everything that follows it, switched in the browser.

A page describes what it shows at each grid value of its sweep as a list of blocks (cards, figures, tables,
text); `knob_view` writes every grid value's blocks once to a file the browser fetches from the Streamlit
server (`views_file`), and the browser shows the view of the value the slider is at. A move draws a view built
before (or builds it once) and reports the value back, so Streamlit reruns only to record it: no figure, table
or card crosses the wire again. The widgets that change what the
views hold (measures, targets, the author shown) stay Streamlit widgets beside the view; changing one sends
new views.

The view is a Streamlit component without a build step (`dashboard/knob_view.html`, the component
protocol written by hand) served from a folder in the cache that also holds the installed plotly package's
own plotly.js, so nothing is fetched from another host.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
import streamlit.components.v1 as components

from engine.atomic import atomic_write_text
from engine.measures.attacks import worst_attack
from engine.measures.base import METRICS, MetricInfo, MetricResult, metric_info
from engine.paths import cache_dir
from engine.protect.base import Knob
from engine.workers import interacting, settle_heap

Block = dict[str, Any]
HTML = Path(__file__).with_suffix(".html")
MAX_TABLE_ROWS = 200
VIEWS_FILES_KEPT_DAYS = 7


# Blocks -------------------------------------------------------------------------------------------------------


def text(value: str, style: str = "body") -> Block:
    """Plain text (never parsed as Markdown or HTML); ``style`` is body, caption, heading, info, warning or
    success."""
    return {"t": "text", "text": str(value), "style": style}


def html(fragment: str) -> Block:
    """HTML the dashboard built with every data-derived piece escaped (`dashboard.display.sample_html`)."""
    return {"t": "html", "html": fragment}


def card(label: str, value: str, delta: str | None = None, tone: str = "off", note: str = "", help: str = "") -> dict:
    """One measure card: ``tone`` colours the delta (good, bad or off)."""
    return {"label": label, "value": value, "delta": delta, "tone": tone, "note": note, "help": help}


def worst_attack_card(metrics: Mapping[str, MetricResult], own: dict | None = None) -> dict | None:
    """The card of the release's worst applicable attack (`engine.measures.attacks.worst_attack`): "Worst attack:
    <name>", its value and interval, its chance level; what the intruder holds and assumes behind the "?" (None:
    no attack measured with a chance level). A page that has a card of its own for the measure gives it as
    ``own``: the worst attack's card is then that card, renamed, with the attack in words before its help, and
    the page shows no other card of it (`worst_attack_id`), so no attack is shown twice."""
    worst = worst_attack(metrics)
    if worst is None:
        return None
    info = metric_info(worst.id)
    why = (
        f"{worst.sentence()}\n\nOf the attacks measured, the one furthest beyond its own baseline. "
        f"{worst.scale_sentence()}."
    )
    if own is not None:
        return {**own, "label": f"Worst attack: {info.card}", "help": f"{why}\n\n{own['help']}"}
    return card(
        f"Worst attack: {info.card}",
        info.format(worst.value),
        note=interval_and_chance(info, worst.lo, worst.hi, worst.chance),
        help=f"{why} {info.meaning}",
    )


def worst_attack_id(metrics: Mapping[str, MetricResult]) -> str | None:
    """The id of the release's worst applicable attack, whose card comes first and alone (None: no attack)."""
    worst = worst_attack(metrics)
    return None if worst is None else worst.id


def interval_and_chance(info: MetricInfo, lo: float | None, hi: float | None, chance: float | None) -> str:
    """An attack's own 95% interval and chance level as every card shows them: "[lo–hi], chance c" (either part
    left out where not measured); for a risk corrected by its control (`Attack.baseline`), "[lo–hi], beyond
    control (chance c)": the chance level is not what it is read against."""
    parts = [] if lo is None or hi is None else [f"[{info.format(lo)}–{info.format(hi)}]"]
    if chance is not None:
        control = info.attack is not None and info.attack.baseline == "control"
        parts += [f"beyond control (chance {info.format(chance)})" if control else f"chance {info.format(chance)}"]
    return ", ".join(parts)


def every_page_cards(metrics: Mapping[str, MetricResult]) -> list[dict]:
    """The cards of the measured risks every method page shows (`Measure.on_every_page`: singling out,
    linkability, inference), in registry order: the value, its interval and chance level, the meaning behind
    the "?"; not the worst applicable attack's, which has its card first (`worst_attack_card`)."""
    out = []
    worst = worst_attack_id(metrics)
    for mid in [m for m in every_page_ids(metrics) if m != worst]:
        info, m = metric_info(mid), metrics[mid]
        assert m.value is not None
        note = interval_and_chance(info, m.lo, m.hi, m.chance)
        out.append(card(info.card, info.format(m.value), note=note, help=f"{info.label}: {info.meaning}"))
    return out


def every_page_ids(metrics: Mapping[str, MetricResult]) -> list[str]:
    """The measures of ``metrics`` (not the unprotected baselines) declared `Measure.on_every_page`."""
    return [mid for mid in METRICS if METRICS[mid].on_every_page and mid in metrics]


def cards(items: Sequence[dict], per_row: int | None = None) -> Block:
    """Cards side by side, ``per_row`` to a row (all in one row by default)."""
    return {"t": "cards", "cards": list(items), "per_row": max(1, per_row or len(items))}


def plot(figure: go.Figure, name: str = "") -> Block:
    """A Plotly figure; ``name`` says which it is (tests and the benchmark find it by that)."""
    return {"t": "plot", "fig": figure, "name": name}


def row(*cols: Sequence[Block], weights: Sequence[float] | None = None) -> Block:
    """Columns side by side, each a list of blocks."""
    return {"t": "row", "cols": [list(c) for c in cols], "weights": list(weights) if weights else None}


def details(summary: str, blocks: Sequence[Block]) -> Block:
    """A section the steward opens (its figures are drawn when it opens)."""
    return {"t": "details", "summary": summary, "blocks": list(blocks)}


def tabs(panels: dict[str, Sequence[Block]]) -> Block:
    """Tabs; the tab open stays open across knob moves."""
    return {"t": "tabs", "tabs": [{"label": k, "blocks": list(v)} for k, v in panels.items()]}


def columns(*cols: tuple[str, Sequence[str]]) -> Block:
    """Columns of plain text lines under a title, side by side (an author's texts before and after)."""
    return {"t": "columns", "columns": [{"title": t, "lines": [str(x) for x in lines]} for t, lines in cols]}


def _cell(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int | float):
        return v
    if hasattr(v, "item"):  # a numpy scalar
        return _cell(v.item())
    return str(v)


def table(frame: pd.DataFrame, bars: Sequence[str] = (), long: Sequence[str] = (), digits: int = 4) -> Block:
    """The first `MAX_TABLE_ROWS` rows of ``frame``; columns in ``bars`` (values in [0, 1]) drawn as bars,
    those in ``long`` given room for text; other numbers written as `column_numbers` writes them."""
    head = frame.head(MAX_TABLE_ROWS)
    cols = [str(c) for c in head.columns]
    numeric = [i for i, c in enumerate(head.columns) if pd.api.types.is_numeric_dtype(head[c])]
    written = {
        i: column_numbers(head.iloc[:, i], digits)
        for i in numeric
        if cols[i] not in bars and not pd.api.types.is_bool_dtype(head.iloc[:, i])
    }
    rows = []
    for r, rec in enumerate(head.itertuples(index=False)):
        rows.append([written[i][r] if i in written else _cell(v) for i, v in enumerate(rec)])
    return {
        "t": "table",
        "columns": cols,
        "rows": rows,
        "bars": [cols.index(c) for c in bars if c in cols],
        "numeric": numeric,
        "long": [cols.index(c) for c in long if c in cols],
    }


MAX_DECIMALS = 6


def column_numbers(values: pd.Series, digits: int = 4) -> list[str | None]:
    """A table column's numbers as text in one notation: whole numbers with thousands separators (1,234), others
    with the decimals that give the column's largest value ``digits`` significant digits (at most
    `MAX_DECIMALS`), so a column of posterior means reads 5.214, 0.031, 0.000 rather than 5.214, 3.1e-2, 6.3e-7;
    a missing value None."""
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    finite = x[np.isfinite(x)]
    if not len(finite) or np.all(finite == np.round(finite)):
        decimals = 0
    else:
        top = float(np.abs(finite).max())
        decimals = int(min(max(digits - 1 - math.floor(math.log10(top)), 0), MAX_DECIMALS))
    out: list[str | None] = []
    for v in x:
        if not np.isfinite(v):
            out.append(None)
            continue
        text = f"{v:,.{decimals}f}"
        out.append(text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text)
    return out


# The payload ---------------------------------------------------------------------------------------------------


def each_value(grid: Sequence[float], view_at: Callable[[float], list[Block]]) -> list[list[Block]]:
    """``view_at(g)`` for every grid value ``g``, with a progress bar while they are built (the first time a
    page's views are built; `dashboard.prepared` keeps them afterwards)."""
    area = st.empty()
    views = []
    for k, g in enumerate(grid):
        area.progress(k / len(grid), text=f"Preparing the view at each knob value: {k:,} of {len(grid):,}")
        views.append(view_at(g))
    area.empty()
    return views


def payload(
    knob: Knob, grid: Sequence[float], views: Sequence[Sequence[Block]], label: str = "", note: str = ""
) -> str:
    """Every grid value's view as one JSON text: figures (and their templates) stored once and referred to;
    ``note`` is a line shown under the knob at every value (where utility begins along it)."""
    figures: dict[str, Any] = {}
    templates: dict[str, Any] = {}
    template_ids: dict[str, int] = {}

    def intern(figure: go.Figure) -> str:
        spec = json.loads(pio.to_json(figure, validate=False))
        template = spec.get("layout", {}).pop("template", None)
        if template is not None:
            tjson = json.dumps(template, sort_keys=True)
            spec["tpl"] = template_ids.setdefault(tjson, len(template_ids))
            templates.setdefault(str(spec["tpl"]), template)
        ref = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
        figures.setdefault(ref, spec)
        return ref

    def walk(b: Block) -> Block:
        if b["t"] == "plot":
            return {"t": "plot", "ref": intern(b["fig"]), "name": b.get("name", "")}
        out = dict(b)
        if "blocks" in b:
            out["blocks"] = [walk(x) for x in b["blocks"]]
        if "cols" in b:
            out["cols"] = [[walk(x) for x in col] for col in b["cols"]]
        if "tabs" in b:
            out["tabs"] = [{"label": t["label"], "blocks": [walk(x) for x in t["blocks"]]} for t in b["tabs"]]
        return out

    more = "higher" if knob.more_privacy == "higher" else "lower"
    return json.dumps(
        {
            "label": label or f"{knob.label} ({knob.symbol}) · {more} = more privacy",
            "help": knob.help or "",
            "note": note,
            "values": [knob.format(g) for g in grid],
            "caption_prefix": f"Current knob: {knob.symbol} = ",
            "views": [[walk(b) for b in view] for view in views],
            "figures": figures,
            "templates": templates,
        },
        separators=(",", ":"),
        allow_nan=False,
        default=str,
    )


# The component -------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def component_folder() -> Path:
    """``<cache>/dashboard/knob_view-<hash>/``, where Streamlit serves the component from: the page, plotly.js
    and the views files (`views_file`). Views files not used for `VIEWS_FILES_KEPT_DAYS` are removed."""
    page = HTML.read_text(encoding="utf-8")
    tag = hashlib.sha1((page + plotly.__version__).encode()).hexdigest()[:12]
    folder = cache_dir() / "dashboard" / f"knob_view-{tag}"
    folder.mkdir(parents=True, exist_ok=True)
    old = time.time() - VIEWS_FILES_KEPT_DAYS * 86_400
    for f in folder.glob("views-*.json"):
        with contextlib.suppress(OSError):
            if f.stat().st_mtime < old:
                f.unlink()
    return folder


@functools.lru_cache(maxsize=64)
def _views_name(views_payload: str) -> str:
    return "views-" + hashlib.sha256(views_payload.encode()).hexdigest()[:24] + ".json"


_SETTLED_FOR: set[str] = set()
"""The views (by file name) this process has settled its heap after (`engine.workers.settle_heap`)."""


def views_file(views_payload: str) -> Path:
    """The file of the component's folder holding ``views_payload``, written once (atomically). The browser
    fetches it from the Streamlit server when the views change, so a move sends only the knob's position."""
    path = component_folder() / _views_name(views_payload)
    try:
        os.utime(path)  # in use: kept
    except FileNotFoundError:
        atomic_write_text(path, views_payload)
    return path


@functools.lru_cache(maxsize=1)
def _component() -> Any:
    """The component, served from `component_folder`: the page and plotly.js."""
    page = HTML.read_text(encoding="utf-8")
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    folder = component_folder()
    if not (folder / "plotly.min.js").exists():
        tmp = folder / "plotly.min.js.part"
        shutil.copyfile(plotly_js, tmp)
        tmp.replace(folder / "plotly.min.js")
    if not (folder / "index.html").exists():
        atomic_write_text(folder / "index.html", page)
    return components.declare_component("textsdc_knob_view", path=str(folder))


def knob_view(state_key: str, grid: Sequence[float], views_payload: str, default: float, page_run: int = 0) -> float:
    """The knob's slider with the views of ``views_payload`` (`payload`); returns the grid value it is at.

    ``st.session_state[state_key]`` holds the value: a page (or a button such as "Use this knob") may set it,
    and the slider moves there; a move in the browser is written back to it. It starts at the grid value
    nearest ``default``. A new ``page_run`` (the page ran, not just the knob) tells the slider again where it
    is: the page may have been left and opened again, and the browser has drawn the knob anew."""
    interacting()  # the knob's runs are a fragment's, not the app's: background sweeps pause for them too
    grid = [float(g) for g in grid]
    value = st.session_state.get(state_key)
    if not isinstance(value, int | float) or math.isnan(value):
        value = default
    at = min(range(len(grid)), key=lambda i: abs(grid[i] - float(value)))
    meta_key = f"{state_key}::view"
    meta = st.session_state.get(meta_key)
    if (
        not isinstance(meta, dict)
        or meta.get("shown") != at
        or meta.get("size") != len(grid)
        or meta.get("page_run") != page_run
    ):
        # Set from Python (or drawn anew): the slider is told where to be, under a new revision, so a value the
        # browser reported before is not taken for a move.
        revision = (meta or {}).get("revision", 0) + 1
        meta = {"revision": revision, "start": at, "shown": at, "size": len(grid), "page_run": page_run}
        st.session_state[meta_key] = meta
    name = _views_name(views_payload)
    if name not in _SETTLED_FOR:  # new views built: what the page holds now lives long (`settle_heap`)
        settle_heap()
        _SETTLED_FOR.add(name)
    reported = _component()(
        views=views_file(views_payload).name, start=meta["start"], revision=meta["revision"], key=f"{state_key}::slider"
    )
    if (
        isinstance(reported, dict)
        and reported.get("revision") == meta["revision"]
        and isinstance(reported.get("index"), int)
        and 0 <= reported["index"] < len(grid)
        and reported["index"] != meta["shown"]
    ):
        at = reported["index"]
        st.session_state[meta_key] = {**meta, "shown": at}
    st.session_state[state_key] = grid[at]
    return grid[at]
