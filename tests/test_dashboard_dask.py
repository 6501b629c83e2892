"""The dashboard's sweeps on a Dask cluster, as the steward chooses in the sidebar (`dashboard.sweep_backend`):
the same first view as on this machine's processes, the server's local cluster on 127.0.0.1 only, a scheduler
that cannot be reached said in place with nothing the steward set lost, and Dask missing said with what to
install."""

from __future__ import annotations

import os
import re
import time

import pytest
import streamlit as st

from dashboard import compute, session, sweep_backend
from engine import backends
from tests.contract_data import contract_dataset
from tests.test_dashboard import go, start, view_cards

UNREACHABLE = "tcp://127.0.0.1:9"  # the discard port: nothing listens on it here


@pytest.fixture
def contract_file(tmp_path):
    """The contract data as a file with its schema beside it (a small dataset every method fits quickly)."""
    dataset = contract_dataset()
    dataset.frame.to_csv(tmp_path / "contract.csv", index=False)
    assert dataset.external is not None
    dataset.external.to_csv(tmp_path / "contract-external.csv", index=False)
    (tmp_path / "contract.schema.toml").write_text(
        dataset.schema.to_toml() + '\n[external]\nfile = "contract-external.csv"\n'
    )
    return tmp_path / "contract.csv"


@pytest.fixture
def server_cluster_closed():
    """The server's local cluster is closed after the test (as at the server's exit)."""
    yield
    backends.close_server_cluster()


def plain(markdown: str) -> str:
    """An alert's text as the steward reads it (Markdown's escapes taken off)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def errors(elements) -> list[str]:
    return [plain(e.value) for e in elements]


def choose_dask(at, workers: int | None = None, scheduler: str | None = None):
    at.radio(key=sweep_backend.RUN_ON_KEY).set_value(sweep_backend.DASK).run()
    if workers is not None:
        at.number_input(key=sweep_backend.WORKERS_KEY).set_value(workers).run()
    if scheduler is not None:
        at.text_input(key=sweep_backend.SCHEDULER_KEY).set_value(scheduler).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(results: dict) -> dict:
    """Each measure's value and interval."""
    return {k: (r.value, r.lo, r.hi) for k, r in results.items()}


def first_view(at) -> tuple[dict, object]:
    """The cards of the Protect page's first view and the sweep behind them."""
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return view_cards(at), at.session_state[session.CHOICE].sweep


@pytest.mark.slow
def test_a_sweep_on_a_local_dask_cluster_shows_the_first_view_of_a_sweep_in_processes(
    contract_file, monkeypatch, tmp_path, server_cluster_closed
):
    pytest.importorskip("distributed")
    backends_used = []
    original = compute.run_sweep
    monkeypatch.setattr(
        compute, "run_sweep", lambda *a, **k: backends_used.append((k["backend"], k["scheduler"])) or original(*a, **k)
    )
    at = go(choose_dask(start(["--data", str(contract_file)]), workers=2), "protect")
    on_dask, dask_sweep = first_view(at)
    assert len(backends_used) == 1 and backends_used[0][0] == "dask"
    assert backends_used[0][1].startswith("tcp://127.0.0.1:")  # the server's own cluster, on this machine only
    assert len(backends._SERVER["cluster"].scheduler_info["workers"]) == 2

    # The same page swept again in processes, nothing kept from the Dask run (a restart, a cache folder of its own).
    st.cache_resource.clear()
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(tmp_path / "fresh-cache"))
    at = go(start(["--data", str(contract_file)]), "protect")
    in_processes, process_sweep = first_view(at)
    assert [b for b, _ in backends_used] == ["dask", "local"]
    assert on_dask == in_processes
    assert dask_sweep.rows.equals(process_sweep.rows) and dask_sweep.summary.equals(process_sweep.summary)
    assert figures(dask_sweep.baseline) == figures(process_sweep.baseline)

    # The cache key does not name the backend: choosing Dask again finds the sweep the processes made.
    at = go(choose_dask(at, workers=2), "protect")
    assert first_view(at)[1] is process_sweep and len(backends_used) == 2


def test_an_unreachable_scheduler_is_said_in_the_sidebar_and_on_the_page_and_kept(contract_file, monkeypatch):
    pytest.importorskip("distributed")
    fitted = []
    monkeypatch.setattr(compute, "get_fitted", lambda *a, **k: fitted.append(1))
    at = choose_dask(start(["--data", str(contract_file)]), scheduler=UNREACHABLE)
    at.session_state[session.SEED_KEY] = 515_151  # a sweep no other test made (a swept one would be shown)
    said = errors(at.sidebar.error)
    assert len(said) == 1 and f"Could not reach the Dask scheduler at {UNREACHABLE}" in said[0]
    go(at, "protect")
    assert any(f"Could not reach the Dask scheduler at {UNREACHABLE}" in e for e in errors(at.main.error))
    assert not fitted  # said before anything is fitted
    # Back to processes and to Dask again: the address and the choice are still there.
    at.radio(key=sweep_backend.RUN_ON_KEY).set_value(sweep_backend.PROCESSES).run()
    assert at.text_input(key=sweep_backend.SCHEDULER_KEY).value == UNREACHABLE
    at.radio(key=sweep_backend.RUN_ON_KEY).set_value(sweep_backend.DASK).run()
    assert at.text_input(key=sweep_backend.SCHEDULER_KEY).value == UNREACHABLE
    assert at.session_state[session.METHOD_KEY] == "redact" and at.session_state[session.SEED_KEY] == 515_151


