"""Shared fixtures: a private cache folder for the whole run, a tiny dataset with known structure, and the
leakage scan of every bundle a test exports (issue 10)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def needs_shared_files(*files: str | Path) -> None:
    """Skip the calling test unless every one of ``files`` (paths under ../shared/data) is there: a fresh clone
    has no ../shared, and a partial copy may hold its SOURCES.md without the file a script reads."""
    missing = [str(f) for f in files if not (SHARED_DATA / f).is_file()]
    if missing:
        pytest.skip(
            f"the raw data files {', '.join(missing)} under {SHARED_DATA} are absent (not part of the repository)"
        )


BROWSER = os.environ.get("TEXTSDC_CHROMIUM")
"""The browser the reviewer PDF is printed with as the run started (None: found on the PATH)."""


@pytest.fixture(scope="session", autouse=True)
def _no_pdf_unless_asked():
    """Bundles the tests write carry no PDF (printing takes a second or two each); the tests of the PDF ask for
    one with the `with_pdf` fixture."""
    os.environ["TEXTSDC_CHROMIUM"] = "none"
    yield
    if BROWSER is None:
        os.environ.pop("TEXTSDC_CHROMIUM", None)
    else:
        os.environ["TEXTSDC_CHROMIUM"] = BROWSER


@pytest.fixture
def with_pdf(monkeypatch):
    """The browser that prints the reviewer PDF, as a user's machine would find it; skips without one."""
    from engine.report.pdf import find_browser

    if BROWSER is None:
        monkeypatch.delenv("TEXTSDC_CHROMIUM")
    else:
        monkeypatch.setenv("TEXTSDC_CHROMIUM", BROWSER)
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium on this machine to print the reviewer PDF")
    return browser


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Fits and the audit log go to a temporary folder, never the user's cache."""
    folder = tmp_path_factory.mktemp("textsdc-cache")
    old = os.environ.get("TEXTSDC_CACHE_DIR")
    os.environ["TEXTSDC_CACHE_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("TEXTSDC_CACHE_DIR", None)
    else:
        os.environ["TEXTSDC_CACHE_DIR"] = old


@pytest.fixture(scope="module", autouse=True)
def _module_ledger(tmp_path_factory):
    """A release ledger of the module's own for the exports its module-scoped fixtures make."""
    old = os.environ.get("TEXTSDC_LEDGER")
    os.environ["TEXTSDC_LEDGER"] = str(tmp_path_factory.mktemp("ledger") / "ledger.json")
    yield
    if old is None:
        os.environ.pop("TEXTSDC_LEDGER", None)
    else:
        os.environ["TEXTSDC_LEDGER"] = old


@pytest.fixture(autouse=True)
def _test_ledger(monkeypatch, tmp_path_factory):
    """A release ledger of the test's own (`TEXTSDC_LEDGER`): exports of the same data by other tests are not
    earlier releases of it."""
    monkeypatch.setenv("TEXTSDC_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.json"))


