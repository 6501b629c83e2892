"""The `textsdc` command end to end on small files, and the acceptance sweep on the airline-tweets demo."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from engine.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_datasets_lists_the_five_demos(capsys):
    code, out, _ = run(capsys, "datasets", "--json")
    assert code == 0
    names = {d["name"] for d in json.loads(out)}
    assert names == {"airline-tweets", "nyc-airbnb", "clothing-reviews", "earnings-calls", "twitter-profiles"}


def test_sweep_writes_rows_and_summary(capsys, tiny_files, tmp_path):
    out = tmp_path / "results.json"
    code, stdout, _ = run(
        capsys,
        "sweep",
        "--data",
        str(tiny_files.parent / "data.csv"),
        "--schema",
        str(tiny_files),
        "--method",
        "redact",
        "--grid",
        "0,1,4",
        "--out",
        str(out),
    )
    assert code == 0, stdout
    res = json.loads(out.read_text())
    assert {"knob", "replicate", "metric", "kind", "value"} <= set(res["rows"][0])
    assert {"knob", "metric", "mean", "lo", "hi"} <= set(res["summary"][0])
    assert sorted({r["knob"] for r in res["rows"]}) == [0.0, 1.0, 4.0]
    assert "attack_identification_rate_confidential" in res["baseline"]


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_release_twice_with_the_same_seed_is_byte_identical(capsys, tiny_files, tmp_path):
    """The same command run twice (the second told to --replace) rewrites the same bytes; untold, it is refused."""
    data = str(tiny_files.parent / "data.csv")
    out = tmp_path / "rel"
    digests = []
    for _ in range(2):
        code, stdout, err = run(
            capsys,
            "release",
            "--data",
            data,
            "--schema",
            str(tiny_files),
            "--method",
            "redact",
            "--knob",
            "1",
            "--seed",
            "5",
            "--out",
            str(out),
            "--audit-log",
            str(tmp_path / "audit.sqlite"),
            "--no-cache",
            *(["--replace"] if digests else []),  # the second run replaces the first's bundle, as told
        )
        assert code == 0, err
        digests.append({p.name: sha(p) for p in sorted(out.iterdir())})
    assert {"release.csv", "release.parquet", "manifest.json", "report.html", "changes.csv"} <= set(digests[0])
    assert digests[0] == digests[1]
    code, _, err = run(
        capsys, "release", "--data", data, "--schema", str(tiny_files), "--method", "redact", "--out", str(out)
    )
    assert code == 2 and f"export folder {out} holds a bundle already" in err  # not without being told
    assert {p.name: sha(p) for p in sorted(out.iterdir())} == digests[0]
    outs = [out]
    manifest = json.loads((outs[0] / "manifest.json").read_text())
    for name, digest in manifest["files"].items():
        assert sha(outs[0] / name) == digest
    assert manifest["knob"]["value"] == 1.0 and manifest["seed"] == 5
    assert "attack_identification_rate" in manifest["metrics"]
    assert {"value", "lo", "hi", "kind"} <= set(manifest["metrics"]["attack_identification_rate"])
    assert "[HASHTAG_1]" in (outs[0] / "release.csv").read_text()
    # The report says how the data decided a measure: no field is named like "sentiment", so VADER scores it.
    report = (outs[0] / "report.html").read_text()
    assert "Classifier: the VADER lexicon" in report
    # The classifier's default target is the sensitive field, mood, which the tiny texts do not tell: the
    # report lists it as not measured, with the reason.
    assert "does not predict mood at all" in report


def test_release_is_byte_identical_whatever_the_jobs(capsys, tiny_files, tmp_path):
    """Exact replay whatever --jobs (issue 10): a stochastic method with M = 3 replicates, measured in this
    process (--jobs 1) and in joblib's workers (--jobs 2), writes the same bytes, manifest included."""
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    out = tmp_path / "rel"
    digests = []
    for jobs in ("1", "2"):
        code, _, err = run(
            capsys,
            "release",
            *data,
            "--method",
            "cart",
            "--fields",
            "mood",
            "--replicates",
            "3",
            "--replicate",
            "2",
            "--jobs",
            jobs,
            "--out",
            str(out),
            "--replace",
            "--audit-log",
            str(tmp_path / "audit.sqlite"),
        )
        assert code == 0, err
        digests.append({p.name: sha(p) for p in sorted(out.iterdir())})
    assert {"manifest.json", "release.csv"} <= set(digests[0])
    assert digests[0] == digests[1]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["sweep", "--method", "nope"],
            "unknown method 'nope'; available methods: cart, count-bayes, glm, kanon, md, redact",
        ),
        (["release", "--method", "redact", "--knob", "7"], "out of range; accepted: 0 to 4"),
        (["sweep", "--method", "redact", "--grid", "0,a"], "--grid must be numbers"),
        (["sweep", "--method", "redact", "--replicates", "0"], "replicates must be a whole number from 1 to 1000"),
        (
            ["sweep", "--method", "redact", "--fields", "mood"],
            "--fields does not apply to method 'redact'; it applies to: glm, cart",
        ),
        (
            ["sweep", "--method", "glm", "--fields", "nope"],
            "no structured field named 'nope'; categorical fields are: airline, mood",
        ),
        (["sweep", "--method", "glm", "--grid", "every"], "or 'path' (every λ or α fitted)"),
        (["release", "--method", "glm", "--knob", "-1"], "Shrinkage (λ) = -1.0 is out of range"),
        (
            ["release", "--method", "cart", "--knob", "0.5"],
            "Complexity (α) = 0.5 is out of range; accepted: 1e-08 to 0.09",
        ),
        (
            ["sweep", "--method", "glm", "--level", "mood"],
            "must be FIELD=LEVEL with FIELD one of the synthesized fields (mood)",
        ),
        (
            ["sweep", "--method", "glm", "--projections", "0"],
            "pMSE projections (projections) must be a whole number from 1 to 200, got 0",
        ),
        (["sweep", "--method", "redact", "--seed", "-1"], "--seed must be a whole number from 0 to 2^63 − 1"),
        (["release", "--method", "redact", "--seed", str(2**63)], "--seed must be a whole number from 0 to 2^63 − 1"),
        (["sweep", "--method", "redact", "--jobs", "0"], "--jobs must be a number of parallel workers ≥ 1"),
        (["release", "--method", "cart", "--replicates", "2", "--replicate", "5"], "--replicate must be from 0 to 1"),
        (["release", "--method", "redact", "--replicate", "1", "--replicates", "2"], "'redact' is deterministic"),
        # In the tiny data every template is written with every mood equally often: nothing to learn.
        (["sweep", "--method", "glm"], "the text carries no information about the fields"),
    ],
)
def test_user_errors_print_one_line_and_exit_2(capsys, tiny_files, tmp_path, argv, message):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--out", str(tmp_path / "o")]
    code, _, err = run(capsys, *argv, *data)
    assert code == 2
    err = err.split("\r")[-1]  # what a terminal shows: a progress bar that was open is cleared first
    assert err.count("\n") == 1 and err.startswith("textsdc: error: ")
    assert message in err


