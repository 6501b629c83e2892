"""The README and the pages of docs/ stay short, linked and true: the README fits in 300 lines, every relative
link and image resolves to a file of the repository (and an anchor to a heading of its page), nothing points
outside the repository, and every command their code names exists (a make target, a `textsdc` subcommand and
its flags, a `python -m` module, a script or file path). Fast and offline: nothing is run or fetched."""

from __future__ import annotations

import argparse
import glob
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 300

# Folders at the top of the repository whose paths, named in code, must exist.
TOP_FOLDERS = ("engine", "dashboard", "tests", "benchmarks", "scripts", "assets", "docs", ".streamlit", ".ci")
PLACEHOLDERS = ("...", "…", "<", "{")
# A path in code that starts at one of those folders (`benchmarks/bench_swap.py`, `./scripts/x.py`).
PATH = re.compile(r"(?<![\w./-])(?:\./)?((?:" + "|".join(map(re.escape, TOP_FOLDERS)) + r")/[^\s`'\"),;:]*)")


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
INLINE = re.compile(r"(`+)(.+?)\1", re.S)
# [text](target) and ![alt](target), the target up to a space (an optional title) or the closing bracket.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)


def _prose(text: str) -> str:
    """The text without its fenced and inline code, where brackets are no links."""
    text = FENCE.sub("", text)
    return INLINE.sub("", text)


def _links(text: str) -> list[str]:
    prose = _prose(text)
    return LINK.findall(prose) + REFERENCE.findall(prose) + HTML_LINK.findall(prose)


def _is_external(target: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) is not None  # http:, https:, mailto:, …


def slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, code marks and punctuation dropped, spaces → '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every heading's anchor in ``page``, with GitHub's -1, -2 … for repeated headings."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", _text(page)).splitlines():
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def _inside(path: Path) -> bool:
    try:
        path.resolve().relative_to(ROOT)
    except ValueError:
        return False
    return True


def test_readme_is_at_most_300_lines():
    lines = _text(README).splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_there_are_docs_pages():
    names = {p.name for p in PAGES}
    assert {"parameters.md", "performance.md", "privacy.md", "data.md", "architecture.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_relative_links_resolve_inside_the_repository(page):
    problems = []
    for target in _links(_text(page)):
        if _is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part) if path_part else page
        if not _inside(dest):
            problems.append(f"{target}: outside the repository")
        elif not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.resolve()):
            problems.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not problems, f"{_id(page)}: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_nothing_points_outside_the_repository(page):
    """No link and no path in code or prose leads out of the repository (`../shared/...`, an absolute path):
    a newcomer's clone has only what is in it. Data and papers kept elsewhere are named in words."""
    text = _text(page)
    problems = [m.group(0) for m in re.finditer(r"\bshared/(?:data|papers|DESIGN)\S*", text)]
    for m in re.finditer(r"(?<![\w.])((?:\.\./)+[\w./-]*)", text):
        if not _inside(page.parent / m.group(1)):
            problems.append(m.group(1))
    for target in _links(text):
        if target.startswith("/") or target.startswith("file:"):
            problems.append(target)
    assert not problems, f"{_id(page)} points outside the repository: {sorted(set(problems))}"


# ---- commands named in code -------------------------------------------------------------------------------------


def _code_lines(text: str) -> list[str]:
    """Each command line of the page's code: the lines of fenced blocks (continuations joined, comments
    dropped) and every inline code span as one line."""
    lines = []
    for m in FENCE.finditer(text):
        block = re.sub(r"\\\n\s*", " ", m.group(2))
        for line in block.splitlines():
            lines.append(re.sub(r"(^|\s)#.*$", "", line))
    for m in INLINE.finditer(FENCE.sub("", text)):
        lines.append(m.group(2).replace("\\|", "|").replace("\n", " "))
    return lines


