"""A large sweep's kept releases in files (`engine.releases_on_disk`): the same releases as kept in memory, one
store over every refining round, nothing of them in the sweep's pickle, the folder gone with the store, and the
folders of a killed process removed."""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys

import pandas as pd
import pytest

from engine.paths import cache_dir
from engine.protect import get_protector
from engine.releases_on_disk import FOLDER, ReleasesOnDisk, remove_orphans
from engine.sweep import run_sweep
from tests.contract_data import contract_dataset


@pytest.fixture(scope="module")
def sweeps() -> tuple:
    dataset = contract_dataset()
    md = get_protector("md")
    common = {"keep_releases": 2, "use_cache": False, "refine": 2}
    return (
        run_sweep(dataset, md, None, 3, 5, **common),
        run_sweep(dataset, md, None, 3, 5, keep_on_disk=True, **common),
    )


def test_releases_kept_in_files_are_the_ones_kept_in_memory(sweeps) -> None:
    held, on_disk = sweeps
    assert isinstance(on_disk.releases, ReleasesOnDisk) and not isinstance(held.releases, ReleasesOnDisk)
    assert len(on_disk.grid) > len(get_protector("md").knob.default_grid())  # a refining round added values
    assert list(on_disk.releases) == sorted(held.releases) == on_disk.grid  # every round's in the one store
    for knob in on_disk.grid:
        assert len(on_disk.releases[knob]) == 2  # the first two replicates of three
        for a, b in zip(held.releases[knob], on_disk.releases[knob], strict=True):
            pd.testing.assert_frame_equal(a.data, b.data)
            assert (a.changes is None) == (b.changes is None)
            assert a.knob == b.knob and a.replicate == b.replicate and repr(a.details) == repr(b.details)
    files = list(on_disk.releases.folder.iterdir())
    assert len(files) == 2 * len(on_disk.grid) and on_disk.releases.folder.parent == cache_dir() / FOLDER
    pd.testing.assert_frame_equal(held.summary, on_disk.summary)


def test_a_pickled_sweep_carries_no_release_kept_in_files(sweeps) -> None:
    _, on_disk = sweeps
    again = pickle.loads(pickle.dumps(on_disk))
    assert again.releases == {}  # a release not kept is made again when asked
    pd.testing.assert_frame_equal(again.summary, on_disk.summary)


def test_the_folder_goes_with_the_store_and_a_full_disk_keeps_the_release_in_memory(sweeps, monkeypatch) -> None:
    held, _ = sweeps
    store = ReleasesOnDisk()
    folder = store.folder
    knob = held.grid[-1]
    store.add(knob, 0, held.releases[knob][0])
    assert len(list(folder.iterdir())) == 1

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pickle, "dump", full)
    store.add(held.grid[0], 0, held.releases[held.grid[0]][0])
    assert len(list(folder.iterdir())) == 1  # nothing half-written left
    assert store[held.grid[0]][0] is held.releases[held.grid[0]][0]
    assert list(store) == [held.grid[0], knob] and knob in store and 0.123 not in store
    with pytest.raises(KeyError):
        store[0.123]
    next(folder.iterdir()).unlink()  # the cache folder cleared under it: the release is made again, no traceback
    assert store.get(knob) is None
    del store
    gc.collect()
    assert not folder.exists()


def test_folders_of_a_process_that_ended_are_removed_and_others_kept() -> None:
    mine = ReleasesOnDisk()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = cache_dir() / FOLDER / f"{int(ended.stdout)}-abc"
    orphan.mkdir()
    (orphan / "0-0.pickle").write_bytes(b"x")
    assert remove_orphans() >= 1
    assert not orphan.exists() and mine.folder.exists() and mine.folder.name.startswith(f"{os.getpid()}-")
