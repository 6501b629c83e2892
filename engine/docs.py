"""The tables of ``docs/parameters.md`` written from the declarations: the methods' parameters and the measures'
settings. ``python -m engine.docs`` rewrites them in place, and a test checks that the page holds what this module
writes."""

from __future__ import annotations

import sys
from pathlib import Path

from engine.measures import registry
from engine.protect import METHODS
from engine.protect.params import CORRECTIONS, GUARD_OFF, RUN_PARAMETERS, Param

BEGIN, END = "<!-- method-parameters:begin -->", "<!-- method-parameters:end -->"
SETTINGS_BEGIN, SETTINGS_END = "<!-- measure-settings:begin -->", "<!-- measure-settings:end -->"
PAGE = Path(__file__).resolve().parent.parent / "docs" / "parameters.md"
"""The page holding the tables, each between its markers."""


def _default(p: Param) -> str:
    if p.default is None:
        return "from the data"
    if p.many:
        return ",".join(map(str, p.default)) or "none"
    if p.type is bool:
        return "on" if p.default else "off"
    return str(p.default)


def method_parameter_table() -> str:
    """A Markdown table: per registered method its knob, then each parameter's flag, default and meaning."""
    rows = ["| method | knob | flag | default | meaning |", "|---|---|---|---|---|"]
    for name, cls in METHODS.items():
        knob = f"{cls.knob.symbol}: {cls.knob.label.lower()}"
        own = [p for p in cls.parameters if p.name not in RUN_PARAMETERS]
        if not own:
            rows.append(f"| `{name}` | {knob} | — | — | — |")
        for i, p in enumerate(own):
            expert = " (expert)" if p.expert else ""
            rows.append(
                f"| {f'`{name}`' if i == 0 else ''} | {knob if i == 0 else ''} | `{p.flag}`{expert} | "
                f"{_default(p)} | {p.help}; {p.accepted} |"
            )
    for p in (GUARD_OFF, CORRECTIONS):
        rows.append(f"| every method | | `{p.flag}` (expert) | {_default(p)} | {p.help}; {p.accepted} |")
    return "\n".join(rows)


def measure_settings_table() -> str:
    """A Markdown table: each setting the registered measures declare, its flag, default, meaning and the
    measures that read it."""
    rows = ["| flag | default | meaning | read by |", "|---|---|---|---|"]
    for p in registry.setting_parameters():
        readers = ", ".join(f"`{m.id}`" for m in registry.MEASURES if p in m.declared_settings())
        rows.append(f"| `{p.flag}` | {_default(p)} | {p.help}; {p.accepted} | {readers} |")
    return "\n".join(rows)


def _between(page: str, begin: str, end: str, table: str) -> str:
    head, sep, rest = page.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"the page has no {begin} … {end} section")
    return f"{head}{begin}\n{table}\n{end}{tail}"


def with_table(page: str) -> str:
    """``page`` with the text between each pair of markers replaced by the current table."""
    page = _between(page, BEGIN, END, method_parameter_table())
    return _between(page, SETTINGS_BEGIN, SETTINGS_END, measure_settings_table())


def main() -> int:
    PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the method parameters and the measure settings into {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
