"""Work spread over local worker processes.

`map_reporting` runs independent pieces of a fit with a progress bar that keeps moving: each piece writes how
far it has got into its slot of a small shared file that the calling process reads while it waits (a file, not a
multiprocessing queue: that needs a manager process started by re-importing ``__main__``, which under Streamlit
is the page being run). With ``here``, the calling process, which would only wait, takes a share of the pieces
in a thread of its own beside one worker fewer. `stream_in_workers` yields the results of pieces in order as
they are ready, and stops cleanly when its caller stops reading. `shipped_once` sends the large objects every task of a sweep
takes (the fitted model, the Evaluator) to each worker once instead of with every task. `beside` begins work
that waits on the workers in a thread of its own, so the caller prepares other things meanwhile; two threads
then share the workers as they are (`joblib_workers`). `warm_workers` has the workers import what a sweep's
pieces need while the caller is still fitting.

The pieces run with BLAS and OpenMP held to one thread, in the workers and in this process alike, so a result
does not depend on how many processes computed it (sums are taken in the same order).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import pickle
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import threadpool_limits

from engine.progress import Progress, no_progress

T = TypeVar("T")
R = TypeVar("R")

Report = Callable[[int], None]
"""Called by a piece with the units of its own work done so far."""

POLL_SECONDS = 0.5


WORKER_GROWTH_BYTES = 4 * 2**30
"""How far a worker's memory may grow past its size after its first task before joblib's workers (loky) end it
as leaking: loky's own limit, 300 MB, ended every worker that loaded spaCy and the word lists for the tagger
after a redaction sweep, and its replacement loaded them again (6.6 s of the k-anonymity page's first view)."""


def keep_what_workers_load() -> None:
    """Let this worker keep what it loads on purpose (spaCy, word lists, a sweep's shipped model) for its next
    tasks: raises loky's leak limit (read by the worker's loop after each task) to `WORKER_GROWTH_BYTES`. Called
    at the start of every task `map_reporting` runs (a fit's pieces, a sweep's releases) and of the recognizer's
    pieces; outside a loky worker the setting is read by nothing."""
    from joblib.externals.loky import process_executor

    process_executor._MAX_MEMORY_LEAK_SIZE = max(process_executor._MAX_MEMORY_LEAK_SIZE, WORKER_GROWTH_BYTES)
    yield_to_interactive()


WORKER_NICE = 19
"""The niceness a worker process runs at (0: the default; higher gives way): the dashboard's server answers a knob
move while a sweep runs in the background (the Plans page's other lines, a large table's full sweep), and on two
cores the sweep's workers at the server's priority left it a third of a core. At 5 the Plans page's moves still
waited behind its background lines (p95 128–140 ms in trials); the lowest priority and `giving_way`'s pauses
brought them to 77–92 ms. Nice only weighs when the cores are busy, so a sweep on an otherwise idle machine takes as long."""


def lower_this_thread() -> None:
    """Lower the calling thread's priority to `WORKER_NICE` (Linux: a thread's niceness is its own), for a thread
    that only does background work: the processes it starts inherit it. Nothing elsewhere, or under a limit."""
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        if now < WORKER_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, WORKER_NICE)
    except (OSError, AttributeError):
        pass


def yield_to_interactive() -> None:
    """Lower this process's priority to `WORKER_NICE` if it is a child process (a worker of joblib's or Dask's),
    once: an unprivileged process cannot raise it back, and need not."""
    import multiprocessing

    if multiprocessing.parent_process() is None:
        return
    try:
        now = os.nice(0)
        if now < WORKER_NICE:
            os.nice(WORKER_NICE - now)
    except OSError:  # a platform without nice, or a limit: the worker runs as it is
        pass


_giving_way = threading.local()
_interactive_until = [0.0]
INTERACTIVE_SECONDS = 3.0
"""How long after a steward's action (`interacting`) background work waits before it takes its next piece: a
knob is moved several times a second, and the next move should find the cores free."""


@contextmanager
def giving_way(held_once: bool = False) -> Iterator[None]:
    """Work this thread does within is background work that the process's interactive threads must not wait
    behind (a dashboard's sweep made while the steward moves a knob): `map_reporting` takes no share of the pieces
    in this process (whose interpreter lock the server's page runs would contend for), hands the workers one piece
    each at a time, and holds the next while the steward is acting (`interacting`); the workers run at
    `WORKER_NICE`. Asked to share large objects (``here``), it runs every piece in this thread instead, one after
    the other and each after the steward's pause: the objects are held once. With ``held_once`` (a large table's
    full sweep) all the work within runs so, as in a worker (`in_worker`): a fit's pieces, the measures'
    preparation, the sweep, nothing shipped to a worker process and held there again; a piece running when the
    steward acts again holds the interpreter lock part of the time."""
    was = getattr(_giving_way, "on", False)
    _giving_way.on = True
    try:
        with _working_here(held_once):
            yield
    finally:
        _giving_way.on = was


