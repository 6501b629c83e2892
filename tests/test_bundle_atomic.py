"""A bundle is written whole or not at all (engine/export/staging.py), and what it holds may leave
(engine/export/identifiers.py): issue 10."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import engine.export.staging as staging
from engine.errors import ConfigError
from engine.export.staging import recover, staged_folder
from engine.export.verify import verify_checksums
from tests.test_export import do_export, make_dataset


def _bundle(folder: Path, tmp_path: Path, **kw):
    """A bundle written into ``folder``, replacing the one there (the tests of how a bundle is replaced)."""
    return do_export(folder, tmp_path / "audit.sqlite", replace=True, **kw)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name)


def test_a_file_or_a_folder_of_other_files_is_refused_before_any_work(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        _bundle(tmp_path / "f", tmp_path)
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"\xff")
    with pytest.raises(ConfigError, match="not a textsdc bundle"):
        _bundle(other, tmp_path)
    assert [p.name for p in other.iterdir()] == ["cat.jpg"]


def test_a_bundle_is_replaced_only_when_asked(tmp_path):
    out = tmp_path / "B"
    do_export(out, tmp_path / "audit.sqlite")
    before = _snapshot(out)
    with pytest.raises(ConfigError, match="holds a bundle already; choose a new folder, or replace that bundle"):
        do_export(out, tmp_path / "audit.sqlite", replay_data="another")
    assert _snapshot(out) == before and _leftovers(tmp_path) == []
    do_export(out, tmp_path / "audit.sqlite", replace=True, replay_data="another")
    assert json.loads((out / "manifest.json").read_text())["replay"].startswith("textsdc release --data another ")


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    out = tmp_path / "B"
    with open(tmp_path / ".B.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ConfigError, match="another export is writing to"):
            _bundle(out, tmp_path)
    assert not out.exists()
    _bundle(out, tmp_path)
    assert verify_checksums(out) == []


def test_a_failure_midway_leaves_the_old_bundle_byte_identical(tmp_path, monkeypatch):
    out = tmp_path / "B"
    _bundle(out, tmp_path)
    before = _snapshot(out)

    def broken(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("engine.export.bundle.pq.write_table", broken)
    with pytest.raises(ConfigError, match="nothing was replaced: .*No space left on device"):
        _bundle(out, tmp_path, replay_data="another")
    assert _snapshot(out) == before and verify_checksums(out) == []
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2-exchange", "two-renames"])
def test_a_new_bundle_replaces_the_old_one_whole(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(staging, "_exchange", lambda a, b: False)
    out = tmp_path / "B"
    _bundle(out, tmp_path)
    (out / "changes.csv").unlink()  # not in the next release: it must not survive from the old one
    (out / "stray.txt").write_text("old")
    res = _bundle(out, tmp_path, replay_data="second")
    assert json.loads((out / "manifest.json").read_text())["replay"].startswith("textsdc release --data second ")
    assert not (out / "stray.txt").exists() and verify_checksums(out) == []
    assert sorted(res.files) == sorted(p.name for p in out.iterdir())
    assert _leftovers(tmp_path) == []


def test_a_crash_between_the_two_renames_is_recovered(tmp_path):
    out = tmp_path / "B"
    _bundle(out, tmp_path)
    before = _snapshot(out)
    os.rename(out, tmp_path / ".B.old-abc")  # killed after the first rename of the fallback
    (tmp_path / ".B.partial-xyz").mkdir()  # and the new bundle half-written
    recover(out)
    assert _snapshot(out) == before and _leftovers(tmp_path) == []


def test_an_error_inside_the_block_removes_the_temporary_folder(tmp_path):
    with pytest.raises(RuntimeError):
        with staged_folder(tmp_path / "B") as tmp:
            (tmp / "release.csv").write_text("half")
            raise RuntimeError("writer failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".B.lock"]


def test_verify_bundle_finds_a_changed_a_missing_and_an_unlisted_file(tmp_path):
    out = tmp_path / "B"
    _bundle(out, tmp_path)
    (out / "release.csv").write_text("tampered")
    (out / "report.html").unlink()
    (out / "extra.txt").write_text("x")
    problems = verify_checksums(out)
    assert any(p.startswith("release.csv: changed") for p in problems)
    assert any(p.startswith("report.html: missing") for p in problems)
    assert any(p.startswith("extra.txt: not listed") for p in problems)


def test_the_internal_review_report_is_written_beside_the_bundle_not_in_it(tmp_path):
    out = tmp_path / "B"
    res = _bundle(out, tmp_path)
    assert res.internal_report == tmp_path / "B.internal-review.html" and res.internal_report.is_file()
    assert "Internal review document" in res.internal_report.read_text()
    assert res.internal_report.name not in res.files and not (out / res.internal_report.name).exists()


def test_the_author_column_is_pseudonymized_consistently_and_the_manifest_lists_every_column(tmp_path):
    out = tmp_path / "B"
    res = _bundle(out, tmp_path)
    released = (out / "release.csv").read_text()
    for author in ("u1", "u2", "u3"):
        assert f",{author}," not in released and f"{author}\n" not in released
    import pandas as pd

    users = pd.read_csv(out / "release.csv")["user"]
    assert users.nunique() == 3 and users[0] == users[2]  # u1 wrote records 0 and 2
    assert all(u.startswith("user-") for u in users)
    columns = res.record.columns
    assert columns["user"].startswith("pseudonymized") and columns["text"] == "protected by the method"
    assert set(columns) == {"text", "user", "state"}


@pytest.mark.parametrize("treatment", ["drop", "keep"])
def test_the_schema_can_drop_or_keep_the_author_column(tmp_path, treatment):
    import dataclasses

    d = make_dataset()
    d = dataclasses.replace(d, schema=dataclasses.replace(d.schema, author_release=treatment))
    res = _bundle(tmp_path / "B", tmp_path, dataset=d)
    header = (tmp_path / "B" / "release.csv").read_text().splitlines()[0]
    if treatment == "drop":
        assert "user" not in header.split(",") and res.record.columns["user"] == "dropped"
    else:
        assert "u1" in (tmp_path / "B" / "release.csv").read_text()
        assert "in clear" in res.record.columns["user"]
        assert any("released in clear" in w for w in res.record.warnings)
        assert "released in clear" in (tmp_path / "B" / "report.html").read_text()


@pytest.mark.slow
def test_a_release_killed_at_any_moment_leaves_a_complete_bundle(tmp_path, tiny_files):
    """Export once, then re-export another knob into the same folder and SIGKILL it at 24 moments spread over
    its run: after every kill the folder in place verifies against its manifest and is the old or the new."""
    out = tmp_path / "B"
    env = {**os.environ, "TEXTSDC_CACHE_DIR": str(tmp_path / "cache")}
    data = str(tiny_files.parent / "data.csv")

    def command(level: int) -> list[str]:
        return [sys.executable, "-m", "engine.cli", "release", "--data", data, "--schema", str(tiny_files),
                "--method", "redact", "--no-use-ner", "--knob", str(level), "--out", str(out), "--replace",
                "--ledger-override", "the same folder re-exported to test atomic writes"]  # fmt: skip

    subprocess.run(command(4), env=env, check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run(command(1), env=env, check=True, capture_output=True)
    duration = time.perf_counter() - start
    seen = {"old": 0, "new": 0}
    for i in range(24):
        current = json.loads((out / "manifest.json").read_text())["knob"]["value"]
        target = 4.0 if current == 1.0 else 1.0
        proc = subprocess.Popen(command(int(target)), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * 1.1 * i / 23)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        recover(out)  # what the next export does first, under the lock
        assert verify_checksums(out) == [], i
        level = json.loads((out / "manifest.json").read_text())["knob"]["value"]
        assert level in (current, target)
        seen["new" if level == target else "old"] += 1
    print(f"kill test: {sum(seen.values())} kills over {duration:.2f} s; {seen}")
    assert seen["old"] and seen["new"]
