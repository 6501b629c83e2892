"""Pieces of a fit spread over worker processes (`engine.workers`): the same results as one process, a
progress bar that hears from the workers, and a piece's error raised where the work was asked for; objects
shipped to the workers once."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from joblib import Parallel, delayed

from engine import workers
from engine.progress import no_progress
from engine.workers import (
    WORKER_NICE,
    Report,
    Shipped,
    giving_way,
    in_worker,
    interacting,
    lower_this_thread,
    map_reporting,
    settle_heap,
    shipped_once,
    stream_in_workers,
    wait_while_interacting,
    warm_workers,
)

T = TypeVar("T")


def _squares_up_to(n: int, report: Report) -> list[int]:
    if n < 0:
        raise ValueError(f"no squares up to {n}")
    out = []
    for k in range(n):
        out.append(k * k)
        report(k + 1)
    return out


@pytest.mark.parametrize("processes", [1, 2])
def test_results_in_order_and_progress_reaches_the_total(processes):
    reports: list[tuple[int, int, str]] = []
    out = map_reporting(_squares_up_to, [3, 5, 4], 5, lambda *r: reports.append(r), "squaring", processes)
    assert out == [[0, 1, 4], [0, 1, 4, 9, 16], [0, 1, 4, 9]]
    assert reports[0] == (0, 15, "squaring") and reports[-1][:2] == (15, 15)
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)


@pytest.mark.parametrize("processes", [1, 2])
def test_items_of_different_sizes_count_their_own_units(processes):
    reports: list[tuple[int, int, str]] = []
    out = map_reporting(_squares_up_to, [3, 5, 1], [3, 5, 1], lambda *r: reports.append(r), "squaring", processes)
    assert out == [[0, 1, 4], [0, 1, 4, 9, 16], [0]]
    assert reports[0] == (0, 9, "squaring") and reports[-1][:2] == (9, 9)
    with pytest.raises(ValueError, match="2 unit counts for 3 items"):
        map_reporting(_squares_up_to, [3, 5, 1], [3, 5], lambda *r: None, "squaring", processes)


def _pid(_: object, report: Report) -> int:
    report(1)
    return os.getpid()


def _slow_pid(_: object, report: Report) -> int:
    import time

    time.sleep(0.2)  # long enough for both workers to take tasks
    return _pid(_, report)


def test_a_fits_pieces_and_the_sweep_after_it_run_on_the_same_workers():
    """What a fit's workers loaded (spaCy, word lists, the engine's modules) is there for the sweep's
    `Parallel`: joblib keeps its workers only when asked with the same settings."""
    fit = set(map_reporting(_slow_pid, list(range(6)), 1, lambda *r: None, "pids", 2))  # both workers take some
    sweep = set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(6)))
    again = set(map_reporting(_pid, list(range(6)), 1, lambda *r: None, "pids", 2))
    assert os.getpid() not in fit and sweep <= fit and again <= fit


def test_a_second_thread_shares_the_workers_as_they_are_configured():
    """While one thread's pieces run on joblib's workers, another thread asking for another number of them is
    given the same workers: asking joblib for three would end the two under the first thread's pieces."""
    first: list[list[int]] = []
    thread = threading.Thread(
        target=lambda: first.append(map_reporting(_slow_pid, list(range(8)), 1, lambda *r: None, "pids", 2))
    )
    thread.start()
    time.sleep(0.5)  # the first thread's pieces are running
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        second = map_reporting(_pid, list(range(6)), 1, lambda *r: None, "pids", 3)
    thread.join()
    assert not [w for w in said if "resize" in str(w.message)]  # joblib did not resize them under the first's
    assert len(first) == 1 and len(first[0]) == 8 and len(second) == 6
    assert set(second) <= set(first[0]) and len(set(first[0])) == 2


def _has_module(name: str, report: Report) -> bool:
    report(1)
    return name in sys.modules