@cache
def _make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set()
    for m in re.finditer(r"^([A-Za-z0-9_.$()/ -]+?)\s*:(?!=)", text, re.M):
        targets.update(t for t in m.group(1).split() if not t.startswith("."))
    return frozenset(targets)


@cache
def _subcommands() -> dict[str, frozenset[str]]:
    """Each `textsdc` subcommand with the option strings its parser accepts (a command with commands of its own,
    `textsdc annotate sample`, those of any of them)."""
    from engine.cli import build_parser

    def options(parser: argparse.ArgumentParser) -> frozenset[str]:
        found = {o for action in parser._actions for o in action.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found.update(*(options(sp) for sp in action.choices.values()))
        return frozenset(found)

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: options(sp) for name, sp in sub.choices.items()}


def _commands(page: Path) -> list[tuple[str, str, str]]:
    """(kind, name, rest of the line) for every command the page's code names."""
    out = []
    for line in _code_lines(_text(page)):
        for m in re.finditer(r"(?:^|[\s;&|(])make\s+((?:[\w.-]+=\S*\s+)*)([A-Za-z][\w.-]*)", line):
            out.append(("make", m.group(2), ""))
        for m in re.finditer(r"(?:^|[\s/;&|(])textsdc\s+([^\s|;&]+)(.*)", line):
            out.append(("textsdc", m.group(1), re.split(r"\s(?:&&|;)\s|\s#", m.group(2))[0]))
        for m in re.finditer(r"(?:^|[\s/])python[\d.]*\s+-m\s+([\w.]+)", line):
            out.append(("module", m.group(1), ""))
        for m in PATH.finditer(line):
            out.append(("path", m.group(1).rstrip("."), ""))
    return out


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_commands_named_in_code_exist(page):
    problems = []
    for kind, name, rest in _commands(page):
        if any(p in name for p in PLACEHOLDERS):
            continue
        if kind == "make" and name not in _make_targets():
            problems.append(f"make {name}: no such target in the Makefile")
        elif kind == "textsdc":
            commands = _subcommands()
            if name.startswith("-"):
                continue  # `textsdc --help`
            if name not in commands:
                problems.append(f"textsdc {name}: no such subcommand")
                continue
            for flag in re.findall(r"(?<![\w-])(--[A-Za-z][\w-]*)", rest):
                if flag not in commands[name]:
                    problems.append(f"textsdc {name} {flag}: no such flag")
        elif kind == "module":
            try:
                found = importlib.util.find_spec(name) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                problems.append(f"python -m {name}: no such module")
        elif kind == "path":
            matches = glob.glob(str(ROOT / name)) if "*" in name else [name] if (ROOT / name).exists() else []
            if not matches:
                problems.append(f"{name}: no such file or folder")
    assert not problems, f"{_id(page)}: " + "; ".join(problems)


def test_the_checks_find_what_they_look_for():
    """The parsers above see the commands and links they are meant to check (a guard against a test that
    passes because it finds nothing)."""
    readme = _commands(README)
    assert ("make", "run", "") in readme and ("make", "test", "") in readme
    assert {n for k, n, _ in readme if k == "textsdc"} >= {"datasets", "sweep", "release", "verify"}
    assert any(k == "textsdc" and n == "sweep" and "--grid" in r for k, n, r in readme)
    assert any(k == "module" for p in PAGES for k, _, _ in _commands(p))
    assert any(k == "path" for p in PAGES for k, _, _ in _commands(p))
    assert "docs/images/protect.png" in _links(_text(README))
    assert slug("The shrinkage GLM's path beside `glmnet`") == "the-shrinkage-glms-path-beside-glmnet"
    fake = "```sh\n.venv/bin/textsdc sweep --data x \\\n    --no-such-flag 1 --out y  # a comment --nor-this\n```\n"
    (line,) = [c for c in _code_lines(fake) if "textsdc" in c]
    assert "--no-such-flag" in line and "--nor-this" not in line
