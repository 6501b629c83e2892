"""`textsdc verify`: a bundle's checksums and its replay."""

import json

import pytest

from engine.cli import main


@pytest.fixture
def bundle(tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    out = tmp_path / "bundle"
    args = ["release", *data, "--method", "redact", "--no-use-ner", "--knob", "2", "--seed", "5", "--out", str(out)]
    assert main([*args, "--audit-log", str(tmp_path / "audit.sqlite")]) == 0
    return out


def test_an_untouched_bundle_verifies_and_its_replay_makes_the_same_files(bundle, capsys):
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 0
    assert "every file matches its checksum; the replay makes the same files" in capsys.readouterr().out


def test_one_byte_changed_fails_and_names_the_file(bundle, capsys):
    path = bundle / "release.csv"
    data = bytearray(path.read_bytes())
    data[-2] = ord("x") if data[-2] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    assert main(["verify", str(bundle), "--no-replay"]) == 1
    out = capsys.readouterr().out
    assert "release.csv: changed" in out and "1 difference(s)" in out


def test_a_missing_or_extra_file_is_named(bundle, capsys):
    (bundle / "changes.csv").unlink()
    (bundle / "notes.txt").write_text("added later")
    assert main(["verify", str(bundle), "--no-replay"]) == 1
    out = capsys.readouterr().out
    assert "changes.csv: missing" in out and "notes.txt: not listed in the manifest" in out


def test_a_replay_that_gives_other_bytes_is_named(bundle, capsys, tiny_files):
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert "--seed 5" in manifest["replay"]
    data = tiny_files.parent / "data.csv"
    data.write_text(data.read_text().replace("@", "at "))  # the confidential data changed since the export
    assert main(["verify", str(bundle)]) == 1
    assert "release.csv: the replay gives other bytes" in capsys.readouterr().out


def test_a_folder_without_a_manifest_is_a_user_error(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert "holds no manifest.json" in capsys.readouterr().err
