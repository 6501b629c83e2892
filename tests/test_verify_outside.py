"""`textsdc verify` checks from outside what a bundle claims beyond its tables: md's ε against its vocabulary
setting (and a public vocabulary's digest against the word list installed here), and a declared background
corpus's checksum on the file."""

import json
import shutil

import pytest

from engine.cli import main
from engine.text.vocabulary import public_vocabulary, vocabulary_digest


def _release(tiny_files, tmp_path, name: str, *extra: str) -> tuple:
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    out = tmp_path / name
    args = ["release", *data, *extra, "--seed", "1", "--out", str(out)]
    assert main([*args, "--audit-log", str(tmp_path / "audit.sqlite")]) == 0
    return out


def _tampered(bundle, change) -> None:
    path = bundle / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def _verify(bundle, capsys, *extra: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["verify", str(bundle), "--no-replay", *extra])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture
def md_public(tiny_files, tmp_path):
    return _release(tiny_files, tmp_path, "md", "--method", "md", "--knob", "1000")


def test_md_s_epsilon_over_the_public_vocabulary_is_checked_against_the_word_list_installed_here(md_public, capsys):
    manifest = json.loads((md_public / "manifest.json").read_text())
    claim = manifest["epsilon_claim"]
    words = public_vocabulary()
    assert claim["vocabulary"] == "public" and claim["covers_vocabulary"] is True and claim["epsilon"] == 1000
    assert claim["digest"] == vocabulary_digest(words) and claim["words"] == len(words)
    code, lines = _verify(md_public, capsys)
    assert code == 0, lines
    assert "ε = 1,000 claimed; the release's knob: ε = 1,000 ✓" in lines
    assert any(
        line.startswith("ε covers the vocabulary (public: the English word list of spaCy's")
        and line.endswith("vocabulary = 'public': fixed before the data was seen ✓")
        for line in lines
    )
    digest = f"SHA-256 {vocabulary_digest(words)[:12]}…"
    assert (
        f"public vocabulary of {len(words):,} words, {digest}; the public word list installed here: "
        f"{len(words):,} words, {digest} ✓" in lines
    )
    assert lines[-1].endswith("every file matches its checksum, every claim of the manifest checked here holds")


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda m: m["epsilon_claim"].update(digest="0" * 64), "SHA-256 000000000000…; the public word list installed"),
        (lambda m: m["epsilon_claim"].update(epsilon=1.0), "ε = 1 claimed; the release's knob: ε = 1,000 ✗"),
        (
            lambda m: m["method"]["params"].update(vocabulary="data"),
            "vocabulary setting is 'data', not the claim's ✗",
        ),
        (
            lambda m: m["epsilon_claim"].update(vocabulary="data", digest=None),
            "vocabulary setting is 'public', not the claim's ✗",
        ),
    ],
)
def test_a_tampered_epsilon_claim_fails_with_a_line_saying_what_differs(md_public, capsys, change, expected):
    _tampered(md_public, change)
    code, lines = _verify(md_public, capsys)
    assert code == 1
    wrong = [line for line in lines if line.endswith("✗")]
    assert len(wrong) == 1 and expected in wrong[0], lines
    assert lines[-1] == f"{md_public}: 1 claim(s) the bundle does not bear out"


def test_md_over_the_data_s_words_must_say_epsilon_does_not_cover_them(tiny_files, tmp_path, capsys):
    bundle = _release(tiny_files, tmp_path, "md-data", "--method", "md", "--knob", "1000", "--vocabulary", "data")
    claim = json.loads((bundle / "manifest.json").read_text())["epsilon_claim"]
    assert claim["covers_vocabulary"] is False and claim["digest"] is None  # the data's words are not fingerprinted
    assert "not the vocabulary itself" in claim["statement"]
    code, lines = _verify(bundle, capsys)
    assert code == 0
    assert any(
        line.startswith("ε does not cover the vocabulary (data: the data's own words)")
        and line.endswith("the data's own words, disclosed beyond ε ✓")
        for line in lines
    )
    assert not any("public vocabulary of" in line for line in lines)
    _tampered(bundle, lambda m: m["epsilon_claim"].update(covers_vocabulary=True))
    code, lines = _verify(bundle, capsys)
    assert code == 1
    assert any(
        line.startswith("ε covers the vocabulary (data:")
        and line.endswith("a vocabulary taken from the data is disclosed by the release, which ε does not cover ✗")
        for line in lines
    )


def test_a_method_that_claims_no_epsilon_prints_no_epsilon_line(tiny_files, tmp_path, capsys):
    bundle = _release(tiny_files, tmp_path, "redact", "--method", "redact", "--no-use-ner", "--knob", "2")
    assert json.loads((bundle / "manifest.json").read_text())["epsilon_claim"] is None
    code, lines = _verify(bundle, capsys)
    assert code == 0 and not any("ε" in line for line in lines)


@pytest.fixture
def with_background(tiny_files, tmp_path):
    corpus = tmp_path / "corpus" / "background.csv"
    corpus.parent.mkdir()
    shutil.copy(tiny_files.parent / "external.csv", corpus)
    bundle = _release(
        tiny_files, tmp_path, "bg", "--method", "redact", "--no-use-ner", "--knob", "2", "--background", str(corpus)
    )
    return bundle, corpus


def test_the_background_corpus_s_checksum_is_recomputed_on_the_file(with_background, capsys, tmp_path):
    from engine.data.background import read_background

    bundle, corpus = with_background
    read = read_background(corpus)
    said = f"background corpus background.csv: SHA-256 {read.sha256[:12]}…, {read.rows:,} rows"
    code, lines = _verify(bundle, capsys, "--background", str(corpus))
    assert code == 0
    assert f"{said}; background.csv: SHA-256 {read.sha256[:12]}…, {read.rows:,} rows ✓" in lines
    # not given, the file at the path the release recorded is checked, and the line says so
    code, lines = _verify(bundle, capsys)
    assert code == 0 and f"{said}; background.csv (at the path the release recorded): SHA-256" in "\n".join(lines)
    # another file (one row fewer) fails, naming both checksums' beginnings and rows
    other = tmp_path / "other.csv"
    other.write_text("".join(corpus.read_text().splitlines(keepends=True)[:-1]))
    code, lines = _verify(bundle, capsys, "--background", str(other))
    assert code == 1
    assert any(
        line.startswith(f"{said}; other.csv: SHA-256 ") and line.endswith(f"{read.rows - 1:,} rows ✗") for line in lines
    )
    # without the file anywhere, verify says it cannot check, and does not fail on it
    corpus.unlink()
    code, lines = _verify(bundle, capsys)
    assert code == 0
    assert f"{said}; cannot check without the file: give it with --background FILE (not checked)" in lines


def test_a_tampered_background_checksum_fails(with_background, capsys):
    bundle, corpus = with_background
    _tampered(bundle, lambda m: m["background"].update(sha256="f" * 64))
    code, lines = _verify(bundle, capsys, "--background", str(corpus))
    assert code == 1
    assert any(
        line.startswith("background corpus background.csv: SHA-256 ffffffffffff…") and line.endswith("✗")
        for line in lines
    )
