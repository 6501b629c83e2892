"""Fuzz suite (issues 10 and 49): whatever a user gives — a data file, a codec name, JSON nested to any depth or
holding numbers of any length, a schema, a session file, command-line arguments, a knob value — only a
`ConfigError` or a `DataError` escapes; through the command line, one line ``textsdc: error: ...`` with exit 2
(argparse's usage errors included).

Hypothesis generates the cases; `CASES` counts them and the terminal summary prints the count. The last test
checks that a run generated at least `MIN_CASES` (11,500 at the default of 2,500 examples per test, 500 for each
test that runs the whole command up to its work; ``TEXTSDC_FUZZ_EXAMPLES`` sets fewer for a quick local run).
Under CI (``CI=true``) the cases are derandomized, so a failure can be replayed; elsewhere every run draws new
ones.
"""

from __future__ import annotations

import encodings.aliases
import json
import math
import os
import string
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import cli
from engine.cli.args import method_parameters
from engine.data.load import load_dataset
from engine.data.schema import Schema, dict_to_toml
from engine.errors import ConfigError, DataError
from engine.protect import METHODS, get_protector
from tests.conftest import tiny_frames

CASES: Counter[str] = Counter()
EXAMPLES = int(os.environ.get("TEXTSDC_FUZZ_EXAMPLES", "2500"))  # per test; fewer for a quick local run
THROUGH_THE_CLI = max(1, EXAMPLES // 5)  # per test that runs the command up to its work (issue 49's three)
MIN_CASES = 4 * EXAMPLES + 3 * THROUGH_THE_CLI  # the schema test counts twice: 11,500 at the default
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("CI", "").lower() in ("1", "true", "yes"),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEWER = settings(FUZZ, max_examples=THROUGH_THE_CLI)
ACCEPTED = (ConfigError, DataError)


def only_user_errors(area: str, fn, *args, **kwargs):
    """``fn(...)``; a `ConfigError` or `DataError` is the expected outcome of bad input, anything else fails."""
    CASES[area] += 1
    try:
        return fn(*args, **kwargs)
    except ACCEPTED as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), f"an error message must be one line: {message!r}"
        assert "Traceback" not in message
        return None


# ---------------------------------------------------------------------------------------------------------------
# Readers: the bytes of a file, its extension and the encoding asked for

HEADERS = ["text", "user", "mood", "rating", "Text", "name", "", "text", "a,b", 'q"t', "é", "0"]
CELLS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "NA", "null", "1", "-3", "2.5", "1e400", "nan", "inf", "@user hi there", '"', "\r\n"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)


@st.composite
def delimited(draw, sep: str) -> bytes:
    header = draw(st.lists(st.sampled_from(HEADERS), min_size=0, max_size=5))
    rows = draw(st.lists(st.lists(CELLS, max_size=6), max_size=6))

    def line(values: list[str]) -> str:
        quote = draw(st.booleans())
        return sep.join(('"' + v.replace('"', '""') + '"') if quote else v for v in values)

    text = "\n".join([line(header), *(line(r) for r in rows)])
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "latin-1", "cp1252"]))
    return text.encode(encoding, errors="replace")


@st.composite
def jsonl(draw) -> bytes:
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(HEADERS), children, max_size=3)
        ),
        max_leaves=6,
    )
    lines = draw(st.lists(json_values.map(json.dumps) | st.text(max_size=30), max_size=6))
    return "\n".join(lines).encode("utf-8", errors="replace")


FILES = st.one_of(
    st.tuples(st.just(".csv"), delimited(",")),
    st.tuples(st.just(".tsv"), delimited("\t")),
    st.tuples(st.just(".jsonl"), jsonl()),
    st.tuples(st.sampled_from([".csv", ".jsonl", ".parquet", ".txt", ""]), st.binary(max_size=200)),
)
ENCODINGS = st.sampled_from([None, "utf-8", "utf-16", "utf-16-le", "latin-1", "cp1252", "ascii", "no-such-codec", ""])


