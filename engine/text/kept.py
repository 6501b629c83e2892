"""Values worked out per text and kept for the texts seen latest, by a digest of the text rather than the text
itself (a process holds no confidential text it does not need): sentence embeddings, sentiment scores; and
arrays shared by the worker processes of one sweep while it runs (`sharing`, `SharedByText`)."""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

V = TypeVar("V")


def text_key(text: str) -> bytes:
    """A 16-byte digest of ``text`` (lone surrogates included, as a text column may hold them)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class KeptByText(Generic[V]):
    """At most ``limit`` values by `text_key`; the one used longest ago goes first. Safe for dashboard sessions
    sharing a process: a lookup that loses a race to an eviction only recomputes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._values: OrderedDict[bytes, V] = OrderedDict()

    def __contains__(self, key: bytes) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: bytes) -> V | None:
        value = self._values.get(key)
        if value is not None:
            try:
                self._values.move_to_end(key)
            except KeyError:  # evicted by another session meanwhile
                pass
        return value

    def clear(self) -> None:
        self._values.clear()

    def put(self, key: bytes, value: V) -> None:
        self._values[key] = value
        while len(self._values) > self.limit:
            try:
                self._values.popitem(last=False)
            except KeyError:
                break


_shared: ContextVar[Path | None] = ContextVar("shared", default=None)
"""The folder the worker processes of one sweep share values in (`sharing`), None outside one; per thread, as a
sweep's share run in the calling process (`engine.workers.map_reporting`'s ``here``) sets it in a thread."""
WAIT_SECONDS = 300.0
"""How long a process waits for values another process claimed before working them out itself."""
POLL_SECONDS = 0.05


@contextmanager
def sharing(folder: str | Path | None) -> Iterator[None]:
    """Within the block, `SharedByText` stores in ``folder`` (a private temporary folder that the worker processes
    of one sweep are given; None: nothing shared)."""
    token = _shared.set(None if folder is None else Path(folder))
    try:
        yield
    finally:
        _shared.reset(token)


class SharedByText:
    """Arrays by `text_key`, shared by the processes of one sweep through the `sharing` folder, so that no two
    of them work out the same text: a process claims a text (a file created exclusively) before working it out
    and publishes the array when done; a text another process claimed is waited for. The swap's releases at
    higher rates rewrite the chunks of the lower ones alike, and two workers embedded most of them twice.
    Unusable (``active`` false) outside a `sharing` block."""

    def __init__(self, kind: str) -> None:
        folder = _shared.get()
        self.folder = None if folder is None else folder / kind
        if self.folder is not None:
            self.folder.mkdir(exist_ok=True)

    @property
    def active(self) -> bool:
        return self.folder is not None

    def _path(self, key: bytes, suffix: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{key.hex()}{suffix}"

    def collect(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The arrays already published for ``keys``."""
        out = {}
        for key in keys:
            path = self._path(key, ".npy")
            if path.exists():
                out[key] = np.load(path)
        return out

    def claim(self, key: bytes) -> bool:
        """Whether this process is the first to claim ``key`` (and so works it out and publishes it)."""
        try:
            os.close(os.open(self._path(key, ".claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            return False
        return True

    @contextmanager
    def released_on_error(self, keys: Sequence[bytes]) -> Iterator[None]:
        """Within the block, this process works out ``keys`` it claimed; on an error their claims are withdrawn,
        so that the other processes work them out rather than wait for them."""
        try:
            yield
        except BaseException:
            for key in keys:
                if not self._path(key, ".npy").exists():
                    self._path(key, ".claim").unlink(missing_ok=True)
            raise

    def publish(self, key: bytes, value: np.ndarray) -> None:
        """Make ``value`` readable to the other processes: written whole, then renamed (no fsync: the folder lives
        only as long as the sweep)."""
        path = self._path(key, ".npy")
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        with open(tmp, "wb") as f:
            np.save(f, value)
        os.replace(tmp, path)

    def wait(
        self, keys: Sequence[bytes], compute: Callable[[list[bytes]], dict[bytes, np.ndarray]]
    ) -> dict[bytes, np.ndarray]:
        """The arrays of ``keys`` (claimed by other processes) once published; from ``compute`` those whose claim
        was withdrawn, and after `WAIT_SECONDS` the ones still missing."""
        out: dict[bytes, np.ndarray] = {}
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            out |= self.collect([k for k in keys if k not in out])
            missing = [k for k in keys if k not in out]
            if not missing:
                return out
            withdrawn = [k for k in missing if not self._path(k, ".claim").exists() and self.claim(k)]
            if withdrawn:
                with self.released_on_error(withdrawn):
                    for k, value in compute(withdrawn).items():
                        self.publish(k, value)
                        out[k] = value
                continue
            if time.monotonic() > deadline:
                return out | compute(missing)
            time.sleep(POLL_SECONDS)