def tiny_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six authors, each with a signature hashtag and friend handle; one external text per author.

    Apart from the signature identifiers every author writes the same words, so redacting handles and hashtags
    (level 1) removes everything that tells the authors apart.
    """
    rows, ext = [], []
    common = ["the flight was late again", "waiting at the gate now", "thanks for the help today", "my bag is lost"]
    for i in range(6):
        a = f"user{i}"
        for j, words in enumerate(common):
            rows.append(
                {
                    "text": f"@friend{i} {words} #tag{i}",
                    "user": a,
                    "airline": ["Delta", "United"][i % 2],
                    "mood": ["good", "bad", "meh"][(i + j) % 3],
                }
            )
        ext.append({"text": f"#tag{i} hello @friend{i} see you soon", "user": a})
    return pd.DataFrame(rows), pd.DataFrame(ext)


SCANNED: list[str] = []
REPLAYED: list[str] = []


def _replayable(folder: Path) -> bool:
    """Whether the bundle's replay command names data the CLI can read from here (a demo or a file that exists;
    not a dataset a test made in memory)."""
    import shlex

    from engine.data.demos import is_demo
    from engine.record.manifest import read_record

    words = shlex.split(read_record(folder).replay)
    paths = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--data", "--schema")]
    return bool(paths) and all(is_demo(p) or Path(p).is_file() for p in paths)


@pytest.fixture(autouse=True)
def _scan_every_bundle(monkeypatch):
    """Every bundle written through `export_release` in this process (the CLI's `release`, the dashboard's
    Export page, the export tests) is read back, scanned for leaks (tests/leakage.py), its files checked
    against the manifest's checksums and its tables against the manifest's claims (k, ℓ, t) before the test goes
    on, and made again by its replay command (`textsdc verify`) when its data can be read from here; a finding
    fails the test that exported it."""
    import engine.export.bundle as bundle
    from engine.export.claims import verify_claims
    from engine.export.ledgered import LedgerUse
    from engine.export.verify import REPLAY_PREFIX, verify_checksums, verify_replay
    from engine.ledger.store import read_ledger
    from tests.leakage import ledger_leaks, scan_bundle

    real = bundle.export_release

    def scanned(
        out_dir,
        report,
        audit_log=None,
        pdf=True,
        key=None,
        key_out=None,
        replace=False,
        ledger=LedgerUse(),  # noqa: B008
    ):
        result = real(out_dir, report, audit_log, pdf, key, key_out, replace, ledger)
        kept = read_ledger(ledger.path)
        leaked = ledger_leaks(result.out_dir, kept, tuple(report.release.tables))
        assert not leaked, f"the bundle in {result.out_dir} holds what only the release ledger may: {leaked}"
        release = report.release
        findings = scan_bundle(
            result.out_dir,
            report.dataset,
            release.changes,
            release.changes_ship,
            release.withheld,
            tuple(release.tables),
        )
        assert not findings, f"the bundle in {result.out_dir} leaks: {findings}"
        differences = verify_checksums(result.out_dir)  # `textsdc verify --no-replay` on every bundle written
        assert not differences, f"the bundle in {result.out_dir} does not match its manifest: {differences}"
        unmet = [c.line() for c in verify_claims(result.out_dir) if not c.holds]  # its tables' k, ℓ, t
        assert not unmet, f"the bundle in {result.out_dir} does not bear out its claims: {unmet}"
        if Path(result.out_dir).parent.name.startswith(REPLAY_PREFIX):  # a replay's own bundle, for `verify`
            return result
        SCANNED.append(str(result.out_dir))
        if _replayable(result.out_dir):
            again = verify_replay(result.out_dir, key=key)  # `textsdc verify` with the key of its pseudonyms
            assert not again.differences and not again.not_replayed, (
                f"the bundle in {result.out_dir} is not made again by its replay: {again}"
            )
            REPLAYED.append(str(result.out_dir))
        return result

    scanned.__wrapped__ = real  # type: ignore[attr-defined] # what it wraps, for who inspects it
    for name, module in list(sys.modules.items()):
        if (name.startswith(("engine.", "dashboard.", "tests.", "test_")) or name == "engine") and getattr(
            module, "export_release", None
        ) is real:
            monkeypatch.setattr(module, "export_release", scanned)


def pytest_terminal_summary(terminalreporter):
    """The counts issue 10 asks every CI run to print: bundles scanned for leaks, cases the fuzz suite made."""
    terminalreporter.write_line(
        f"leakage scan: {len(SCANNED)} exported bundles scanned and their checksums verified, {len(REPLAYED)} of "
        "them made again byte for byte by their replay command (the others hold data a test made in memory); a "
        "leak or a mismatch fails the test that exported it"
    )
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.test_fuzz")  # as pytest imported it
    if fuzz is not None and fuzz.CASES:
        terminalreporter.write_line(fuzz.fuzz_summary())


@pytest.fixture
def tiny_dataset() -> Dataset:
    return make_tiny_dataset()


def make_tiny_dataset() -> Dataset:
    """The tiny dataset (also for fixtures of a wider scope than a test)."""
    frame, ext = tiny_frames()
    schema = Schema(
        text="text",
        author="user",
        fields=(FieldSpec("airline", "categorical", "key"), FieldSpec("mood", "categorical", "sensitive")),
    )
    return Dataset("tiny", frame, schema, ext, source="tests")


@pytest.fixture
def tiny_files(tmp_path) -> Path:
    """The tiny dataset as data.csv + external.csv + schema.toml in a folder; returns the schema path."""
    frame, ext = tiny_frames()
    frame.to_csv(tmp_path / "data.csv", index=False)
    ext.to_csv(tmp_path / "external.csv", index=False)
    (tmp_path / "schema.toml").write_text(
        'text = "text"\nauthor = "user"\n\n[fields.airline]\nkind = "categorical"\nrole = "key"\n\n'
        '[fields.mood]\nkind = "categorical"\nrole = "sensitive"\n\n[external]\nfile = "external.csv"\n'
    )
    return tmp_path / "schema.toml"


LONG_TESTS = "TEXTSDC_LONG_TESTS"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``long`` (tens of minutes on the raw data of ../shared) run only when TEXTSDC_LONG_TESTS=1."""
    if os.environ.get(LONG_TESTS) == "1":
        return
    skip = pytest.mark.skip(reason=f"a long run on ../shared data: set {LONG_TESTS}=1 to run it")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