def test_a_negative_refine_is_refused_in_one_line(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as stop:
        main(["sweep", "--method", "md", "--refine", "-1", *data])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "argument --refine: must be a whole number of 0 or more, got '-1'" in err


def test_sweep_out_must_be_a_file_that_is_not_there_unless_overwrite(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--method", "redact"]
    code, _, err = run(capsys, "sweep", *data, "--out", str(tmp_path))
    assert code == 2 and "is a folder" in err
    existing = tmp_path / "r.json"
    existing.write_text("keep me")
    code, _, err = run(capsys, "sweep", *data, "--out", str(existing))
    assert code == 2 and "give --overwrite" in err and existing.read_text() == "keep me"
    code, _, _ = run(capsys, "sweep", *data, "--grid", "0,1", "--out", str(existing), "--overwrite")
    assert code == 0 and json.loads(existing.read_text())["method"] == "redact"


def test_release_into_a_file_or_a_folder_of_other_files_is_refused_before_work(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--method", "redact"]
    (tmp_path / "f").write_text("x")
    code, _, err = run(capsys, "release", *data, "--out", str(tmp_path / "f"))
    assert code == 2 and "is a file" in err and err.count("\n") == 1
    code, _, err = run(capsys, "release", *data, "--out", str(tiny_files.parent))
    assert code == 2 and "not a textsdc bundle" in err


def test_missing_file_is_a_one_line_error(capsys, tmp_path):
    code, _, err = run(
        capsys, "sweep", "--data", str(tmp_path / "none.csv"), "--method", "redact", "--out", str(tmp_path / "r.json")
    )
    assert code == 2 and "none.csv" in err and err.count("\n") == 1


def test_glm_sweep_over_the_whole_path_on_small_files(capsys, tiny_files, tmp_path):
    out = tmp_path / "glm.json"
    frame = pd.read_csv(tiny_files.parent / "data.csv")
    # Mood follows the words of the text (one template per mood but for every fifth record), so the λ path
    # has something to fit.
    template = np.arange(len(frame)) % 4
    frame["mood"] = np.where(np.arange(len(frame)) % 5 == 0, "meh", np.array(["good", "bad", "bad", "good"])[template])
    frame.to_csv(tiny_files.parent / "data.csv", index=False)
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    code, stdout, err = run(
        capsys,
        "sweep",
        *data,
        "--method",
        "glm",
        "--grid",
        "path",
        "--projections",
        "2",
        "--topics",
        "2",
        "--out",
        str(out),
    )
    assert code == 0, err
    res = json.loads(out.read_text())
    assert len(res["grid"]) == 100 and res["knob"]["symbol"] == "λ"
    assert {r["field"] for r in res["complexity"]} == {"mood"}
    assert res["choice"]["rule"] == "pmse_ratio_closest_to_1" and "λ* = " in stdout


@pytest.mark.slow
def test_airline_tweets_redaction_lowers_risk_and_utility(capsys, tmp_path):
    """Acceptance: along the levels, risk and unigram similarity do not increase; level 0 is the original (the
    method's own behaviour: the release guard, which would take the handles out at level 0, is switched off)."""
    out = tmp_path / "results.json"
    grid = ["--grid", "0,1,2,3,4", "--guard-off", "URL,EMAIL,PHONE,HANDLE,CREDIT_CARD,IBAN,US_SSN,IP_ADDRESS,NAME"]
    code, _, err = run(capsys, "sweep", "--data", "airline-tweets", "--method", "redact", *grid, "--out", str(out))
    assert code == 0, err
    res = json.loads(out.read_text())
    summary = {(s["metric"], s["knob"]): s for s in res["summary"]}
    for metric in ("attack_identification_rate", "unigram_cosine", "bigram_cosine"):
        means = np.array([summary[(metric, k)]["mean"] for k in (0.0, 1.0, 2.0, 3.0, 4.0)])
        his = np.array([summary[(metric, k)]["hi"] for k in (0.0, 1.0, 2.0, 3.0, 4.0)])
        los = np.array([summary[(metric, k)]["lo"] for k in (0.0, 1.0, 2.0, 3.0, 4.0)])
        assert np.all(means[1:] <= his[:-1] + 1e-12), (metric, means)
        assert means[0] == pytest.approx(res["baseline"][f"{metric}_confidential"]["value"])
        assert los[-1] <= means[0]
    assert summary[("unigram_cosine", 4.0)]["mean"] < summary[("unigram_cosine", 0.0)]["mean"]
    assert summary[("attack_identification_rate", 0.0)]["mean"] > 0


def test_the_dashboard_imports_the_engine_before_it_listens_and_no_page_module():
    """`textsdc dashboard` imports the engine before the server starts, so the first page opened does not wait
    for it; the dashboard's own modules bind Streamlit's caches on import and must wait for its runtime."""
    import importlib

    from dashboard.launch import WARM_MODULES

    assert WARM_MODULES and not any(name.startswith("dashboard") for name in WARM_MODULES)
    for name in WARM_MODULES:
        assert importlib.import_module(name) is not None


def test_a_release_of_inferred_data_carries_no_name_or_address_column(capsys, tmp_path):
    """Data loaded without a schema: the inference makes its reviewers' names a direct identifier (dropped from
    the bundle, taken out of the text by redaction) and leaves its e-mail addresses out, so no file of the bundle
    holds one (the bundle is scanned, not the code read)."""
    from tests.conftest import tiny_frames
    from tests.leakage import bundle_texts

    frame = tiny_frames()[0]
    first = ["Debra", "Lea", "Marguerite", "Anselm", "Priya", "Tobias"]
    frame["reviewerName"] = [f"{first[i % 6]} Okonkwo-{i}" for i in range(len(frame))]
    frame["contact"] = [f"{first[i % 6].lower()}.{i}@mailbox.example" for i in range(len(frame))]
    (tmp_path / "data.csv").write_text(frame.to_csv(index=False), encoding="utf-8")
    out = tmp_path / "bundle"
    code, _, err = run(
        capsys,
        "release",
        "--data",
        str(tmp_path / "data.csv"),
        "--method",
        "redact",
        "--knob",
        "1",
        "--out",
        str(out),
        "--audit-log",
        str(tmp_path / "audit.sqlite"),
    )
    assert code == 0, err
    files = bundle_texts(out)
    secrets = [*frame["reviewerName"], *frame["contact"], "Okonkwo"]
    assert not [(name, s) for name, text in files.items() for s in secrets if s in text]
    columns = json.loads(files["manifest.json"])["columns"]
    assert "contact" not in columns and columns["reviewerName"] == "dropped"
    assert {"airline", "mood"} <= set(json.loads(files["manifest.json"])["columns"])  # the fields still leave


# ---------------------------------------------------------------------------------------------------------------
# Issue 49: the input side — delimiters, rows of the wrong length, the usage error, the swap's field, sessions


def semicolon_files(folder):
    """The tiny data as a semicolon CSV (as a spreadsheet in many locales saves it), with a column of names."""
    from tests.conftest import tiny_frames

    frame = tiny_frames()[0]
    frame["full_name"] = [f"Perpetua Quist-{i // 4}" for i in range(len(frame))]
    path = folder / "data.csv"
    frame.to_csv(path, sep=";", index=False)
    return frame, path


def test_a_semicolon_csv_releases_no_name_and_its_delimiter_is_replayed(capsys, tmp_path):
    """Read as one column, a semicolon file released every author's name in clear with exit 0: the delimiter
    is found, the names' column is left out, and a --delimiter given is written into the replay command (the
    bundle is made again from it by the test's leak scan, `tests/conftest.py`)."""
    from tests.leakage import bundle_texts

    frame, path = semicolon_files(tmp_path)
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(path), "--method", "redact", "--knob", "1", "--no-use-ner"]
    code, _, err = run(capsys, *argv, "--out", str(out), "--audit-log", str(tmp_path / "a.sqlite"))
    assert code == 0, err
    texts = bundle_texts(out)
    assert not [name for name, text in texts.items() if "Quist" in text]
    assert "--delimiter" not in json.loads(texts["manifest.json"])["replay"]  # found again by itself
    given = tmp_path / "given"
    code, _, err = run(capsys, *argv, "--delimiter", ";", "--out", str(given), "--audit-log", str(tmp_path / "b"))
    assert code == 0, err
    replay = json.loads(bundle_texts(given)["manifest.json"])["replay"]
    assert f"--data {path} --delimiter ';' --method redact" in replay


def test_dropped_rows_are_counted_and_the_choice_replayed(capsys, tmp_path):
    from engine.record.replay import ReplaySpec
    from tests.conftest import tiny_frames

    lines = tiny_frames()[0].to_csv(index=False).splitlines()
    lines[3] += ",surplus"
    lines[7] = lines[7].rsplit(",", 1)[0]
    path = tmp_path / "data.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["release", "--data", str(path), "--method", "redact", "--knob", "1", "--no-use-ner"]
    code, _, err = run(capsys, *argv, "--out", str(tmp_path / "refused"))
    assert code == 2 and err.count("\n") == 1
    assert "2 rows have another number of fields than the header's 4: row 3 (line 4) has 5, row 7 (line 8) has 3" in err
    out = tmp_path / "bundle"
    code, _, err = run(capsys, *argv, "--bad-rows", "drop", "--out", str(out), "--audit-log", str(tmp_path / "a"))
    assert code == 0, err
    assert "textsdc: left out 2 rows of data.csv (rows 3, 7): their number of fields is not the header's" in err
    spec = ReplaySpec.parse(json.loads((out / "manifest.json").read_text(encoding="utf-8"))["replay"])
    assert spec.bad_rows == "drop" and spec.delimiter is None
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["dataset"]["n_records"] == 22


def test_the_replay_command_writes_and_reads_the_delimiter_and_bad_rows():
    from engine.record.replay import ReplaySpec

    spec = ReplaySpec(data="d.csv", method="redact", knob=1.0, seed=0, replicates=1, out="o", delimiter="\t")
    assert "--delimiter tab" in spec.command() and "--bad-rows" not in spec.command()
    again = ReplaySpec.parse(spec.command())
    assert again.delimiter == "tab" and again.bad_rows == "error"
    dropping = ReplaySpec(data="d.csv", method="redact", knob=1.0, seed=0, replicates=1, out="o", bad_rows="drop")
    assert ReplaySpec.parse(dropping.command()) == dropping and "--delimiter" not in dropping.command()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["sweep", "--data", "x"],
            "textsdc: error: the following arguments are required: --method, --out (see textsdc sweep --help)\n",
        ),
        (
            ["sweep", "--data", "x", "--method", "redact", "--out", "o", "--seed", "abc"],
            "textsdc: error: argument --seed: invalid int value: 'abc' (see textsdc sweep --help)\n",
        ),
        (["swep"], "textsdc: error: argument command: invalid choice: 'swep' (choose from "),
        ([], "textsdc: error: the following arguments are required: command (see textsdc --help)\n"),
        (
            ["release", "--data", "x", "--bad-rows", "skip"],
            "argument --bad-rows: invalid choice: 'skip' (choose from 'error', 'drop')",
        ),
        (
            ["sweep", "--data", "x", "--method", "redact", "--out", "o", "--seed", "1\n2"],
            "invalid int value: '1\\n2' (see",
        ),
    ],
)
def test_a_command_line_argparse_cannot_read_is_one_line_and_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("textsdc: error: ") and message in err, err
    assert "usage:" not in err


