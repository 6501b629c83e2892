"""`textsdc sweep --backend dask`: the grid × replicates on a Dask cluster give the results.json of a local run."""

from __future__ import annotations

import pytest

from engine.cli import main
from tests.test_bad_input import one_line_error

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """A cluster of two single-threaded worker processes, as a steward's cluster would be (its own processes)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as c:
        yield c


def _sweep(capsys, tiny_files, out, *extra: str) -> tuple[int, str]:
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    argv = ["sweep", *data, "--method", "cart", "--fields", "mood", "--grid", "0.001,0.05"]
    code = main([*argv, "--replicates", "3", "--seed", "1", "--out", str(out), *extra])
    return code, capsys.readouterr().err


@pytest.mark.slow
def test_a_sweep_on_a_dask_cluster_writes_the_results_of_a_local_run(cluster, tiny_files, tmp_path, capsys):
    local, remote = tmp_path / "local.json", tmp_path / "dask.json"
    code, err = _sweep(capsys, tiny_files, local, "--jobs", "1")
    assert code == 0, err
    with distributed.Client(cluster.scheduler_address) as client, distributed.get_task_stream(client) as stream:
        code, err = _sweep(capsys, tiny_files, remote, "--backend", "dask", "--scheduler", cluster.scheduler_address)
    assert code == 0, err
    assert remote.read_bytes() == local.read_bytes()
    # The cluster's workers ran the releases (the grid × replicates is 6 tasks, in joblib's batches).
    assert len(stream.data) >= 1


def test_a_scheduler_without_the_dask_backend_is_refused(tiny_files, tmp_path, capsys):
    code, err = _sweep(capsys, tiny_files, tmp_path / "r.json", "--scheduler", "tcp://127.0.0.1:8786")
    assert one_line_error(code, err.split("\r")[-1]) and "--backend dask" in err


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line_naming_the_address(tiny_files, tmp_path, capsys):
    code, err = _sweep(capsys, tiny_files, tmp_path / "r.json", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9")
    err = err.split("\r")[-1]
    assert one_line_error(code, err) and "could not reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert not (tmp_path / "r.json").exists()


def test_a_scheduler_address_not_of_the_form_tcp_host_port_is_refused_before_anything_runs(
    tiny_files, tmp_path, capsys
):
    code, err = _sweep(capsys, tiny_files, tmp_path / "r.json", "--backend", "dask", "--scheduler", "localhost:8786")
    err = err.split("\r")[-1]
    assert one_line_error(code, err) and "tcp://HOST:PORT" in err and "'localhost:8786'" in err
    assert not (tmp_path / "r.json").exists()
