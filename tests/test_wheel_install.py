"""The built wheel is complete: it holds every package and the demo datasets, so an installed textsdc (not an
editable one) lists and loads the demos.

The slow test builds the wheel from a copy of the source tree without build isolation (setuptools comes from
the test extras, so nothing is downloaded), installs it with --no-deps into a fresh venv made without pip, and
runs it from an empty folder with PYTHONPATH naming this interpreter's site-packages for the dependencies.
Python does not process .pth files in PYTHONPATH folders, so the editable install's finder there does not load
and the source tree cannot be imported; the test checks that `engine` comes from the new venv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ["airline-tweets", "clothing-reviews", "earnings-calls", "nyc-airbnb", "twitter-profiles"]
# Top-level entries of a working tree that a clean clone does not have, or that the build does not read.
_NOT_COPIED = {
    ".git",
    ".venv",
    "build",
    "dist",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    ".textsdc-cache",
    "out",
    "exports",
    "node_modules",
}
_BACKEND_WARNING = re.compile(r"\w*Warning:|^\s*warning:", re.MULTILINE)  # pip's own notes say "WARNING:"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _source_packages() -> set[str]:
    """Every folder of engine/ and dashboard/ that holds a module, as a dotted package name."""
    found = set()
    for top in ("engine", "dashboard"):
        for folder in [ROOT / top, *(ROOT / top).rglob("*")]:
            if folder.is_dir() and "__pycache__" not in folder.parts and any(folder.glob("*.py")):
                found.add(".".join(folder.relative_to(ROOT).parts))
    return found


def test_the_wheel_lists_every_package_of_the_source_tree():
    setuptools = _pyproject()["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    mapped = set(setuptools.get("package-dir", {}))
    missing = sorted(_source_packages() - listed)
    assert not missing, f"add these packages to [tool.setuptools] packages in pyproject.toml: {missing}"
    stale = sorted(p for p in listed - mapped if not (ROOT / p.replace(".", "/")).is_dir())
    assert not stale, f"pyproject.toml lists packages that no longer exist: {stale}"
    for package, folder in setuptools.get("package-dir", {}).items():
        assert package in listed and (ROOT / folder).is_dir(), (package, folder)


def test_assets_are_found_in_the_source_tree():
    from engine.data.demos import DEMOS_DIR
    from engine.paths import ASSETS_DIR

    assert ASSETS_DIR == ROOT / "assets" and DEMOS_DIR == ROOT / "assets" / "demo"


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{result.stdout}\n{result.stderr}"
    return result


def _copy_source(dest: Path) -> Path:
    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".egg-info"))}
        return skip | (_NOT_COPIED & set(names) if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.mark.slow
def test_installed_wheel_lists_and_loads_the_demos(tmp_path):
    src = _copy_source(tmp_path / "src")
    wheels = tmp_path / "wheels"
    build_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # else a harmless warning
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-v",
            "-w",
            str(wheels),
        ],
        cwd=tmp_path,
        env=build_env,
    )
    warnings = [line for line in (built.stdout + built.stderr).splitlines() if _BACKEND_WARNING.search(line)]
    assert not warnings, "the build backend warned:\n" + "\n".join(warnings)
    (wheel,) = wheels.glob("textsdc-*.whl")

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
            str(wheel),
        ]
    )

    paths = sysconfig.get_paths()
    dependencies = os.pathsep.join(dict.fromkeys([paths["purelib"], paths["platlib"]]))
    env = {
        **os.environ,
        "PYTHONPATH": dependencies,
        "PYTHONNOUSERSITE": "1",
        "TEXTSDC_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("PYTHONHOME", None)
    run_dir = tmp_path / "run"
    run_dir.mkdir()

    listed = _run([str(python), "-m", "engine.cli", "datasets"], cwd=run_dir, env=env).stdout
    names = [line.split()[0] for line in listed.splitlines() if line.strip()]
    assert names == DEMOS, listed
    script = venv / ("Scripts/textsdc.exe" if os.name == "nt" else "bin/textsdc")
    assert _run([str(script), "datasets"], cwd=run_dir, env=env).stdout == listed

    probe = (
        "import json, engine, engine.paths\n"
        "from engine.data.load import load_dataset\n"
        "ds = load_dataset('airline-tweets')\n"
        "print(json.dumps({'engine': engine.__file__, 'assets': str(engine.paths.ASSETS_DIR),\n"
        "                  'records': ds.n_records, 'external': len(ds.external), 'source': ds.source}))\n"
    )
    seen = json.loads(_run([str(python), "-c", probe], cwd=run_dir, env=env).stdout)
    venv_dir = venv.resolve()
    assert Path(seen["engine"]).resolve().is_relative_to(venv_dir), seen  # not the source tree
    assert Path(seen["assets"]).resolve().is_relative_to(venv_dir), seen
    assert seen["source"] == "airline-tweets" and seen["records"] > 0 and seen["external"] == 300, seen