def test_a_malformed_scheduler_address_says_what_is_accepted():
    at = choose_dask(start(), scheduler="localhost:8786")
    said = errors(at.sidebar.error)
    assert len(said) == 1 and "tcp://HOST:PORT" in said[0] and "'localhost:8786'" in said[0]
    for bad in ("tcp://host", "tcp://host:0", "tcp://host:70000", "http://host:8786", "tcp://:8786"):
        with pytest.raises(backends.ConfigError, match="tcp://HOST:PORT"):
            backends.scheduler_endpoint(bad)
    assert backends.scheduler_endpoint("tcp://10.0.0.5:8786") == ("10.0.0.5", 8786)
    assert backends.scheduler_endpoint("tcp://[::1]:8786") == ("::1", 8786)


def test_without_dask_the_choice_says_what_to_install_and_sweeps_run_in_processes(monkeypatch):
    monkeypatch.setattr(sweep_backend, "dask_installed", lambda: False)
    at = choose_dask(start())
    assert any("pip install 'textsdc[dask]'" in w.value for w in at.sidebar.warning)
    assert at.number_input(key=sweep_backend.WORKERS_KEY).disabled


def test_the_choice_gives_run_sweep_its_backend_and_defaults_to_the_machines_cores(monkeypatch):
    monkeypatch.setattr(sweep_backend, "server_cluster", lambda workers: f"tcp://127.0.0.1:{40000 + workers}")
    assert sweep_backend.RunOn().sweep_arguments(3) == {"backend": "local", "scheduler": None, "jobs": 3}
    on_dask = sweep_backend.RunOn(sweep_backend.DASK, 2)
    assert on_dask.sweep_arguments(3) == {"backend": "dask", "scheduler": "tcp://127.0.0.1:40002", "jobs": 2}
    there = sweep_backend.RunOn(sweep_backend.DASK, 2, "tcp://10.0.0.5:8786")
    assert there.sweep_arguments(3)["scheduler"] == "tcp://10.0.0.5:8786"
    at = start()
    assert at.number_input(key=sweep_backend.WORKERS_KEY).value == min(os.cpu_count() or 1, sweep_backend.MAX_WORKERS)
    assert at.radio(key=sweep_backend.RUN_ON_KEY).value == sweep_backend.PROCESSES


def listening(pids: set[int]) -> set[tuple[str, int]]:
    """The TCP addresses processes ``pids`` listen on."""
    psutil = pytest.importorskip("psutil")
    return {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.pid in pids
    }


@pytest.mark.slow
def test_the_servers_cluster_listens_on_localhost_only_starts_once_and_scales(server_cluster_closed):
    pytest.importorskip("distributed")
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    before = listening({me.pid})
    address = backends.server_cluster(1)
    cluster = backends._SERVER["cluster"]
    assert address.startswith("tcp://127.0.0.1:")
    assert backends.server_cluster(2) == address and backends._SERVER["cluster"] is cluster
    cluster.wait_for_workers(2)
    workers = cluster.scheduler_info["workers"]
    assert len(workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in workers)
    # Every port the scheduler (here), the nannies and the workers (child processes) listen on is on 127.0.0.1:
    # the workers' own addresses and Dask's web routes (its health and metrics; no dashboard pages).
    ports = listening({me.pid} | {p.pid for p in me.children(recursive=True)}) - before
    assert len(ports) >= 1 + 2 * 2 and {ip for ip, _ in ports} == {"127.0.0.1"}, ports
    backends.close_server_cluster()
    assert "cluster" not in backends._SERVER


def test_a_background_sweep_runs_where_the_steward_chose_when_it_was_asked(monkeypatch):
    """The Plans page's lines swept in a background thread (which has no session) go where the steward chose."""
    asked = sweep_backend.RunOn(sweep_backend.DASK, 3, "tcp://10.0.0.5:8786")
    monkeypatch.setattr(compute, "chosen", lambda: asked)
    seen = []
    monkeypatch.setattr(compute, "get_sweep", lambda *a, **k: seen.append(a[7:]) or "swept")
    dataset, deadline = contract_dataset(), time.monotonic() + 60
    while (got := compute.sweep_later(dataset, "md", 1, 424_242)) is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert got == "swept" and seen == [(asked,)]