def test_workers_warmed_import_the_modules_a_sweep_needs_without_the_caller_waiting():
    module = "email.mime.audio"  # nothing here imports it
    started = time.monotonic()
    warm_workers((module,), 2)
    assert time.monotonic() - started < 5  # submitted, not awaited (a cold pool starts its workers first)
    seen = map_reporting(_has_module, [module] * 4, 1, lambda *r: None, "modules", 2)
    assert any(seen) and module not in sys.modules


_KEPT: list[bytearray] = []


def _grow(megabytes: int, report: Report) -> int:
    """Keep ``megabytes`` more in this process (as a worker keeps spaCy or a shipped model), then wait past loky's
    one-second interval between leak checks."""
    import time

    _KEPT.append(bytearray(megabytes * 2**20))
    time.sleep(1.2)
    report(1)
    return os.getpid()


def test_a_worker_that_keeps_what_it_loaded_is_not_ended_as_leaking():
    """loky ends a worker whose memory grew 300 MB past its size after its first task; a fit's workers keep
    spaCy and the word lists on purpose, and the pieces after must find them."""
    map_reporting(_slow_pid, list(range(6)), 1, lambda *r: None, "first tasks", 2)  # each worker's size is taken
    grown = set(map_reporting(_grow, [400, 400], 1, lambda *r: None, "growing", 2))
    after = set(map_reporting(_slow_pid, list(range(6)), 1, lambda *r: None, "after", 2))
    assert after <= grown


@pytest.mark.parametrize("processes", [1, 2])
def test_a_pieces_error_is_raised_to_the_caller(processes):
    with pytest.raises(ValueError, match="no squares up to -1"):
        map_reporting(_squares_up_to, [2, -1, 3], 3, lambda *r: None, "squaring", processes)


def _loaded_in(shipped: Shipped) -> tuple[int, int, int]:
    objects = shipped.load()
    return os.getpid(), id(objects), int(objects["values"].sum())


def test_shipped_objects_are_read_once_per_process_and_their_file_removed():
    with shipped_once({"values": np.arange(5)}) as shipped:
        path = Path(shipped.path)
        assert path.is_file() and path.parent.stat().st_mode & 0o077 == 0  # readable by this user only
        first = shipped.load()
        assert first["values"].tolist() == [0, 1, 2, 3, 4] and shipped.load() is first
        seen = Parallel(n_jobs=2)(delayed(_loaded_in)(shipped) for _ in range(8))
    assert {total for _, _, total in seen} == {10}
    by_process: dict[int, set[int]] = {}
    for pid, ident, _ in seen:
        by_process.setdefault(pid, set()).add(ident)
    assert all(len(idents) == 1 for idents in by_process.values())  # each worker loaded it once, then reused it
    assert not path.exists() and not path.parent.exists()
    with shipped_once({"values": np.arange(3)}) as other:
        assert other.load()["values"].sum() == 3  # a new handle replaces what this process held


def _freeze_around_load(shipped: Shipped, report: Report) -> tuple[int, int, int]:
    before = gc.get_freeze_count()
    shipped.load()
    return os.getpid(), before, gc.get_freeze_count()


def test_a_worker_freezes_what_it_keeps_between_pieces_and_thaws_it_for_new_objects():
    """After a piece a worker process freezes what it holds, so the next collection walks only what a piece
    makes; loading another shipment unfreezes it, so the objects it replaces can be collected."""
    with shipped_once({"values": np.arange(5)}) as first:
        seen = map_reporting(_freeze_around_load, [first] * 8, 1, no_progress, "loading", processes=2)
    later: dict[int, list[int]] = {}
    for pid, before, _ in seen:
        later.setdefault(pid, []).append(before)
    assert all(b > 0 for befores in later.values() for b in befores[1:])  # frozen after each worker's first piece
    with shipped_once({"values": np.arange(3)}) as second:
        seen = map_reporting(_freeze_around_load, [second] * 4, 1, no_progress, "loading", processes=2)
    assert any(before > 0 and after == 0 for _, before, after in seen)  # thawed as the new objects came in
    assert gc.get_freeze_count() == 0  # the calling process is no worker: it freezes nothing


