"""Where a sweep's releases and measures run: joblib's processes on this machine (``local``) or a Dask cluster
(``dask``) through joblib's Dask backend, the same tasks and the same seeds either way.

A steward points a sweep at a running cluster with ``--backend dask --scheduler tcp://HOST:8786`` (the address
its scheduler prints); without an address a local Dask cluster of ``--jobs`` single-threaded worker processes is
started for the run and closed after it. The fitted model and the Evaluator are broadcast to every worker once
(joblib's ``scatter``), not sent with every task. Ray would run through joblib the same way
(``ray.util.joblib.register_ray``) and is not offered: it is one more large dependency for no new capability.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engine.errors import ConfigError

BACKENDS = ("local", "dask")
CONNECT_TIMEOUT = "10s"


def check_backend(backend: str, scheduler: str | None) -> None:
    """ConfigError unless ``backend`` is known and a scheduler address comes only with Dask."""
    if backend not in BACKENDS:
        raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler and backend != "dask":
        raise ConfigError("--scheduler is the address of a Dask scheduler; give it with --backend dask")


def _local_workers(jobs: int) -> int:
    return (os.cpu_count() or 1) if jobs == -1 else max(int(jobs), 1)


@contextmanager
def _dask_client(scheduler: str | None, jobs: int) -> Iterator[Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise ConfigError(
            "--backend dask needs Dask's distributed scheduler: pip install 'textsdc[dask]' (or dask[distributed])"
        ) from e
    if scheduler:
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
    cluster = LocalCluster(
        n_workers=_local_workers(jobs),
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,  # no web page of Dask's own: nothing listens beyond the cluster's ports
        host="127.0.0.1",
    )
    with cluster, Client(cluster, set_as_default=False) as client:
        yield client


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
