"""Progress on the command line: a tqdm bar on stderr per stage of long work, cleared before a message."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from tqdm import tqdm

from engine.progress import Progress


@dataclass
class _Bar:
    bar: tqdm | None = None
    stage: str | None = None


OPEN_BARS: list[_Bar] = []
"""The bars of the progress callbacks made, so that an error can clear them first (`close_bars`)."""


def progress_bar(desc: str) -> Progress:
    """A progress callback drawing a tqdm bar on stderr, one bar per stage."""
    state = _Bar()
    OPEN_BARS.append(state)

    def update(done: int, total: int, what: str = "") -> None:
        stage = what.partition(" (")[0]  # a detail in parentheses (a loss) belongs to the stage's bar
        if state.stage != stage or state.bar is None or state.bar.total != total:
            if state.bar is not None:
                state.bar.close()
            state.bar = tqdm(total=total, desc=what or desc, file=sys.stderr, leave=False, dynamic_ncols=True)
            state.stage = stage
        bar = state.bar
        if what != bar.desc:
            bar.set_description_str(what, refresh=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
            state.bar = None

    return update


def close_bars() -> None:
    """Clear any bar left open by work that stopped early, so a message starts on a clean line."""
    while OPEN_BARS:
        state = OPEN_BARS.pop()
        if state.bar is not None:
            state.bar.close()
            state.bar = None
