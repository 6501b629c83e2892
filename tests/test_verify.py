"""`textsdc verify`: a bundle's checksums and its replay."""

import json
import shlex

import pytest

from engine.cli import main
from engine.record.manifest import read_record


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


def test_a_replay_by_other_engine_code_says_the_code_may_be_why(bundle, capsys, tiny_files):
    """A manifest records the digest of the engine's code that wrote it; when the replay differs and the code does
    too, verify says so, so a reviewer does not take a code change for a release that does not reproduce."""
    from engine.cache import engine_digest

    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["engine_code"] == engine_digest()
    manifest["engine_code"] = "0" * 16  # as an older textsdc's manifest would say
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    data = tiny_files.parent / "data.csv"
    data.write_text(data.read_text().replace("@", "at "))
    assert main(["verify", str(bundle)]) == 1
    out = capsys.readouterr().out
    assert f"written by other engine code (0000000000000000 against this textsdc's {engine_digest()})" in out


def test_a_folder_without_a_manifest_is_a_user_error(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert "holds no manifest.json" in capsys.readouterr().err


# --- verify where the reviewer is (issue 49) -------------------------------------------------------------------


@pytest.fixture
def keyed(tiny_files, tmp_path, monkeypatch, capsys):
    """A bundle of the tiny data, whose author column leaves pseudonymized, written with `--out bundle` from its
    parent folder, and its pseudonym key exported beside it with --key-out; and what the command printed."""
    monkeypatch.chdir(tmp_path)
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    args = ["release", *data, "--method", "redact", "--no-use-ner", "--knob", "2", "--seed", "5", "--out", "bundle"]
    assert main([*args, "--key-out", "keys/bundle.key", "--audit-log", str(tmp_path / "audit.sqlite")]) == 0
    return tmp_path / "bundle", tmp_path / "keys" / "bundle.key", capsys.readouterr().out


def _fresh_cache(monkeypatch, tmp_path, name):
    """Another machine: a cache folder of its own, with no pseudonym key."""
    cache = tmp_path / name
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(cache))
    return cache


def test_the_key_is_exported_beside_the_bundle_and_the_manifest_names_only_its_check_value(keyed):
    bundle, key_file, printed = keyed
    assert "wrote keys/bundle.key (the pseudonym key: give it only to the people allowed to replay" in printed
    key = key_file.read_bytes()
    assert len(key) == 32 and key_file.stat().st_mode & 0o777 == 0o600
    manifest = json.loads((bundle / "manifest.json").read_text())
    text = (bundle / "manifest.json").read_text()
    assert "bundle.key" not in text and key.hex() not in text
    assert manifest["pseudonym_key"]["files"] == ["release.csv", "release.parquet"]
    assert len(manifest["pseudonym_key"]["check"]) == 16 and "release.parquet" in manifest["files"]
    assert all(p.read_bytes() != key for p in bundle.iterdir())


def test_verify_with_the_exported_key_in_a_fresh_cache_makes_the_bundle_byte_for_byte(
    keyed, tmp_path, monkeypatch, capsys
):
    bundle, key_file, _ = keyed
    cache = _fresh_cache(monkeypatch, tmp_path, "reviewer-cache")
    capsys.readouterr()
    assert main(["verify", str(bundle), "--key", str(key_file)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{bundle}: every file matches its checksum; the replay makes the same files"
    ]
    assert not (cache / "pseudonym.key").exists()


def test_verify_without_the_key_checks_the_rest_and_says_in_one_line_what_it_skipped(
    keyed, tmp_path, monkeypatch, capsys
):
    bundle, _, _ = keyed
    cache = _fresh_cache(monkeypatch, tmp_path, "reviewer-cache")
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "release.csv, release.parquet: not replayed: the pseudonym key is not here (give --key FILE)",
        f"{bundle}: every file matches its checksum; the replay makes the same changes.csv, report.html",
    ]
    assert not (cache / "pseudonym.key").exists()  # verify never makes a key where the reviewer is


def test_without_the_key_a_replay_that_moved_is_still_found(keyed, tiny_files, tmp_path, monkeypatch, capsys):
    bundle, _, _ = keyed
    data = tiny_files.parent / "data.csv"
    data.write_text(data.read_text().replace("@", "at "))  # the confidential data changed since the export
    _fresh_cache(monkeypatch, tmp_path, "reviewer-cache")
    capsys.readouterr()
    assert main(["verify", str(bundle)]) == 1
    out = capsys.readouterr().out
    assert "changes.csv: the replay gives other bytes" in out and "release.csv: the replay" not in out