def gives_way() -> bool:
    """Whether this thread's work is background work (`giving_way`)."""
    return bool(getattr(_giving_way, "on", False))


def interacting(seconds: float = INTERACTIVE_SECONDS) -> None:
    """Say that a steward is acting in this process (a page run): background work pauses for ``seconds``."""
    _interactive_until[0] = max(_interactive_until[0], time.monotonic() + seconds)


def wait_while_interacting() -> None:
    """In a thread `giving_way`: return once no steward has acted for `INTERACTIVE_SECONDS` (at once elsewhere)."""
    while gives_way() and (left := _interactive_until[0] - time.monotonic()) > 0:
        time.sleep(min(left, 0.25))


MACHINE_THREADS = max(1, min(os.cpu_count() or 1, 4))
_in_worker = False
_here = threading.local()
"""``working``: this thread runs the calling process's share of `map_reporting`'s pieces (``here``)."""


def in_worker() -> bool:
    """Whether this process is a worker (of `map_reporting`, or any child process of multiprocessing's, such as a
    Dask worker), or this thread runs a worker's share in the calling process: work is not spread further."""
    import multiprocessing

    return _in_worker or getattr(_here, "working", False) or multiprocessing.parent_process() is not None


def model_threads() -> int:
    """Threads a model with a thread pool of its own (onnxruntime's) may use in this process: one in a worker
    process of `map_reporting`, whose sibling workers keep the other cores busy, else `MACHINE_THREADS`. Two
    workers of two spinning threads each on two cores embedded 60 earnings-call chunks in 5.3–5.8 s, of one
    thread each in 3.4–4.0 s (alone, one process: 2.5 s with two threads, 3.9 s with one)."""
    return 1 if in_worker() else MACHINE_THREADS


_settling = [False]
"""Whether `settle_heap` settles: set in a dashboard server's process (`heap_settling`), not in a test's or a
script's, whose collections freeze nothing."""


def heap_settling() -> None:
    """From now on this process settles its heap when `settle_heap` is called (a dashboard server)."""
    _settling[0] = True


def settle_heap() -> None:
    """In a process `heap_settling`: collect the whole heap once and freeze what survives (`gc.freeze`), so that
    later collections walk only what was made since. A dashboard server calls it once a page's new views are
    built: what it then holds (a fitted model, a sweep, its measures, spaCy) is long-lived, and each full
    collection Python ran on its own walked it all, 140–230 ms holding the interpreter lock (measured on the
    airline tweets' Protect and Synthesize pages, 220,000–290,000 objects), which a knob move that fell on it
    waited for. Cycles left among the frozen objects are collected at the next settling (the next new views);
    a thread giving way no longer thaws them when its pieces end (`_pieces_apart`)."""
    if not _settling[0]:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@contextmanager
def _pieces_apart() -> Iterator[None]:
    """Within, in a thread giving way, what the process holds on entering is frozen (`gc.freeze`), so that the
    collection after each piece (`return_free_memory`) walks only what the pieces made since, and the cycles a
    piece leaves are freed after it, not when Python next walks the whole heap (which, on a server holding a large
    table's fit and measures, would hold the interpreter lock for a knob move's time). Unfrozen on leaving, unless
    the process settles its heap (`settle_heap`), which keeps it frozen; nested, the outermost freezes."""
    depth = getattr(_here, "frozen", 0)
    if not depth:
        gc.freeze()
    _here.frozen = depth + 1
    try:
        yield
    finally:
        _here.frozen = depth
        if not depth and not _settling[0]:
            gc.unfreeze()


def return_free_memory() -> None:
    """Give the memory this process has freed back to the system (glibc's ``malloc_trim``; nothing elsewhere).
    The heap keeps what a task freed (a batch of embeddings, a release's texts) for reuse, so a process's
    resident memory is the sum of its tasks' leftovers, not what it holds: embedding 1,200 earnings-call chunks
    left 195 MB of freed memory behind, and a sweep's worker carries on to its next task with it. A thread
    `giving_way` skips the collection of reference cycles: on a dashboard server's heap it held the interpreter
    lock for a knob move's whole time. A worker process then freezes what it still holds (`gc.freeze`): what it
    keeps between pieces (a sweep's shipped objects, spaCy, the word caches) is walked by no later collection,
    only what a piece made. A full collection after each of md's pieces on the airline tweets walked 142,000
    objects (75–160 ms of a 1.1 s piece); `Shipped.load` unfreezes them before it replaces them."""
    if not gives_way():
        gc.collect()
        if _in_worker:
            gc.freeze()
    elif getattr(_here, "frozen", 0):  # only what the pieces made since `_pieces_apart` froze the rest
        gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


