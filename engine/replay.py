"""The `textsdc release` command that writes a given release again, from the methods' and measures'
declarations: the CLI's bundles and the dashboard's exports record it the same way."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from engine.measures.options import OPTION_PARAMETERS, MeasureOptions
from engine.protect import METHODS


def replay_command(
    *,
    data: str,
    method: str,
    params: Mapping[str, Any],
    knob: float,
    seed: int,
    replicates: int,
    out: str,
    replicate: int = 0,
    options: MeasureOptions | None = None,
    schema: str | None = None,
    encoding: str | None = None,
    with_frontier: bool = False,
) -> str:
    """The shell command that replays the release: every method parameter and measure setting that is not
    its default, the knob with ten significant digits (a λ of the path snaps back to it), seed and M."""
    parts = ["textsdc", "release", "--data", data]
    if schema:
        parts += ["--schema", schema]
    if encoding:
        parts += ["--encoding", encoding]
    parts += ["--method", method]
    for p in METHODS[method].parameters:
        parts += p.to_cli(params.get(p.name, p.default))
    values = (options or MeasureOptions()).values()
    for p in OPTION_PARAMETERS:
        parts += p.to_cli(values[p.name])
    parts += [
        "--knob",
        f"{knob:.10g}",
        "--replicates",
        str(replicates),
        "--replicate",
        str(replicate),
        "--seed",
        str(seed),
        "--out",
        out,
    ]
    if with_frontier:
        parts.append("--with-frontier")
    return shlex.join(parts)
