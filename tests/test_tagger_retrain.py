"""The privacy-attribute tagger retrained on a steward's annotations (issue 51): the gain measured by
cross-validation on a hand-made sample that teaches a label the packaged tagger misses, determinism, the bad
inputs refused, and the kanon method's ``tagger`` parameter: the kept model used, recorded in the manifest by
count and digest, never shipped, and a replay refused where it is not kept."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.annotation.retrain import cross_validated, record_items, retrained_bytes
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.cli import main
from engine.data.load import load_dataset
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.kanon.retrained import (
    RetrainedTagger,
    drop_retrained,
    keep_retrained,
    kept_retrained,
    model_path,
    tagger_in_use,
)
from engine.protect.kanon.tagger import gold_texts, training_items
from engine.record.manifest import ReleaseRecord
from tests.leakage import bundle_texts, scan_bundle

INVENTED = "Zorvanian"
"""A nationality no word list holds and no gold post names: the packaged tagger cannot know it."""
PATTERNS = (
    "Proud {w} woman, mother of two and a nurse",
    "I am {w} and I love hiking in the hills",
    "{w} by birth, teacher by trade",
    "a {w} guy who writes code all day",
    "Half {w}, half coffee. Runner.",
    "Born {w}, raised everywhere",
    "just a {w} girl living her life",
    "{w} dad of three boys",
    "loud and {w} and proud of it",
    "My {w} grandmother taught me to cook",
)


def steward_sample(fingerprint: str = "f" * 64) -> Annotations:
    """Ten records, each naming the invented nationality, which the steward marked QIRACE."""
    done = {}
    for record, pattern in enumerate(PATTERNS):
        text = pattern.format(w=INVENTED)
        start = text.index(INVENTED)
        done[record] = RecordAnnotation(record, text, ((start, start + len(INVENTED), "QIRACE"),))
    return Annotations(fingerprint, "kanon", tuple(done), done)


@pytest.fixture(scope="module")
def small_gold():
    """Sixty gold posts as training items: enough for the CRF to learn every label's shape, quick to train."""
    _, texts, spans = gold_texts()
    return training_items(texts[:60], spans[:60])


def test_the_cross_validated_gain_on_a_label_the_annotations_teach(small_gold):
    gain = cross_validated(steward_sample(), gold=small_gold)
    assert gain.folds == 5 and gain.records == 10
    before, after = gain.before.get("QIRACE", "token"), gain.after.get("QIRACE", "token")
    assert before is not None and after is not None
    assert before.recall.total == after.recall.total == 10
    assert before.recall.hit == 0  # the packaged tagger misses every one
    assert after.recall.hit >= 8  # learnt from the other folds, never from the record itself
    assert after.recall.value > before.recall.value
    lo, hi = after.recall.interval()
    assert 0 < lo < after.recall.value <= hi <= 1  # a Wilson interval
    assert gain.seconds > 0 and gain.model


def test_retraining_is_deterministic(small_gold):
    one, two = (cross_validated(steward_sample(), folds=2, gold=small_gold) for _ in range(2))
    assert one.before == two.before and one.after == two.after
    assert hashlib.sha256(one.model).digest() == hashlib.sha256(two.model).digest()
    assert one.model == retrained_bytes(steward_sample(), gold=small_gold)  # the model kept: every record


def test_bad_inputs_are_refused(small_gold):
    sample = steward_sample()
    with pytest.raises(ValueError, match="needs 2 reviewed records or more; 1 reviewed"):
        cross_validated(Annotations(sample.fingerprint, "kanon", sample.sample, {0: sample.done[0]}), gold=small_gold)
    with pytest.raises(ValueError, match="the kanon detector's annotations, not 'redact'"):
        cross_validated(Annotations(sample.fingerprint, "redact", sample.sample, dict(sample.done)), gold=small_gold)
    with pytest.raises(ConfigError, match="tagger = 'other' is not accepted; accepted: packaged, retrained"):
        tagger_in_use("f" * 64, "other")
    # the annotations' other labels are left out of the training posts
    odd = RecordAnnotation(0, "Ann lives here", ((0, 3, "PERSON"),))
    assert record_items([odd])[0][1] == ["NONE", "NONE", "NONE"]


def test_kanon_tags_with_the_kept_model_and_refuses_without_it(tiny_dataset, small_gold):
    fp = tiny_dataset.fingerprint
    retrained = get_protector("kanon", tagger="retrained")
    with pytest.raises(ConfigError, match="tagger = retrained, but no retrained tagger is kept for this dataset"):
        retrained.fit(tiny_dataset)
    model = retrained_bytes(steward_sample(fp), gold=small_gold)
    kept = keep_retrained(fp, model, 10)
    try:
        assert kept == RetrainedTagger(10, hashlib.sha256(model).hexdigest())
        assert model_path(fp).stat().st_mode & 0o077 == 0  # the steward's account only
        assert kept_retrained(fp) is not None and kept_retrained(fp)[1] == kept
        text = f"a {INVENTED} woman from nowhere"
        [spans] = kept_retrained(fp)[0].tag([text])
        assert (INVENTED, "QIRACE") in [(text[s:e], label) for s, e, label in spans]
        fitted = retrained.fit(tiny_dataset)
        release = fitted.release(2, __import__("numpy").random.default_rng(0))
        assert release.detail(RetrainedTagger) == kept
        [(label, said)] = kept.facts()
        assert "10 steward-annotated records" in said and kept.digest[:12] in said
        assert get_protector("kanon").fit(tiny_dataset).retrained is None
        assert retrained.fit_identity(tiny_dataset)["retrained"] == kept.digest
    finally:
        drop_retrained(fp)
    assert kept_retrained(fp) is None


def test_a_bundle_records_the_retrained_tagger_and_replays_only_where_it_is_kept(
    tiny_files, tmp_path, capsys, small_gold
):
    data = tiny_files.parent / "data.csv"
    dataset = load_dataset(data, tiny_files)
    keep_retrained(dataset.fingerprint, retrained_bytes(steward_sample(dataset.fingerprint), gold=small_gold), 10)
    digest = kept_retrained(dataset.fingerprint)[1].digest
    out = tmp_path / "bundle"
    try:
        argv = ["release", "--data", str(data), "--schema", str(tiny_files), "--method", "kanon"]
        argv += ["--tagger", "retrained", "--knob", "2", "--out", str(out)]
        assert main(argv) == 0
        manifest = json.loads((out / "manifest.json").read_text())
        assert "--tagger retrained" in manifest["replay"]
        assert manifest["retrained_tagger"] == {"records": 10, "digest": digest}
        assert ReleaseRecord.from_manifest(manifest).retrained_tagger == RetrainedTagger(10, digest)
        assert "10 steward-annotated records" in (out / "report.html").read_text()
        tables = ("quasi_identifiers", "swapped_values")  # the conftest scans it too, with the release's changes
        assert scan_bundle(out, dataset, changes_ship=False, tables=tables) == []
        assert not list(out.rglob("*.crf"))
        for name, text in bundle_texts(out, tables).items():
            assert INVENTED not in text and "kanon-tagger.crf" not in text, name
        assert main(["verify", str(out), "--data", str(data)]) == 0
    finally:
        drop_retrained(dataset.fingerprint)
    capsys.readouterr()
    assert main(["verify", str(out), "--data", str(data)]) != 0  # a reviewer's machine: the model is not here
    assert "no retrained tagger is kept for this dataset on this machine" in capsys.readouterr().err
