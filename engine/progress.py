"""How long work reports how far it has got: the callback every stage takes (here, below every other module,
so that text processing can report without importing the methods)."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]
"""A progress callback: (done, total, what is being done). ``what`` names the stage and may end with a detail in
parentheses that changes as the stage goes on ("training the text generator (loss 5.21)")."""


def no_progress(done: int, total: int, what: str = "") -> None:
    """The progress callback that reports nothing."""