def _threads_here(_: int, report: Report) -> int:
    from engine.workers import model_threads

    return model_threads()


def test_a_model_in_a_worker_uses_one_thread_and_alone_the_machines():
    """Two workers of two spinning onnxruntime threads each on two cores were a third slower than one each."""
    from engine.workers import MACHINE_THREADS, model_threads

    assert model_threads() == MACHINE_THREADS
    assert map_reporting(_threads_here, [0, 1], 1, lambda *r: None, "asking", 2) == [1, 1]


def _claim_and_publish(args: tuple[str, int], report: Report) -> list[str]:
    """Work out the values of keys 0..5 as a sweep's worker would: what another worker claimed is waited for."""
    from engine.text.kept import SharedByText, sharing

    folder, me = args
    with sharing(folder):
        shared = SharedByText("squares")
        keys = [bytes([k]) for k in range(6)]
        mine = [k for k in keys if shared.claim(k)]
        for k in mine:
            shared.publish(k, np.array([float(k[0]) ** 2, float(me)]))
        got = shared.wait([k for k in keys if k not in mine], lambda ks: {})
        return [f"{k[0]}:{v[0]:.0f}" for k, v in sorted(got.items())] + [f"{k[0]}:mine" for k in mine]


def test_values_shared_by_a_sweeps_workers_are_worked_out_once(tmp_path):
    from engine.text.kept import SharedByText, sharing

    assert not SharedByText("squares").active  # outside a sweep nothing is shared
    a, b = map_reporting(_claim_and_publish, [(str(tmp_path), 1), (str(tmp_path), 2)], 1, lambda *r: None, "x", 2)
    mine_a, mine_b = ({s.split(":")[0] for s in out if s.endswith("mine")} for out in (a, b))
    assert mine_a.isdisjoint(mine_b) and mine_a | mine_b == {str(k) for k in range(6)}
    for out, others in ((a, mine_b), (b, mine_a)):  # what the other worked out arrives, with its value
        assert sorted(s for s in out if not s.endswith("mine")) == sorted(f"{k}:{int(k) ** 2}" for k in others)
    with sharing(tmp_path):
        shared = SharedByText("squares")
        assert set(shared.collect([bytes([k]) for k in range(7)])) == {bytes([k]) for k in range(6)}


def test_a_claimed_value_never_published_is_worked_out_after_the_wait(tmp_path, monkeypatch):
    import engine.text.kept as kept

    monkeypatch.setattr(kept, "WAIT_SECONDS", 0.2)
    with kept.sharing(tmp_path):
        shared = kept.SharedByText("squares")
        assert shared.claim(b"x") and not shared.claim(b"x")
        got = shared.wait([b"x"], lambda ks: {k: np.ones(2) for k in ks})
    assert list(got) == [b"x"] and got[b"x"].tolist() == [1.0, 1.0]


def test_a_claim_withdrawn_on_an_error_is_worked_out_by_a_waiting_process(tmp_path):
    import engine.text.kept as kept

    with kept.sharing(tmp_path):
        shared = kept.SharedByText("squares")
        assert shared.claim(b"x")
        with pytest.raises(RuntimeError), shared.released_on_error([b"x"]):
            raise RuntimeError("the model failed")
        got = shared.wait([b"x"], lambda ks: {k: np.full(2, 3.0) for k in ks})  # not the 300 s wait
        assert got[b"x"].tolist() == [3.0, 3.0] and shared.collect([b"x"])[b"x"].tolist() == [3.0, 3.0]


def _where(_: object, report: Report) -> tuple[int, bool, int]:
    import time

    from engine.workers import in_worker, model_threads

    time.sleep(0.1)  # long enough for this process and the worker to take items each
    report(1)
    return os.getpid(), in_worker(), model_threads()