AHEAD = 2
"""Items each worker has queued while this process takes a share (`map_reporting`'s ``here``): one to work on and
the next, so that a worker never waits for this process to send it one."""


def _run_piece(func: Callable[[T, Report], R], item: T, index: int, slots: str) -> R:
    """A piece in a worker process."""
    global _in_worker
    _in_worker = True
    keep_what_workers_load()
    return _piece(func, item, index, slots)


@contextmanager
def _working_here(on: bool = True) -> Iterator[None]:
    """Within, with ``on``, this thread runs pieces of `map_reporting` and counts as a worker (`in_worker`): what
    its pieces ask to run in workers runs in it, one after the other."""
    was = getattr(_here, "working", False)
    _here.working = was or on
    try:
        yield
    finally:
        _here.working = was


def _run_here(func: Callable[[T, Report], R], item: T, index: int, slots: str) -> R:
    """A piece in the calling process's thread, which then counts as a worker (`in_worker`)."""
    with _working_here():
        return _piece(func, item, index, slots)


def _piece(func: Callable[[T, Report], R], item: T, index: int, slots: str) -> R:
    counts = np.memmap(slots, dtype=np.int64, mode="r+")

    def report(done: int) -> None:
        counts[index] = done

    try:
        with threadpool_limits(limits=1):
            return func(item, report)
    finally:
        return_free_memory()


def map_reporting(
    func: Callable[[T, Report], R],
    items: Sequence[T],
    units: int | Sequence[int],
    progress: Progress,
    what: str,
    processes: int = 1,
    here: bool = False,
) -> list[R]:
    """``[func(item, report) for item in items]``, in up to ``processes`` worker processes when more than one.

    ``func`` (a module-level function, so that it can be sent to a worker) calls ``report(done)`` with the units
    of its item done so far, of ``units`` per item (one number for every item, or one each); ``progress`` is
    told the sum over the items, every `POLL_SECONDS`, labelled ``what``. Workers are joblib's reusable
    processes (`joblib_workers`): a sweep's `Parallel` that follows runs on the same ones, with what they loaded.

    With ``here`` this process takes items too, in a thread of its own, and the workers are one fewer (ended
    rather than left idle), given items `AHEAD` at a time as they finish them: a sweep's waiting process already
    holds the fitted model and the measures that every worker loads a copy of. Giving way (`giving_way`), with
    ``here`` every item runs in the calling thread, without workers; without ``here``, only in workers. A piece
    run here counts as a worker's (`in_worker`) and must leave this process as it found it apart from what it
    keeps on purpose (a model loaded once).

    In a worker (`in_worker`) the items run one after the other.

    A piece's error is raised here once the pieces already running have stopped.
    """
    sizes = [int(units)] * len(items) if isinstance(units, int) else [int(u) for u in units]
    if len(sizes) != len(items):
        raise ValueError(f"{len(sizes)} unit counts for {len(items)} items")
    total = sum(sizes)
    done = [0] * len(items)
    progress(0, total, what)
    processes = 1 if in_worker() else max(1, min(int(processes), len(items)))
    # Giving way with large objects, every piece runs in this thread: the objects are held once, not again in a
    # worker (200,000 posts: 3.1 GB here and 3.5 GB in the worker).
    alone = here and gives_way()
    if processes == 1 or alone:
        out = []
        with _pieces_apart() if gives_way() else contextlib.nullcontext():
            for k, item in enumerate(items):

                def report(d: int, k: int = k) -> None:
                    progress(sum(sizes[:k]) + min(d, sizes[k]), total, what)

                wait_while_interacting()
                # giving way, what a piece asks to run in workers runs here too: no copy of what this thread holds
                with threadpool_limits(limits=1), _working_here(alone or gives_way()):
                    out.append(func(item, report))
                if gives_way():  # what the piece freed goes back, as a worker's does (a large table's full sweep)
                    return_free_memory()
        progress(total, total, what)
        return out

    results: dict[int, R] = {}
    failed: list[BaseException] = []
    taken = iter(range(len(items)))
    lock, stop = threading.Lock(), threading.Event()

    def take() -> int | None:
        with lock:
            return None if stop.is_set() or failed else next(taken, None)

    def share_here(slots: str) -> None:
        while (k := take()) is not None:
            try:
                results[k] = _run_here(func, items[k], k, slots)
            except BaseException as error:  # raised by the waiting loop below
                failed.append(error)

    # Giving way (without ``here``, which ran every piece above), this process takes no share: its page runs
    # would wait for the interpreter lock.
    background = gives_way()
    workers = processes - 1 if here else processes
    share = here
    with tempfile.TemporaryDirectory(prefix="textsdc-progress-") as tmp, joblib_workers(processes) as pool:
        if workers < processes and not pool_shared():  # shared, the other caller's pieces keep every worker
            fewer_workers(pool, workers)
        slots = Path(tmp) / "slots"
        np.zeros(len(items), dtype=np.int64).tofile(slots)
        futures: dict[Any, int] = {}

        def give_next() -> None:
            wait_while_interacting()
            k = take()
            if k is not None:
                futures[pool.submit(_run_piece, func, items[k], k, str(slots))] = k

        thread = threading.Thread(target=share_here, args=(str(slots),), daemon=True) if share else None
        # alone, the workers have every item at once; beside this process's share, `AHEAD` each; giving way, one
        # each, so that the next waits for the steward's pause
        first = workers if background else workers * AHEAD if share else len(items)
        try:
            for _ in range(first):
                give_next()
            if thread is not None:
                thread.start()
            while futures or (thread is not None and thread.is_alive()):
                if futures:
                    finished, _ = wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                else:  # only this process's share is left
                    finished = set()
                    assert thread is not None
                    thread.join(POLL_SECONDS)
                for k, d in enumerate(np.fromfile(slots, dtype=np.int64)):
                    done[k] = max(done[k], min(int(d), sizes[k]))
                for f in finished:
                    k = futures.pop(f)
                    results[k] = f.result()
                    done[k] = sizes[k]
                    give_next()
                if failed:
                    raise failed[0]
                for k in list(results):  # the pieces done here
                    done[k] = sizes[k]
                progress(sum(done), total, what)
        finally:
            stop.set()
            for f in futures:
                f.cancel()
            wait(futures)
            if thread is not None and thread.is_alive():
                thread.join()
    if failed:
        raise failed[0]
    return [results[k] for k in range(len(items))]