def test_the_swap_protects_a_categorical_field_never_the_text(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--out", str(tmp_path / "o")]
    code, _, err = run(capsys, "release", "--method", "swap", "--metadata", "text", *data)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        "textsdc: error: Protected field (metadata) 'text' is the text column: the swap protects a value of each "
        "document that its text must not disclose"
    )
    assert "accepted here: 'airline', 'mood'" in err
    code, _, err = run(capsys, "release", "--method", "swap", "--metadata", "user", *data)
    assert code == 2 and "'user' is the author column" in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"knob": "abc"}, "pins[0].candidate.knob must be a finite number, got text 'abc'"),
        (
            {"seed": "x"},
            "pins[0].candidate.seed must be a whole number from 0 to 9,223,372,036,854,775,807, got text 'x'",
        ),
        ({"replicates": 2.5}, "pins[0].candidate.replicates must be a whole number from 1 to 1,000, got a number 2.5"),
        (
            {"params": {"thresholds": "abc"}},
            "pins[0].candidate.params: parameter 'thresholds' of method 'redact' must be a list",
        ),
        ({"method": 3}, "pins[0].candidate.method must be text, got a number 3"),
    ],
)
def test_a_session_file_with_a_value_of_the_wrong_type_names_the_field(capsys, tmp_path, change, message):
    session = {
        "format": "textsdc-session",
        "version": 1,
        "data": "airline-tweets",
        "fingerprint": "0" * 64,
        "pins": [{"candidate": {"name": "a", "method": "redact", "knob": 1, **change}, "metrics": {}}],
    }
    path = tmp_path / "s.textsdc.json"
    path.write_text(json.dumps(session), encoding="utf-8")
    code, _, err = run(capsys, "session", str(path))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"textsdc: error: {path} is not a session file textsdc can read: {message}")


def test_a_session_reads_its_data_as_it_was_read_when_pinned(capsys, tmp_path):
    """`textsdc pin` on a semicolon file with a dropped row keeps --delimiter and --bad-rows in the session:
    `textsdc session` reads the same data again, and the pin's replay command gives both."""
    from engine.project import Project

    _, path = semicolon_files(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, "a stray row;user9"]) + "\n", encoding="utf-8")
    session = tmp_path / "s.textsdc.json"
    argv = ["pin", "--data", str(path), "--delimiter", "semicolon", "--bad-rows", "drop", "--method", "redact"]
    code, _, err = run(capsys, *argv, "--knob", "1", "--no-use-ner", "--session", str(session), "--name", "one")
    assert code == 0, err
    assert "left out 1 row of data.csv (row 25)" in err
    project = Project.load(session)
    assert (project.delimiter, project.bad_rows) == ("semicolon", "drop")
    assert "--delimiter semicolon --bad-rows drop" in project.replay(project.get("one").candidate, "out").command()
    code, out, err = run(capsys, "session", str(session))
    assert code == 0 and "(24 records), 1 pin(s)" in out, err
