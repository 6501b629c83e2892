"""A large sweep's kept releases held in files rather than in memory (`ReleasesOnDisk`).

A sweep keeps the compact release of its first replicates at every knob value (`engine.sweep.run_sweep`'s
``keep_releases``), so that a page shows a release without making it again. On a large table each is the
protected column once more, with its record of changes: a redaction of 20,000 airline-style posts pickles to
6–7 MB a knob value (3 MB of text, up to 3.75 MB of changes), so about ten times that at 200,000, which the
dashboard's server held beside the fit and the measures through its full sweep (issue 53: 4 GB at most).
"""

from __future__ import annotations

import itertools
import os
import pickle
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path

from engine.paths import cache_dir
from engine.protect.base import Release

FOLDER = "kept-releases"
"""The folder of the cache (`engine.paths.cache_dir`) the files are written in: the releases are confidential
(a replaced value's original is in the record of changes), and the cache is where the steward's data stays."""


class ReleasesOnDisk(Mapping[float, list[Release]]):
    """``releases[knob][replicate]`` as `engine.results.SweepResult.releases`, each release pickled to a file of
    its own folder when added and read back when asked (nothing is held in memory). The folder goes when the
    object does (and at exit).

    Pickled — as the dashboard keeps a sweep on disk — it is an empty mapping: the files are this process's, and a
    release not kept is made again when asked (a release depends on the fit, the knob value and the seed alone,
    so it is the same). Where a file cannot be written (a full disk) the release stays in memory."""

    def __init__(self) -> None:
        root = cache_dir() / FOLDER
        root.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._files: dict[float, dict[int, Path]] = {}
        self._held: dict[float, dict[int, Release]] = {}
        self._names = itertools.count()

    def add(self, knob: float, replicate: int, release: Release) -> None:
        """Keep ``release`` as replicate ``replicate`` at ``knob``."""
        path = self.folder / f"{next(self._names)}.pickle"
        try:
            with open(path, "wb") as out:
                pickle.dump(release, out, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError:
            path.unlink(missing_ok=True)
            self._held.setdefault(float(knob), {})[int(replicate)] = release
            return
        self._files.setdefault(float(knob), {})[int(replicate)] = path

    def __getitem__(self, knob: float) -> list[Release]:
        knob = float(knob)
        if knob not in self._files and knob not in self._held:
            raise KeyError(knob)
        found = dict(self._held.get(knob, {}))
        for replicate, path in self._files.get(knob, {}).items():
            try:
                with open(path, "rb") as f:
                    found[replicate] = pickle.load(f)
            except OSError:  # its file gone (the cache folder cleared): not kept, so made again when asked
                raise KeyError(knob) from None
        return [found[m] for m in sorted(found)]

    def __iter__(self) -> Iterator[float]:
        return iter(sorted({*self._files, *self._held}))

    def __len__(self) -> int:
        return len({*self._files, *self._held})

    def __contains__(self, knob: object) -> bool:
        return knob in self._files or knob in self._held

    def __reduce__(self) -> tuple:
        return dict, ()

    def __repr__(self) -> str:
        return f"ReleasesOnDisk({len(self)} knob values in {self.folder})"


def remove_orphans() -> int:
    """Remove the folders of `ReleasesOnDisk` whose process has ended without removing them (it was killed);
    returns how many went. The dashboard calls it when it starts."""
    root = cache_dir() / FOLDER
    gone = 0
    for folder in root.glob("*-*") if root.is_dir() else ():
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            gone += 1
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