def stream_in_workers(func: Callable[[T], R], items: Sequence[T], processes: int) -> Generator[R, None, None]:
    """Yield ``func(item)`` for each of ``items`` in order, computed in up to ``processes`` of joblib's reusable
    workers (`joblib_workers`) with `AHEAD` items per worker queued at a time, so that the caller works on each
    result while the workers compute the next (in a worker, `in_worker`, they run here one after the other).

    Left early (the caller's error, a Streamlit rerun raised in its progress callback, the generator closed),
    the items not started are cancelled and those running finish in their workers, unread: the workers stay for
    the next work, this caller's or another session's. joblib's own generator (``return_as="generator"``) ends
    every worker when left early, and only once the collector frees it, maybe in the middle of the next work,
    which then fails ("The executor underlying Parallel has been shutdown")."""
    processes = 1 if in_worker() else max(1, min(int(processes), len(items)))
    if processes == 1:
        for item in items:
            yield func(item)
        return
    with joblib_workers(processes) as pool:
        pending: deque[Any] = deque()
        taken = iter(items)
        try:
            for item in islice(taken, processes * AHEAD):
                pending.append(pool.submit(func, item))
            while pending:
                result = pending.popleft().result()
                for item in islice(taken, 1):
                    pending.append(pool.submit(func, item))
                yield result
        finally:
            for future in pending:
                future.cancel()


def beside(make: Callable[[Progress], R], progress: Progress) -> Callable[[], R]:
    """``make(no_progress)`` begun now in a thread of its own, so that the caller goes on with other work while
    it waits on worker processes (only the caller's thread may draw progress); the function returned waits for
    it and returns its result (or raises its error). In a worker, or giving way (`giving_way`: that thread's
    work holds its objects once), ``make(progress)`` runs when the result is asked for."""
    if in_worker() or gives_way():
        return lambda: make(progress)
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(make(no_progress))
        except BaseException as error:  # noqa: BLE001 — raised to the caller when it asks
            future.set_exception(error)

    threading.Thread(target=run, name="textsdc-beside", daemon=True).start()
    return future.result


def _import_modules(modules: tuple[str, ...]) -> None:
    keep_what_workers_load()
    for name in modules:
        importlib.import_module(name)