@FUZZ
@given(file=FILES, encoding=ENCODINGS)
def test_any_data_file_loads_or_gives_a_user_error(tmp_path_factory, file, encoding):
    suffix, content = file
    folder = tmp_path_factory.mktemp("read")
    path = folder / f"data{suffix}"
    path.write_bytes(content)
    dataset = only_user_errors("readers", load_dataset, path, encoding=encoding)
    if dataset is not None:
        assert dataset.n_records >= 1 and dataset.schema.text in dataset.frame.columns


# ---------------------------------------------------------------------------------------------------------------
# Issue 49: any codec name (text encodings, codecs of bytes to bytes such as base64, names that are none), JSON
# nested to any depth or holding numbers of any length, any JSON in place of a session file — through the command
# line, which ends in one line `textsdc: error: ...` with exit 2 or goes on to the work

CODECS = sorted(
    {*encodings.aliases.aliases, *encodings.aliases.aliases.values()}
    | {"rot13", "base64", "zlib_codec", "hex", "uu", "bz2", "quopri", "idna", "punycode", "undefined", "utf-7"}
    | {"unicode_escape", "raw_unicode_escape", "utf_8_sig", "utf-32", "mbcs", "oem", "UTF8", " utf-8 ", "latin_1"}
)
ENCODING_NAMES = st.sampled_from(CODECS) | st.text(max_size=12)
TEXTS = st.one_of(
    delimited(","),
    delimited(";"),
    st.text(max_size=80).map(lambda t: ("text,user\n" + t + ",a\n").encode("utf-8", errors="replace")),
    st.binary(max_size=120),
)


def _one_line_or_work(argv: list[str], capsys, area: str) -> int | None:
    """``textsdc ARGV`` with the fit stubbed out: None where the work would start, else the exit status, after
    checking that an error is one line ``textsdc: error: ...`` with exit 2 (argparse's own included)."""
    CASES[area] += 1
    capsys.readouterr()
    try:
        code = cli.main(argv)
    except _ReachedTheWork:
        return None
    except SystemExit as exc:  # argparse: a value it cannot read
        code = exc.code if isinstance(exc.code, int) else 2
    err = capsys.readouterr().err
    if code != 0:
        assert code == 2, err
        assert err.startswith("textsdc: error: ") and err.count("\n") == 1, err
    return code


@FEWER
@given(content=TEXTS, encoding=ENCODING_NAMES, suffix=st.sampled_from([".csv", ".tsv", ".jsonl"]))
def test_any_codec_name_reads_the_file_or_gives_one_line(
    tmp_path_factory, monkeypatch, capsys, content, encoding, suffix
):
    path = tmp_path_factory.mktemp("codec") / f"data{suffix}"
    path.write_bytes(content)
    monkeypatch.setattr("engine.cli.commands.fit_cached", _stop_at_the_fit)
    argv = ["sweep", "--data", str(path), "--encoding", encoding, "--method", "redact", "--out", str(path) + ".json"]
    try:
        _one_line_or_work(argv, capsys, "codec names")
    finally:
        monkeypatch.undo()


@st.composite
def json_extremes(draw) -> str:
    """A JSON value nested up to 200,000 levels deep (arrays and objects mixed) around a number of up to 10,000
    digits (an integer, a fraction or an exponent) or a long string."""
    depth = draw(st.integers(min_value=0, max_value=200_000) | st.integers(min_value=60, max_value=70))
    digits = draw(st.integers(min_value=1, max_value=10_000) | st.integers(min_value=4290, max_value=4310))
    core = draw(
        st.sampled_from(["-", ""]).map(lambda sign: sign + "7" * digits)
        | st.just("1." + "5" * digits)
        | st.just(f"1e{digits}")
        | st.just(json.dumps("w" * digits))
    )
    kinds = draw(st.lists(st.booleans(), min_size=1, max_size=3))
    opening = "".join("[" if kinds[k % len(kinds)] else '{"a": ' for k in range(depth))
    closing = "".join("]" if kinds[k % len(kinds)] else "}" for k in reversed(range(depth)))
    return opening + core + closing


