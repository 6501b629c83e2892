"""Where the dashboard's sweeps run, as the steward chose in the sidebar: this machine's worker processes (joblib's,
as `textsdc sweep` runs them) or a Dask cluster, the server's own local one (listening on 127.0.0.1 only, started
once and closed when the server exits, `engine.backends.server_cluster`) or an existing one at a scheduler
address. The results are the same either way (the same tasks with the same seeds), so a sweep's cache key does
not name where it ran: a sweep made on one is found by the other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard import display
from engine.backends import INSTALL_DASK, check_reachable, dask_installed, scheduler_endpoint, server_cluster
from engine.errors import ConfigError

PROCESSES = "processes"
DASK = "dask"
CHOICES = {PROCESSES: "this machine (processes)", DASK: "a local Dask cluster"}

RUN_ON_KEY = "sweep_run_on"
WORKERS_KEY = "sweep_dask_workers"
SCHEDULER_KEY = "sweep_dask_scheduler"
_REACHED_KEY = "sweep_dask_reached"
"""The scheduler address last checked and what the check said (None: reached), so it is checked once."""

MAX_WORKERS = 64


def default_workers() -> int:
    """The machine's cores: the local cluster's workers unless the steward says otherwise."""
    return os.cpu_count() or 1


@dataclass(frozen=True)
class RunOn:
    """Where a sweep runs: ``kind`` `PROCESSES` or `DASK`, the local cluster's ``workers``, and the ``scheduler``
    address of an existing cluster (None: the server's local one)."""

    kind: str = PROCESSES
    workers: int = 1
    scheduler: str | None = None

    def sweep_arguments(self, local_jobs: int) -> dict:
        """`engine.sweep.run_sweep`'s ``backend``, ``scheduler`` and ``jobs`` for this choice; ``local_jobs`` are
        the processes of this machine a sweep takes (a Dask sweep takes every worker of its cluster). The server's
        local cluster is started (or scaled to ``workers``) here."""
        if self.kind == PROCESSES:
            return {"backend": "local", "scheduler": None, "jobs": local_jobs}
        address = self.scheduler or server_cluster(self.workers)
        return {"backend": "dask", "scheduler": address, "jobs": self.workers}

    def check(self) -> None:
        """ConfigError when this choice's scheduler is malformed or cannot be reached: said before anything is
        fitted for a sweep that could not run."""
        if self.kind == DASK and self.scheduler:
            check_reachable(self.scheduler)

    def describe(self) -> str:
        """Where the sweeps run, in words (the progress caption)."""
        if self.kind == PROCESSES:
            return "on this machine's processes"
        if self.scheduler:
            return f"on the Dask cluster at {self.scheduler}"
        return f"on a local Dask cluster of {self.workers} worker{'s' if self.workers != 1 else ''}"


def chosen() -> RunOn:
    """The steward's choice in this session (outside a page run, as in a background thread or a script: this
    machine's processes). Dask chosen where it is not installed runs on the processes (the sidebar says what to
    install); a scheduler address is passed on as given, and a bad one stops the sweep with its message."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return RunOn()
    ss = st.session_state
    if ss.get(RUN_ON_KEY, PROCESSES) != DASK or not dask_installed():
        return RunOn()
    address = str(ss.get(SCHEDULER_KEY) or "").strip()
    return RunOn(DASK, int(ss.get(WORKERS_KEY, default_workers())), address or None)


def scheduler_problem(address: str) -> str | None:
    """What is wrong with a scheduler address the steward typed (its form, or that nothing answers there),
    checked once per address in a session; None when it is well formed and answers."""
    ss = st.session_state
    last = ss.get(_REACHED_KEY)
    if last is not None and last[0] == address:
        return last[1]
    try:
        scheduler_endpoint(address)
        check_reachable(address)
        problem = None
    except ConfigError as exc:
        problem = str(exc)
    ss[_REACHED_KEY] = (address, problem)
    return problem


def backend_setting() -> None:
    """The sidebar's "Run sweeps on" setting: processes or Dask, the local cluster's workers and an optional
    scheduler of an existing cluster. Every widget is drawn on every run (disabled where it does not apply), so
    nothing the steward set is lost when she switches back and forth."""
    installed = dask_installed()
    with st.expander("Sweeps", expanded=st.session_state.get(RUN_ON_KEY) == DASK):
        on = st.radio(
            "Run sweeps on",
            list(CHOICES),
            format_func=CHOICES.__getitem__,
            key=RUN_ON_KEY,
            help="Where a page's sweep releases and measures its knob values. The results are the same on either; "
            "a cluster of several workers sweeps real-size data faster. The local cluster runs on this machine "
            "only (127.0.0.1).",
        )
        dask = on == DASK
        if dask and not installed:
            st.warning(f"Dask is not installed here: `{INSTALL_DASK}`. Sweeps run on this machine's processes.")
        if WORKERS_KEY not in st.session_state:
            st.session_state[WORKERS_KEY] = min(default_workers(), MAX_WORKERS)
        st.number_input(
            "Dask workers",
            min_value=1,
            max_value=MAX_WORKERS,
            step=1,
            key=WORKERS_KEY,
            disabled=not (dask and installed),
            help="Single-threaded worker processes of the local cluster (default: the machine's cores).",
        )
        address = st.text_input(
            "Scheduler of an existing cluster (optional)",
            key=SCHEDULER_KEY,
            placeholder="tcp://HOST:8786",
            disabled=not (dask and installed),
            help="The address a running Dask scheduler prints; empty: the local cluster above. Its workers must "
            "have textsdc installed, and the data goes to them.",
        ).strip()
        if dask and installed and address:
            problem = scheduler_problem(address)
            if problem is not None:
                st.error(display.error_text(problem))