def warm_workers(modules: Sequence[str], processes: int) -> None:
    """Have joblib's reusable workers (``processes`` of them) import ``modules`` now, without waiting for them:
    a sweep's first pieces then find them loaded while this process fits and prepares the measures. The engine's
    sweep, measures and methods took 1.3 s to import in a worker that had only found named entities, at the
    start of md's sweep on both workers. Nothing in a worker, giving way, or with one process."""
    if in_worker() or gives_way() or processes < 2:
        return
    with joblib_workers(processes) as pool:
        for _ in range(processes):
            pool.submit(_import_modules, tuple(modules))


def fewer_workers(pool: Any, workers: int) -> None:
    """End all but ``workers`` of joblib's reusable worker processes (loky's private ``_resize``; the next
    `Parallel` that asks for more starts them again). Asking joblib for fewer workers would not do: the workers'
    settings carry the thread limits for their number, so joblib would end every warm worker and start new ones.
    """
    resize = getattr(pool, "_resize", None)
    if resize is None:
        raise RuntimeError(
            f"joblib's process pool {type(pool).__name__} cannot be resized; this joblib is not supported"
        )
    resize(workers)


_POOL_LOCK = threading.Lock()
_POOL_USE = {"users": 0, "processes": 0}
"""How many callers in this process are using joblib's reusable workers (`joblib_workers`), and for how many."""


def pool_shared() -> bool:
    """Whether another caller in this process (another thread) is using joblib's reusable workers now."""
    with _POOL_LOCK:
        return _POOL_USE["users"] > 1


@contextmanager
def joblib_workers(processes: int) -> Iterator[Any]:
    """The executor of joblib's reusable worker processes, configured as joblib's `Parallel` configures it.

    While another thread's work is on them (the sentiment folds training beside the other measures'
    preparation), a caller is given them as they are, whatever ``processes`` it asked for: asking joblib for
    another number would end them under that work. What a piece computes does not depend on how many there are.

    joblib starts new workers whenever it is asked for its executor with settings other than the last ones
    (thread limits, memory mapping); asking as `Parallel` does keeps one set of workers for a fit's pieces and
    the sweep after it, with the modules, models and word lists they loaded (`tests/test_workers.py` checks
    the process ids). This reads joblib's private ``_backend._workers``: a joblib that changes it fails that
    test rather than silently starting workers twice. Under another backend (Dask), joblib's own process pool.
    """
    from joblib import Parallel
    from joblib.executor import get_memmapping_executor

    with _POOL_LOCK:
        if _POOL_USE["users"]:
            processes = _POOL_USE["processes"]
        _POOL_USE["users"] += 1
        _POOL_USE["processes"] = processes
    try:
        with Parallel(n_jobs=processes) as parallel:
            pool = getattr(parallel._backend, "_workers", None)  # None when another backend is active
            yield pool if pool is not None else get_memmapping_executor(processes)
    finally:
        with _POOL_LOCK:
            _POOL_USE["users"] -= 1


_LOADED: dict[str, Any] = {}
"""What this process loaded from the latest `Shipped` handle it was given (one at a time: a worker's memory
holds one sweep's objects, not every sweep's); in the process that shipped them, the objects themselves."""


@dataclass(frozen=True)
class Shipped:
    """A handle to objects pickled once into a private temporary file (`shipped_once`); small to send with a
    task."""

    path: str
    token: str
    size: int  # bytes of the file: what each worker reads and holds a copy of

    def load(self) -> Any:
        """The objects, read from the file the first time this process asks, kept for its next tasks."""
        if self.token not in _LOADED:
            if _in_worker:
                gc.unfreeze()  # the objects replaced, and their reference cycles, can be collected again
            _LOADED.clear()
            with open(self.path, "rb") as f:
                _LOADED[self.token] = pickle.load(f)
        return _LOADED[self.token]


@contextmanager
def shipped_once(objects: Any) -> Iterator[Shipped]:
    """``objects`` written once to a file only this user can read, removed on leaving. A task given the handle
    calls `Shipped.load` in its worker: joblib would otherwise pickle, send and unpickle them with every task
    (34 MB and about 0.5 s a task for the Evaluator of 6,555 tweets). A task run in this process (`map_reporting`'s
    ``here``) is given ``objects`` themselves, not a copy read back."""
    with tempfile.TemporaryDirectory(prefix="textsdc-shipped-") as tmp:
        path = Path(tmp) / "objects.pickle"
        with path.open("wb") as f:
            pickle.dump(objects, f, protocol=pickle.HIGHEST_PROTOCOL)
        token = uuid.uuid4().hex
        _LOADED[token] = objects  # beside another sweep's, which a second dashboard session may be running
        try:
            yield Shipped(str(path), token, path.stat().st_size)
        finally:
            _LOADED.pop(token, None)