@FEWER
@given(value=json_extremes(), column=st.sampled_from(["text", "meta", "user"]), truncate=st.booleans())
def test_any_json_depth_or_number_length_loads_or_gives_one_line(
    tmp_path_factory, monkeypatch, capsys, value, column, truncate
):
    records = [json.dumps({"text": f"a fine day out with friends number {i}", "user": f"u{i % 3}"}) for i in range(6)]
    line = '{"text": "the last fine day out", "user": "u1", ' + json.dumps(column) + ": " + value + "}"
    path = tmp_path_factory.mktemp("json") / "data.jsonl"
    path.write_text("\n".join([*records, line[: len(line) // 2] if truncate else line]) + "\n", encoding="utf-8")
    monkeypatch.setattr("engine.cli.commands.fit_cached", _stop_at_the_fit)
    try:
        _one_line_or_work(["sweep", "--data", str(path), "--method", "redact", "--out", f"{path}.json"], capsys, "JSON")
    finally:
        monkeypatch.undo()


SESSION_KEYS = ["format", "version", "data", "fingerprint", "schema", "encoding", "delimiter", "bad_rows"]
SESSION_KEYS += ["schema_toml", "pins", "history", "extra"]
CANDIDATE_KEYS = ["name", "method", "knob", "seed", "replicates", "replicate", "params", "options", "other"]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["redact", "glm", "posts", "error", "drop", ";", "utf-8", "rot13", "1", "abc", "x"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@st.composite
def sessions(draw, data: Path, fingerprint: str) -> object:
    """Any JSON value, mostly shaped like a session: the right format, version, data and fingerprint with some
    keys missing or of another type, pins whose candidates' fields are of any type."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON_VALUES)
    good = {"format": "textsdc-session", "version": 1, "data": str(data), "fingerprint": fingerprint}

    def candidate() -> object:
        base = {"name": "pin", "method": draw(st.sampled_from(sorted(METHODS))), "knob": 1.0}
        for key in draw(st.lists(st.sampled_from(CANDIDATE_KEYS), unique=True, max_size=3)):
            base[key] = draw(JSON_VALUES)
        return base if draw(st.integers(0, 9)) else draw(JSON_VALUES)

    def pin() -> object:
        metrics = draw(st.dictionaries(st.sampled_from(["text_reid", "pmse_ratio", "x"]), JSON_VALUES, max_size=2))
        shaped = {"value": draw(JSON_VALUES), "lo": 0.1, "hi": 0.2}
        return {"candidate": candidate(), "metrics": metrics | {"text_reid": shaped}, "warnings": draw(JSON_VALUES)}

    good["pins"] = [pin() for _ in range(draw(st.integers(0, 2)))]
    good["history"] = [candidate() for _ in range(draw(st.integers(0, 2)))]
    for key in draw(st.lists(st.sampled_from(SESSION_KEYS), unique=True, max_size=3)):
        if draw(st.booleans()):
            good.pop(key, None)
        else:
            good[key] = draw(JSON_VALUES)
    return good


@pytest.fixture(scope="module")
def session_data(data_folder) -> tuple[Path, str]:
    path = data_folder / "session-data.csv"
    path.write_bytes((data_folder / "data.csv").read_bytes())
    return path, load_dataset(path).fingerprint


@FEWER
@given(data=st.data())
def test_any_json_in_place_of_a_session_opens_or_gives_one_line(session_data, tmp_path_factory, capsys, data):
    path = tmp_path_factory.mktemp("session") / "s.textsdc.json"
    value = data.draw(sessions(*session_data))
    raw = json.dumps(value) if data.draw(st.integers(0, 19)) else data.draw(st.text(max_size=40))
    path.write_text(raw, encoding="utf-8")
    _one_line_or_work(["session", str(path)], capsys, "session files")


# ---------------------------------------------------------------------------------------------------------------
# Schema TOML, [external] and [release] included, applied to a real data file

SCALARS = st.one_of(
    st.sampled_from(["text", "user", "mood", "airline", "nope", "", "external.csv", "../x.csv", "text\n"]),
    st.text(max_size=12),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(), max_size=2),
)
SCHEMA_KEYS = ["text", "author", "document", "fields", "external", "release", "extra"]
FIELD_NAMES = st.sampled_from(["mood", "airline", "user", "text", "nope", "a\nb", 'q"'])
FIELD_SPEC = st.dictionaries(
    st.sampled_from(["kind", "role", "other"]),
    st.sampled_from(["categorical", "count", "continuous", "sensitive", "key", "other", "bad"]) | SCALARS,
    max_size=3,
)
EXTERNAL = st.dictionaries(
    st.sampled_from(["file", "holdout_per_author", "min_records", "max_authors", "seed", "bogus"]),
    st.sampled_from(["external.csv", "missing.csv", ""]) | SCALARS,
    max_size=4,
)
RELEASE = st.dictionaries(st.sampled_from(["author", "document", "x"]), st.sampled_from(["drop", "keep"]) | SCALARS)


@st.composite
def schema_dicts(draw) -> dict:
    d: dict = {}
    for key in draw(st.lists(st.sampled_from(SCHEMA_KEYS), unique=True, max_size=6)):
        if key == "fields":
            d[key] = draw(st.dictionaries(FIELD_NAMES, FIELD_SPEC, max_size=3) | SCALARS)
        elif key == "external":
            d[key] = draw(EXTERNAL | SCALARS)
        elif key == "release":
            d[key] = draw(RELEASE | SCALARS)
        else:
            d[key] = draw(SCALARS)
    return d


@pytest.fixture(scope="module")
def data_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("schema-fuzz")
    frame, external = tiny_frames()
    frame.to_csv(folder / "data.csv", index=False)
    external.to_csv(folder / "external.csv", index=False)
    return folder


def _toml_or_text(d: dict, raw: str | None) -> str:
    if raw is not None:
        return raw
    try:
        return dict_to_toml(d)
    except (TypeError, ValueError):
        return ""


@FUZZ
@given(d=schema_dicts(), raw=st.none() | st.text(max_size=60))
def test_any_schema_is_applied_or_gives_a_user_error(data_folder, tmp_path_factory, d, raw):
    schema_path = tmp_path_factory.mktemp("schema") / "s.toml"
    schema_path.write_text(_toml_or_text(d, raw), encoding="utf-8")
    # The external file is named relative to the schema: put a copy beside it.
    (schema_path.parent / "external.csv").write_bytes((data_folder / "external.csv").read_bytes())
    only_user_errors("schema (from a dict)", Schema.from_dict, d)
    dataset = only_user_errors("schema (a file, applied)", load_dataset, data_folder / "data.csv", schema_path)
    if dataset is not None:
        written = dataset.schema.to_toml()  # what the dashboard saves must read back as the same schema
        again = tmp_path_factory.mktemp("again") / "s.toml"
        again.write_text(written, encoding="utf-8")
        assert Schema.from_toml(again) == dataset.schema


# ---------------------------------------------------------------------------------------------------------------
# Command-line arguments: everything up to the first costly step (the fit) runs for real


class _ReachedTheWork(Exception):
    """Raised where the fit would start: every check before it passed."""


def _stop_at_the_fit(*_args, **_kwargs):
    raise _ReachedTheWork


NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "1", "-1", "2", "0.5", "1e-9", "abc", "", " ", "4,", "1,2,3", "path", "0x10"]),
)
FLAG_VALUES = {
    "--method": st.sampled_from([*METHODS, "nope", ""]),
    "--knob": NUMBERS,
    "--grid": NUMBERS | st.lists(NUMBERS, max_size=4).map(",".join),
    "--seed": NUMBERS,
    "--replicates": NUMBERS,
    "--replicate": NUMBERS,
    "--jobs": NUMBERS,
    "--encoding": st.sampled_from(["utf-8", "latin-1", "no-such", ""]),
    "--fields": st.sampled_from(["mood", "airline", "mood,airline", "nope", "", ","]),
    "--level": st.sampled_from(["mood=good", "mood", "nope=x", "=", "mood=nope"]),
}


@st.composite
def command_lines(draw, data_folder: Path, out: Path) -> list[str]:
    command = draw(st.sampled_from(["sweep", "release"]))
    argv = [command, "--data", str(data_folder / "data.csv"), "--out", str(out / command)]
    for flag in draw(st.lists(st.sampled_from(sorted(FLAG_VALUES)), unique=True, max_size=6)):
        argv += [flag, draw(FLAG_VALUES[flag])]
    if "--method" not in argv:
        argv += ["--method", draw(st.sampled_from(sorted(METHODS)))]
    for _name, (param, _methods) in draw(
        st.lists(st.sampled_from(sorted(method_parameters().items())), unique_by=lambda x: x[0], max_size=2)
    ):
        if param.type is bool:
            argv.append(param.flag)
        else:
            argv += [param.flag, draw(NUMBERS | st.text(alphabet=string.printable, max_size=8))]
    return argv


@pytest.fixture(scope="module")
def cli_folders(data_folder, tmp_path_factory) -> tuple[Path, Path]:
    (data_folder / "data.schema.toml").write_text(
        'text = "text"\nauthor = "user"\n\n[fields.airline]\nkind = "categorical"\nrole = "key"\n\n'
        '[fields.mood]\nkind = "categorical"\nrole = "sensitive"\n\n[external]\nfile = "external.csv"\n',
        encoding="utf-8",
    )
    return data_folder, tmp_path_factory.mktemp("cli-out")


@FUZZ
@given(data=st.data())
def test_any_command_line_is_checked_before_work_or_gives_one_line(cli_folders, monkeypatch, capsys, data):
    folder, out = cli_folders
    argv = data.draw(command_lines(folder, out))
    for where in ("engine.cache", "engine.cli.commands", "engine.export.chosen"):  # every name it is called by
        monkeypatch.setattr(f"{where}.fit_cached", _stop_at_the_fit)
    CASES["command lines"] += 1
    capsys.readouterr()  # what earlier examples printed
    try:
        code = cli.main(argv)
    except _ReachedTheWork:
        return
    except SystemExit as exc:  # argparse's usage error for a value of the wrong type: one line too
        code = exc.code
    finally:
        monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("textsdc: error: ") and err.count("\n") == 1, err


# ---------------------------------------------------------------------------------------------------------------
# Knobs: every registered method's knob takes any value as a number in range or a ConfigError


@FUZZ
@given(
    name=st.sampled_from(sorted(METHODS)),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.text(max_size=6),
        st.none(),
        st.booleans(),
    ),
)
def test_any_knob_value_is_in_range_or_a_config_error(name, value):
    knob = get_protector(name).knob
    checked = only_user_errors("knobs", knob.validate, value)
    if checked is not None:
        assert math.isfinite(checked) and knob.low <= checked <= knob.high


def test_the_fuzz_suite_generated_enough_cases():
    total = sum(CASES.values())
    if total == 0:
        pytest.skip("the fuzz tests were not run in this session (deselected)")
    assert total >= MIN_CASES, dict(CASES)


def fuzz_summary() -> str:
    """One line for the terminal summary: how many cases each area generated."""
    parts = ", ".join(f"{area} {n:,}" for area, n in sorted(CASES.items()))
    return f"fuzz: {sum(CASES.values()):,} generated cases ({parts})"