def test_pieces_shared_with_this_process_run_beside_one_worker_fewer():
    """A sweep's waiting process holds what the workers load copies of: with ``here`` it takes items itself,
    counting as a worker there (one model thread), and the pool keeps one worker instead of two."""
    from engine.workers import in_worker

    reports: list[tuple[int, int, str]] = []
    map_reporting(_slow_pid, list(range(4)), 1, lambda *r: None, "two workers first", 2)
    out = map_reporting(_where, list(range(10)), 1, lambda *r: reports.append(r), "sharing", 2, here=True)
    pids = {pid for pid, _, _ in out}
    assert os.getpid() in pids and len(pids) == 2  # this process and one worker
    assert all(worker and threads == 1 for _, worker, threads in out)
    assert not in_worker()  # only the thread that ran the share counted as a worker
    assert reports[0] == (0, 10, "sharing") and reports[-1][:2] == (10, 10)
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)
    again = set(map_reporting(_slow_pid, list(range(6)), 1, lambda *r: None, "two again", 2))
    assert len(again) == 2 and os.getpid() not in again  # the next fit's pieces find two workers again


def _fails_here(n: int, report: Report) -> int:
    import multiprocessing
    import time

    if multiprocessing.parent_process() is None:  # run in this process, not a worker
        raise ValueError("the piece run here failed")
    time.sleep(0.2)
    return n


def test_an_error_in_a_piece_run_here_or_in_the_worker_is_raised_to_the_caller():
    with pytest.raises(ValueError, match="no squares up to -1"):
        map_reporting(_squares_up_to, [2, -1, 3, 2, -1], 3, lambda *r: None, "squaring", 2, here=True)
    with pytest.raises(ValueError, match="the piece run here failed"):
        map_reporting(_fails_here, list(range(6)), 1, lambda *r: None, "failing here", 2, here=True)


def _objects_id(shipped: Shipped, report: Report) -> tuple[int, int]:
    return os.getpid(), id(shipped.load())


def test_a_piece_run_here_is_given_the_shipped_objects_themselves():
    objects = {"values": np.arange(5)}
    with shipped_once(objects) as shipped:
        seen = map_reporting(_objects_id, [shipped] * 6, 1, lambda *r: None, "loading", 2, here=True)
    assert {ident for pid, ident in seen if pid == os.getpid()} == {id(objects)}
    from engine.workers import _LOADED

    assert not _LOADED  # this process does not keep them past the block


def _nested(_: object, report: Report) -> tuple[int, set[int]]:
    import time

    time.sleep(0.1)
    report(1)
    return os.getpid(), set(map_reporting(_pid, [0, 1, 2], 1, lambda *r: None, "nested", 2))


def test_a_piece_that_asks_for_workers_runs_its_items_where_it_runs():
    """A piece run here or in a worker is a worker's share: it does not start processes of its own."""
    out = map_reporting(_nested, list(range(4)), 1, lambda *r: None, "nesting", 2, here=True)
    assert all(inner == {pid} for pid, inner in out)
    assert os.getpid() in {pid for pid, _ in out}


def _slow_square(n: int) -> int:
    import time

    time.sleep(0.05)
    return n * n


class _Rerun(BaseException):
    """As Streamlit's rerun: raised in the caller's progress callback, through the work it was waiting for."""


def test_streamed_results_come_in_order_in_workers_or_here():
    from engine.workers import stream_in_workers

    assert list(stream_in_workers(_slow_square, list(range(9)), 2)) == [k * k for k in range(9)]
    assert list(stream_in_workers(_slow_square, [3, 1], 1)) == [9, 1]


