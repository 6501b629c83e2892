"""The table of method parameters in ``docs/parameters.md``, written from the methods' declarations:
``python -m engine.docs`` rewrites it in place, and a test checks that the page holds what this module writes."""

from __future__ import annotations

import sys
from pathlib import Path

from engine.protect import METHODS
from engine.protect.params import Param

BEGIN, END = "<!-- method-parameters:begin -->", "<!-- method-parameters:end -->"
PAGE = Path(__file__).resolve().parent.parent / "docs" / "parameters.md"
"""The page holding the table, between the markers."""


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
        if not cls.parameters:
            rows.append(f"| `{name}` | {knob} | — | — | — |")
        for i, p in enumerate(cls.parameters):
            expert = " (expert)" if p.expert else ""
            rows.append(
                f"| {f'`{name}`' if i == 0 else ''} | {knob if i == 0 else ''} | `{p.flag}`{expert} | "
                f"{_default(p)} | {p.help}; {p.accepted} |"
            )
    return "\n".join(rows)


def with_table(page: str) -> str:
    """``page`` with the text between the markers replaced by the current table."""
    head, sep, rest = page.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the page has no {BEGIN} … {END} section")
    return f"{head}{BEGIN}\n{method_parameter_table()}\n{END}{tail}"


def main() -> int:
    PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the method parameters into {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
