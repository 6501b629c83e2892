"""Values worked out per text and kept for the texts seen latest, by a digest of the text rather than the text
itself (a process holds no confidential text it does not need): sentence embeddings, sentiment scores."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

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

    def put(self, key: bytes, value: V) -> None:
        self._values[key] = value
        while len(self._values) > self.limit:
            try:
                self._values.popitem(last=False)
            except KeyError:
                break