def test_a_stream_left_early_leaves_the_workers_to_the_next_work():
    """A steward who switches method during a fit leaves its stream unfinished, and Streamlit's frames may keep
    it until the collector frees it, in the middle of the next method's work: that must find its workers."""
    import gc

    from engine.workers import stream_in_workers

    before = set(map_reporting(_slow_pid, list(range(6)), 1, lambda *r: None, "first", 2))
    left: list = []
    try:
        for _ in stream_in_workers(_slow_square, list(range(40)), 2):
            raise _Rerun
    except _Rerun as error:
        left += [error, left]  # a cycle: freed only by the collector
    calls = []

    def collect_midway(done: int, total: int, what: str) -> None:
        calls.append(done)
        if len(calls) == 2:  # the next work's pieces are with the workers
            left.clear()
            gc.collect()

    after = set(map_reporting(_slow_pid, list(range(6)), 1, collect_midway, "next", 2))
    assert len(calls) > 2 and after <= before


def test_named_entities_left_early_stop_their_work_at_once(monkeypatch):
    """A rerun raised in the progress callback while entities are found closes their stream as it passes, not
    when the collector frees the frames its traceback holds."""
    from engine.text import entities

    closed: list[bool] = []

    def stream(func, items, processes):
        try:
            for _ in items:
                yield []
        finally:
            closed.append(True)

    calls: list[int] = []

    def rerun(done: int, total: int, what: str) -> None:
        calls.append(done)
        if len(calls) == 2:  # the first call announces the step, the second reports the first chunk found
            raise _Rerun

    monkeypatch.setattr(entities, "stream_in_workers", stream)
    texts = ["word"] * (entities.CHUNK_PIECES * 3)
    with pytest.raises(_Rerun):
        for _ in entities.entity_spans(texts, len(texts), rerun, processes=2):
            pass
    assert closed == [True]


def _niceness(_: object, report: Report) -> tuple[int, int]:
    report(1)
    return os.getpid(), os.nice(0)


def test_workers_give_way_to_the_process_that_answers_the_steward():
    """A sweep's worker processes run at `WORKER_NICE`, so that the dashboard's server, at its own priority,
    answers a knob move while a sweep runs in the background; the calling process keeps its priority."""
    before = os.nice(0)
    got = map_reporting(_niceness, list(range(4)), 1, no_progress, "niceness", processes=2)
    workers = {pid: nice for pid, nice in got if pid != os.getpid()}
    assert workers and all(nice >= WORKER_NICE for nice in workers.values()), got
    assert os.nice(0) == before


def _started(_: object, report: Report) -> tuple[int, float]:
    report(1)
    return os.getpid(), time.monotonic()


def _own_pid(_: object) -> int:
    return os.getpid()


def _in_thread(run: Callable[[], T]) -> T:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(run()))
    thread.start()
    thread.join()
    return out[0]


def test_background_work_waits_while_the_steward_acts_and_holds_large_objects_once():
    """Giving way, `map_reporting` takes no piece until the steward has paused (`interacting`); it runs none in
    the calling process (the dashboard's page runs there) unless asked to share large objects (``here``), and then
    all of them there, one after the other, each after the pause, so that the objects are held once."""
    interacting(1.0)
    marked = time.monotonic()

    def background(here: bool) -> list[tuple[int, float]]:
        with giving_way():
            return map_reporting(_started, list(range(4)), 1, no_progress, "pause", processes=2, here=here)

    got = _in_thread(lambda: background(False))
    assert all(pid != os.getpid() for pid, _ in got), got
    assert min(started for _, started in got) >= marked + 0.9
    interacting(1.0)
    marked = time.monotonic()
    held_once = _in_thread(lambda: background(True))
    assert all(pid == os.getpid() for pid, _ in held_once), held_once
    assert min(started for _, started in held_once) >= marked + 0.9

    def whole_table() -> tuple[list[tuple[int, float]], list[int], bool]:
        with giving_way(held_once=True):  # a large table's full sweep: all its work in this thread
            pieces = map_reporting(_started, list(range(4)), 1, no_progress, "held", processes=2)
            streamed = list(stream_in_workers(_own_pid, list(range(4)), 2))
            return pieces, streamed, in_worker()

    pieces, streamed, counted_as_worker = _in_thread(whole_table)
    assert {pid for pid, _ in pieces} == set(streamed) == {os.getpid()} and counted_as_worker
    assert not in_worker()  # the thread that held once, and only while it did
    # not giving way: at once, whatever the steward does
    interacting(5.0)
    begun = time.monotonic()
    wait_while_interacting()
    assert time.monotonic() - begun < 0.1