def test_a_key_that_is_not_the_bundles_is_refused_in_one_line(keyed, tmp_path, monkeypatch, capsys):
    bundle, key_file, _ = keyed
    other = tmp_path / "other.key"
    other.write_bytes(bytes(32))
    _fresh_cache(monkeypatch, tmp_path, "reviewer-cache")
    capsys.readouterr()
    assert main(["verify", str(bundle), "--key", str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not the one this bundle's pseudonyms were made with" in err
    key_file.write_bytes(b"short")
    assert main(["verify", str(bundle), "--key", str(key_file)]) == 2
    assert "is not a whole key (5 bytes, a key has 32)" in capsys.readouterr().err


def test_a_key_file_inside_the_bundle_folder_is_refused_before_any_work(tiny_files, tmp_path, capsys):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    out = tmp_path / "bundle"
    args = ["release", *data, "--method", "redact", "--no-use-ner", "--out", str(out)]
    assert main([*args, "--key-out", str(out / "pseudonym.key")]) == 2
    assert "would be inside the bundle folder" in capsys.readouterr().err and not out.exists()


def test_the_printed_replay_command_makes_a_new_folder_and_leaves_the_bundle_untouched(keyed, tmp_path):
    bundle, _, _ = keyed
    before = {p.name: p.read_bytes() for p in bundle.iterdir()}
    command = json.loads(before["manifest.json"])["replay"]
    assert command.endswith("--out bundle-replay") and command in before["report.html"].decode()
    assert main(shlex.split(command)[1:]) == 0  # as printed, from the bundle's parent folder
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before
    again = tmp_path / "bundle-replay"
    assert {p.name: p.read_bytes() for p in again.iterdir()} == before  # its own record names the same folder
    assert main(shlex.split(command)[1:]) == 2  # run twice, it does not replace the replay either
    assert {p.name: p.read_bytes() for p in again.iterdir()} == before


def test_the_printed_replay_command_with_the_key_file_makes_the_same_files_in_a_fresh_cache(
    keyed, tmp_path, monkeypatch
):
    bundle, key_file, _ = keyed
    cache = _fresh_cache(monkeypatch, tmp_path, "reviewer-cache")
    command = read_record(bundle).replay
    assert main([*shlex.split(command)[1:], "--key", str(key_file)]) == 0
    made = {p.name: p.read_bytes() for p in (tmp_path / "bundle-replay").iterdir()}
    assert made == {p.name: p.read_bytes() for p in bundle.iterdir()}
    assert not (cache / "pseudonym.key").exists()


# --- the claims of a bundle's tables (issue 50) ------------------------------------------------------------------


def test_a_tables_claims_are_counted_on_the_table_by_hand(tmp_path):
    """k, ℓ and t on a hand table, the suppressed rows set aside and every column but them and the sensitive
    one counted; a table with every record suppressed singles no one out."""
    import pandas as pd

    from engine.export.claims import check_claim
    from engine.protect.claims import AnonymityClaim

    rows = [("1", "20-29", "flu", False)] * 2 + [("1", "20-29", "none", False)] + [("2", "30-39", "none", False)] * 3
    rows += [("*", "*", "flu", True)]  # suppressed: set aside, though a class of one
    table = pd.DataFrame(rows, columns=["class", "age", "SA", "suppressed"])
    table.to_csv(tmp_path / "qi.csv", index=False)
    claim = AnonymityClaim("qi.csv", ("class", "age"), 3, "suppressed", "SA", 2, 0.5)
    k, ell, t = check_claim(tmp_path, claim)
    assert k.holds and k.found.endswith(": k = 3") and "(6 records; 1 suppressed set aside)" in k.found
    assert not ell.holds and ell.found.endswith(": ℓ = 1")  # class 2 holds "none" only
    # kept: flu 2/6, none 4/6; class 2 is none 3/3: (|0 − 1/3| + |1 − 2/3|) / 2 = 1/3
    assert t.holds and t.found.endswith(": t = 0.333") and t.line().endswith("✓")
    table.assign(extra=range(len(table))).to_csv(tmp_path / "qi.csv", index=False)  # a column per record
    assert check_claim(tmp_path, claim)[0].found.endswith(": k = 1")
    table.assign(suppressed=True).to_csv(tmp_path / "qi.csv", index=False)
    [nothing] = check_claim(tmp_path, claim)
    assert nothing.holds and "every record suppressed" in nothing.found
    (tmp_path / "qi.csv").unlink()
    assert not check_claim(tmp_path, claim)[0].holds
