"""A large table's first view: the Protect page sweeps a seeded sample of it first and shows that, saying so,
while the full sweep runs in the background (`compute.sweep_later`, through `engine.sweep.run_sweep` as every
dashboard sweep); when the full sweep is done the page shows it instead and says that too.

Pin and Export always name the whole dataset: they read the full sweep (`compute.get_sweep`), so on a sample's
view they wait for it; no sample's numbers are pinned or exported as the whole's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from dashboard import compute
from dashboard.caching import Slot
from dashboard.display import counted
from engine.data.dataset import Dataset
from engine.data.subsample import author_sample
from engine.measures.evaluate import MeasureSettings
from engine.results import SweepResult

SAMPLE_FIRST_RECORDS = int(os.environ.get("TEXTSDC_SAMPLE_FIRST", "20000"))
"""From this many records on, the Protect page first shows the sweep of a sample of about this many (whole
authors, `engine.data.subsample.author_sample`); the environment variable ``TEXTSDC_SAMPLE_FIRST`` sets it. The
redaction's first view of 200,000 airline-style posts at 20,000 took 168 s in a trial on 2 cores beside other jobs
(benchmarks/results_scale_page.json; issue 53 asks for 2 minutes): a smaller sample is the lever."""
POLL_SECONDS = 5.0  # how often a sample's view looks whether the full sweep is done


@dataclass(frozen=True)
class Shown:
    """What the page shows: the ``dataset`` it draws (the whole or its sample) and its ``sweep``; ``whole`` is the
    dataset the steward loaded, which Pin and Export name."""

    whole: Dataset
    dataset: Dataset
    sweep: SweepResult

    @property
    def is_sample(self) -> bool:
        return self.dataset is not self.whole


@st.cache_resource(show_spinner=False, max_entries=4)
def _sample_slot(fingerprint: str, records: int, seed: int) -> Slot:
    return Slot()


def sample_of(dataset: Dataset, seed: int) -> Dataset:
    """The page's sample of ``dataset`` (made once per dataset and seed in this process)."""
    slot = _sample_slot(dataset.fingerprint, SAMPLE_FIRST_RECORDS, int(seed))
    return slot.get(lambda: author_sample(dataset, SAMPLE_FIRST_RECORDS, int(seed)))


def sweep_shown(
    dataset: Dataset, method: str, replicates: int, seed: int, params: dict, options: MeasureSettings
) -> Shown | None:
    """The sweep the page shows, with a progress bar while it is made: of the whole ``dataset`` when it is small
    or its full sweep is done (in this process or on disk); else of its sample, with the full sweep asked for in
    the background. None when the sweep failed (the page has said why)."""
    if dataset.n_records <= SAMPLE_FIRST_RECORDS:
        sweep = compute.sweep_with_progress(dataset, method, replicates, seed, params, options)
        return None if sweep is None else Shown(dataset, dataset, sweep)
    if compute.sweep_ready(dataset, method, replicates, seed, params, options):
        return Shown(
            dataset, dataset, compute.get_sweep(dataset, method, replicates, seed, params=params, options=options)
        )
    sample = sample_of(dataset, seed)
    sweep = compute.sweep_with_progress(sample, method, replicates, seed, params, options)
    if sweep is None:
        return None
    # asked for once the sample's is made, so the two do not share the cores the first view waits for
    # the whole table's fit, measures and sweep in the background thread alone: held once, not again in workers
    full = compute.sweep_later(dataset, method, replicates, seed, params, options, held_once=True)
    return Shown(dataset, sample, sweep) if full is None else Shown(dataset, dataset, full)


def note(shown: Shown, method: str, replicates: int, seed: int, params: dict, options: MeasureSettings) -> None:
    """Above the views: which data they show. On a sample's view a fragment polls the background sweep, says how
    far it has got and reruns the page when it is done."""
    n = shown.whole.n_records
    if not shown.is_sample:
        if n > SAMPLE_FIRST_RECORDS:
            st.success(
                f"Showing the sweep of all {counted(n, 'record')}: the full sweep is done and has replaced the first "
                f"view, which showed a sample of about {SAMPLE_FIRST_RECORDS:,}.",
                icon=":material/check_circle:",
            )
        return
    _sample_note(shown, method, replicates, seed, params, options)


@st.fragment(run_every=POLL_SECONDS)
def _sample_note(shown: Shown, method: str, replicates: int, seed: int, params: dict, options: MeasureSettings) -> None:
    whole = shown.whole
    if not compute.in_background(whole, method, replicates, seed, params, options):
        st.rerun()  # done (or failed: the page's next run says why)
    at = compute.background_progress(whole, method, replicates, seed, params, options)
    if at is None:
        how_far = "it waits to start"
    else:
        done, total, what = at
        what = what or "working"
        how_far = f"{what}: {done:,} of {total:,} done" if total > 1 else f"{what}…"
    st.info(
        f"Showing a sweep of a {shown.dataset.n_records:,}-record sample of {whole.n_records:,} (whole authors drawn "
        f"at random with seed {seed}, every author the intruder holds texts of among them). The full sweep is "
        f"running in the background — {how_far}; the page shows it when it is done. Pin and Export use the full "
        "sweep and wait for it.",
        icon=":material/hourglass_top:",
    )