class _Big:
    """A cycle holding an array, as a release's frames can be: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self
        self.array = np.ones(1_000)


_LEFT: list[weakref.ref] = []


def _leaves_a_cycle(_: object, report: Report) -> int:
    _LEFT.append(weakref.ref(_Big()))
    report(1)
    return gc.get_freeze_count()


def test_a_thread_giving_way_frees_the_cycles_a_piece_leaves_walking_only_what_the_pieces_made():
    """Giving way, what the process held before the pieces is frozen while they run (a collection of the whole
    server heap would hold the interpreter lock for a knob move's time); after each piece the cycles it left are
    collected, and once the pieces are done nothing is left frozen."""
    held = [_Big() for _ in range(3)]  # held before: frozen, not freed
    gc.collect()
    _LEFT.clear()

    def whole_table() -> list[int]:
        with giving_way(held_once=True):
            return map_reporting(_leaves_a_cycle, list(range(3)), 1, no_progress, "cycles", processes=2)

    gc.disable()  # no automatic collection: only the ones after each piece free a cycle
    try:
        frozen = _in_thread(whole_table)
    finally:
        gc.enable()
    assert all(count > 0 for count in frozen)  # the process's objects were frozen while the pieces ran
    assert len(_LEFT) == 3 and all(ref() is None for ref in _LEFT)  # each piece's cycle freed after it
    assert gc.get_freeze_count() == 0 and all(b.me is b for b in held)


def test_a_settled_heap_is_collected_once_then_frozen_and_a_thread_giving_way_leaves_it_frozen(monkeypatch):
    """A dashboard server settles its heap once new views are built: the cycles it no longer holds are freed,
    what it holds is frozen (later collections do not walk it), a thread giving way leaves it frozen when its
    pieces end, and the next settling frees the cycles dropped since. A process that does not settle (a test,
    a script) freezes nothing."""
    gc.collect()
    assert gc.get_freeze_count() == 0
    settle_heap()  # not settling: nothing happens
    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(workers, "_settling", [True])
    gc.disable()  # only the settling frees a cycle
    try:
        dropped, held = weakref.ref(_Big()), _Big()
        assert dropped() is not None
        settle_heap()
        assert dropped() is None and gc.get_freeze_count() > 0
        frozen_ref = weakref.ref(held)
        del held
        gc.collect()  # the frozen heap is not walked: the cycle held when it was settled stays
        assert frozen_ref() is not None

        def whole_table() -> list[int]:
            with giving_way(held_once=True):
                return map_reporting(_leaves_a_cycle, list(range(2)), 1, no_progress, "cycles", processes=2)

        _LEFT.clear()
        _in_thread(whole_table)
        assert all(ref() is None for ref in _LEFT)  # each piece's cycle still freed after it
        assert gc.get_freeze_count() > 0  # left frozen
        settle_heap()
        assert frozen_ref() is None  # freed at the next settling
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_background_thread_lowers_its_own_priority_only():
    """`lower_this_thread` lowers the calling thread's priority (Linux: per thread), not the process's."""
    if not hasattr(os, "getpriority") or not sys.platform.startswith("linux"):
        pytest.skip("a thread's own priority is Linux's")
    before = os.nice(0)

    def lower() -> int:
        lower_this_thread()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    assert _in_thread(lower) == max(before, WORKER_NICE)
    assert os.nice(0) == before
