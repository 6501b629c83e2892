"""The demo datasets shipped in ``assets/demo/<name>/``: their names, titles, licences and record counts."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.paths import ASSETS_DIR

DEMOS_DIR = ASSETS_DIR / "demo"


@dataclass(frozen=True)
class DemoInfo:
    """One demo dataset in ``assets/demo/<name>/``."""

    name: str
    title: str
    description: str
    n_records: int
    n_external: int
    licence: str
    path: Path


def demo_names() -> list[str]:
    """Names of the demo datasets, sorted."""
    if not DEMOS_DIR.is_dir():
        return []
    return sorted(p.name for p in DEMOS_DIR.iterdir() if (p / "data.csv").is_file() and (p / "schema.toml").is_file())


def is_demo(name: str) -> bool:
    return name in demo_names()


def list_demos() -> list[DemoInfo]:
    """Every demo with its title, description, licence and record counts (read from its files)."""
    infos = []
    for name in demo_names():
        folder = DEMOS_DIR / name
        meta = _demo_meta(folder)
        schema = Schema.from_toml(folder / "schema.toml")
        n_records = _count_csv_rows(folder / "data.csv")
        n_external = 0
        if schema.external is not None and schema.external.file:
            n_external = _count_csv_rows(folder / schema.external.file)
        elif schema.external is not None:
            from engine.data.load import load_dataset  # load resolves demo names through this module

            ds = load_dataset(name)
            n_records, n_external = ds.n_records, 0 if ds.external is None else len(ds.external)
        infos.append(DemoInfo(name, meta["title"], meta["description"], n_records, n_external, meta["licence"], folder))
    return infos


def _demo_meta(folder: Path) -> dict[str, str]:
    path = folder / "demo.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    return {
        "title": str(raw.get("title", folder.name)),
        "description": str(raw.get("description", "")),
        "licence": str(raw.get("licence", "unknown")),
    }


def _count_csv_rows(path: Path) -> int:
    st = path.stat()
    return _count_csv_rows_cached(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _count_csv_rows_cached(path: str, _mtime_ns: int, _size: int) -> int:
    return len(pd.read_csv(path, usecols=[0], dtype=str, keep_default_na=False))
