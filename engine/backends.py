"""Where a sweep's releases and measures run: joblib's processes on this machine (``local``) or a Dask cluster
(``dask``) through joblib's Dask backend, the same tasks and the same seeds either way.

A steward points a sweep at a running cluster with ``--backend dask --scheduler tcp://HOST:8786`` (the address
its scheduler prints); without an address a local Dask cluster of ``--jobs`` single-threaded worker processes is
started for the run and closed after it. The fitted model and the Evaluator are broadcast to every worker once
(joblib's ``scatter``), not sent with every task. Ray would run through joblib the same way
(``ray.util.joblib.register_ray``) and is not offered: it is one more large dependency for no new capability.
"""

from __future__ import annotations

import atexit
import os
import re
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engine.errors import ConfigError

BACKENDS = ("local", "dask")
CONNECT_TIMEOUT = "10s"
REACH_SECONDS = 5.0
"""How long a scheduler's port may take to accept a connection before it is called unreachable."""
INSTALL_DASK = "pip install 'textsdc[dask]'"
LOCALHOST = "127.0.0.1"

_ADDRESS = re.compile(r"tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")


def dask_installed() -> bool:
    """Whether Dask's distributed scheduler can be imported here (the ``dask`` extra)."""
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def scheduler_endpoint(address: str) -> tuple[str, int]:
    """The host and port of a scheduler address ``tcp://HOST:PORT``; ConfigError naming what is accepted."""
    match = _ADDRESS.fullmatch(address.strip())
    port = int(match["port"]) if match else 0
    if match is None or not 0 < port < 65536:
        raise ConfigError(
            f"the Dask scheduler address must be tcp://HOST:PORT with a port from 1 to 65535, as its scheduler "
            f"prints it (e.g. tcp://10.0.0.5:8786); got {address!r}"
        )
    return match["host"].strip("[]"), port


def check_reachable(address: str, seconds: float = REACH_SECONDS) -> None:
    """ConfigError unless something accepts connections at the scheduler ``address`` within ``seconds`` (a port
    nobody listens on is refused at once, rather than after Dask's connection retries)."""
    host, port = scheduler_endpoint(address)
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except OSError as e:
        raise ConfigError(
            f"could not reach the Dask scheduler at {address.strip()} ({e.strerror or e}); give the address its "
            "scheduler prints, e.g. tcp://10.0.0.5:8786, and check that the scheduler is running"
        ) from e


def check_backend(backend: str, scheduler: str | None) -> None:
    """ConfigError unless ``backend`` is known and a scheduler address, well formed, comes only with Dask."""
    if backend not in BACKENDS:
        raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler and backend != "dask":
        raise ConfigError("--scheduler is the address of a Dask scheduler; give it with --backend dask")
    if scheduler:
        scheduler_endpoint(scheduler)


def _local_workers(jobs: int) -> int:
    return (os.cpu_count() or 1) if jobs == -1 else max(int(jobs), 1)


@contextmanager
def _dask_client(scheduler: str | None, jobs: int) -> Iterator[Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise ConfigError(
            f"--backend dask needs Dask's distributed scheduler: {INSTALL_DASK} (or dask[distributed])"
        ) from e
    if scheduler:
        check_reachable(scheduler)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise ConfigError(
                f"could not reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT} ({e}); give the "
                "address its scheduler prints, e.g. tcp://10.0.0.5:8786"
            ) from e
        with client:
            yield client
        return
    with _local_cluster(LocalCluster, _local_workers(jobs)) as cluster, Client(cluster, set_as_default=False) as client:
        yield client


def _local_cluster(cls: Any, workers: int) -> Any:
    """A Dask cluster of ``workers`` single-threaded worker processes on this machine, its scheduler, nannies and
    workers listening on 127.0.0.1 only (the data never leaves the machine), without Dask's dashboard pages (its
    small health and metrics routes listen on 127.0.0.1 too)."""
    return cls(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host=LOCALHOST)


_SERVER: dict[str, Any] = {}
_SERVER_LOCK = threading.Lock()


def server_cluster(workers: int) -> str:
    """The scheduler address of this process's own local Dask cluster, started on the first call and closed when
    the process exits; a later call with another number of ``workers`` scales it to that number (a task on a
    worker let go runs again on another: the tasks are pure, so the results are the same). For a long-lived
    process such as the dashboard's server, whose sweeps would otherwise each start a cluster."""
    try:
        from distributed import LocalCluster
    except ImportError as e:
        raise ConfigError(f"a local Dask cluster needs Dask's distributed scheduler: {INSTALL_DASK}") from e
    workers = max(int(workers), 1)
    with _SERVER_LOCK:
        cluster = _SERVER.get("cluster")
        if cluster is None:
            cluster = _SERVER["cluster"] = _local_cluster(LocalCluster, workers)
            _SERVER["workers"] = workers
            atexit.register(close_server_cluster)
        elif _SERVER["workers"] != workers:
            cluster.scale(workers)
            _SERVER["workers"] = workers
        return str(cluster.scheduler_address)


def close_server_cluster() -> None:
    """Close this process's local Dask cluster (`server_cluster`), if it started one."""
    with _SERVER_LOCK:
        cluster = _SERVER.pop("cluster", None)
        _SERVER.pop("workers", None)
    if cluster is not None:
        cluster.close()


@contextmanager
def parallel_backend(backend: str, scheduler: str | None, jobs: int, shared: Sequence[Any] = ()) -> Iterator[int]:
    """Run the joblib ``Parallel`` calls inside on ``backend``; yields the ``n_jobs`` to give them.

    ``shared`` are the large arguments every task takes (the fitted model, the Evaluator): on Dask they are
    broadcast to each worker once."""
    check_backend(backend, scheduler)
    if backend == "local":
        yield jobs
        return
    from joblib import parallel_config

    with _dask_client(scheduler, jobs) as client, parallel_config(backend="dask", client=client, scatter=list(shared)):
        yield -1
