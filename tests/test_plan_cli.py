"""Plans on the command line: `textsdc release --method redact+glm --knob level=2 --knob lambda=…`, each step's
parameters prefixed by its name; the manifest records the steps, their knobs and seeds; the replay command reads
back and `textsdc verify` makes the bundle again byte for byte (every bundle is scanned for leaks, conftest)."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.errors import DataError
from engine.measures.settings import MeasureSettings
from engine.record.manifest import read_record
from engine.record.replay import ReplaySpec
from tests.contract_data import contract_dataset


@pytest.fixture
def plan_files(tmp_path):
    """The contract data as data.csv, external.csv and schema.toml (its text says something of the sentiment
    beside the handles that redaction takes out); returns the schema path."""
    dataset = contract_dataset(n_authors=12)
    dataset.frame.to_csv(tmp_path / "data.csv", index=False)
    assert dataset.external is not None
    dataset.external.to_csv(tmp_path / "external.csv", index=False)
    (tmp_path / "schema.toml").write_text(dataset.schema.to_toml() + '\n[external]\nfile = "external.csv"\n')
    return tmp_path / "schema.toml"


def release_args(files, out, *extra: str) -> list[str]:
    data = ["--data", str(files.parent / "data.csv"), "--schema", str(files)]
    return ["release", *data, "--method", "redact+glm", "--no-redact.use-ner", "--glm.n-lambda", "20", *extra,
            "--out", str(out)]  # fmt: skip


@pytest.fixture
def plan_bundle(plan_files, tmp_path, capsys):
    out = tmp_path / "plan"
    args = release_args(plan_files, out, "--knob", "level=2", "--knob", "λ=0.05", "--seed", "4")
    assert main([*args, "--audit-log", str(tmp_path / "audit.sqlite")]) == 0, capsys.readouterr().err
    return out


def test_a_plan_is_released_verified_and_replayed_byte_for_byte(plan_bundle, capsys):
    said = capsys.readouterr().out
    assert "Identifier redaction, then shrinkage GLM synthesis at level = 2, λ = " in said
    manifest = json.loads((plan_bundle / "manifest.json").read_text())
    steps = manifest["method"]["steps"]
    assert [s["method"] for s in steps] == ["redact", "glm"]
    assert steps[0]["knob"] == {"name": "level", "symbol": "level", "value": 2.0}
    assert steps[0]["seed"] == {"step_seed": 0, "position": 0} and steps[1]["seed"] == "the release's seed"
    assert manifest["method"]["params"]["redact__level"] == 2
    record = read_record(plan_bundle)
    assert record.method.steps[1]["knob"]["value"] == record.method.knob
    command = manifest["replay"]["command"] if isinstance(manifest["replay"], dict) else manifest["replay"]
    assert "--method redact+glm" in command and "--knob level=2 --knob lambda=" in command
    assert "--no-redact.use-ner" in command and "--glm.n-lambda 20" in command
    released = (plan_bundle / "release.csv").read_text()
    assert "@user" not in released and "[HANDLE_1]" in released  # the handles redacted
    assert main(["verify", str(plan_bundle)]) == 0
    assert "the replay makes the same files" in capsys.readouterr().out


def test_a_plans_replay_command_reads_back_into_the_same_spec():
    params = {"redact__level": 3, "redact__use_ner": False, "glm__n_lambda": 20, "step_seed": 7}
    spec = ReplaySpec("d.csv", "redact+glm", 0.125, 3, 2, "out", params, MeasureSettings(topics=7), 1)
    command = spec.command()
    assert "--knob level=3 --knob lambda=0.125" in command and "--step-seed 7" in command
    assert ReplaySpec.parse(command) == spec
    with pytest.raises(DataError, match="no --knob lambda=VALUE for the plan's last step"):
        ReplaySpec.parse(command.replace("--knob lambda=0.125", ""))


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--knob", "2"], "a plan has a knob per step; give level=VALUE, lambda=VALUE"),
        (["--knob", "level=9"], "out of range; accepted: 0 to 4"),
        (["--knob", "eps=1"], "no step's knob is named 'eps'"),
        (["--cart.fields", "mood"], "--cart.fields: cart is no step of plan 'redact+glm'"),
        (["--min-leaf", "3"], "does not apply to plan 'redact+glm'"),
    ],
)
def test_a_plan_given_what_it_does_not_take_says_so_before_any_work(tiny_files, tmp_path, capsys, extra, said):
    assert main(release_args(tiny_files, tmp_path / "x", *extra)) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_step_flag_for_a_single_method_is_refused(tiny_files, tmp_path, capsys):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    assert main(["release", *data, "--method", "cart", "--glm.fields", "mood", "--out", str(tmp_path / "y")]) == 2
    assert "--glm.fields sets a parameter of a plan's step; --method cart is no plan" in capsys.readouterr().err


def test_compare_puts_a_plan_beside_the_single_methods(plan_files, tmp_path, capsys):
    data = ["--data", str(plan_files.parent / "data.csv"), "--schema", str(plan_files)]
    out = tmp_path / "compare"
    args = ["compare", *data, "--methods", "redact,glm,redact+glm", "--no-use-ner", "--no-redact.use-ner"]
    assert main([*args, "--glm.n-lambda", "20", "--n-lambda", "20", "--out", str(out)]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    assert "3 methods on data" in said and "  redact+glm " in said
    payload = json.loads((out / "compare.json").read_text())
    assert "redact+glm" in json.dumps(payload)


def test_a_plan_is_pinned_and_its_session_checks_again(plan_files, tmp_path, capsys):
    from engine.project import Project, session_path

    data = ["--data", str(plan_files.parent / "data.csv"), "--schema", str(plan_files)]
    session = tmp_path / "work"
    args = ["pin", "--session", str(session), "--name", "plan", *data, "--method", "redact+glm"]
    knobs = ["--knob", "level=2", "--knob", "lambda=0.05", "--no-redact.use-ner", "--glm.n-lambda", "20"]
    assert main([*args, *knobs]) == 0, capsys.readouterr().err
    pin = Project.load(session_path(session)).get("plan")
    assert pin.candidate.method == "redact+glm" and pin.candidate.params["redact__level"] == 2
    assert "release_identification_probability" in pin.metrics
    assert main(["session", str(session_path(session)), "--check"]) == 0, capsys.readouterr().out
    out = tmp_path / "exported"
    why = ["--by", "A. Steward", "--why", "handles out before the fields are drawn"]
    assert main(["export", "--session", str(session_path(session)), "--pin", "plan", *why, "--out", str(out)]) == 0
    assert json.loads((out / "manifest.json").read_text())["method"]["steps"][0]["knob"]["value"] == 2
    assert main(["verify", str(out)]) == 0, capsys.readouterr().out
    assert main([*args[:4], "again", *args[5:], "--knob", "level=2"]) == 2
    assert "give the value of the knob of redact+glm's last step" in capsys.readouterr().err


def test_a_plan_is_swept_along_its_last_knob_at_the_other_steps_knob(plan_files, tmp_path, capsys):
    data = ["--data", str(plan_files.parent / "data.csv"), "--schema", str(plan_files)]
    base = ["sweep", *data, "--method", "redact+glm", "--no-redact.use-ner", "--glm.n-lambda", "20"]
    out = tmp_path / "sweep.json"
    assert main([*base, "--knob", "level=2", "--out", str(out)]) == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    assert payload["method"] == "redact+glm" and len(payload["grid"]) > 3
    assert "Identifier redaction, then shrinkage GLM synthesis (level = 2) on data" in capsys.readouterr().out
    assert main([*base, "--knob", "lambda=0.1", "--out", str(tmp_path / "other.json")]) == 2
    assert "a sweep goes along the knob of redact+glm's last step; give its values as --grid" in capsys.readouterr().err
