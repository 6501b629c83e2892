"""A large table's first view (`dashboard.scaled`): the Protect page sweeps a sample first, says so, names the
whole dataset for Pin and Export, and shows the full sweep once the background has made it; the sample itself
(`engine.data.subsample.author_sample`)."""

from __future__ import annotations

import sys

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.data.dataset import Dataset
from engine.data.load import load_dataset
from engine.data.schema import Schema
from engine.data.subsample import author_sample
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.releases_on_disk import ReleasesOnDisk
from engine.sweep import make_release
from tests.test_dashboard import APP, TIMEOUT


def _dataset(authors: list[str], external: list[str] | None) -> Dataset:
    frame = pd.DataFrame({"text": [f"post {i}" for i in range(len(authors))], "name": authors})
    ext = None if external is None else pd.DataFrame({"text": ["held"] * len(external), "name": external})
    return Dataset("t", frame, Schema(text="text", author="name"), ext)


def test_author_sample_takes_whole_authors_and_the_intruders_targets_first() -> None:
    authors = [f"a{i % 40}" for i in range(200)]  # 40 authors with 5 records each
    dataset = _dataset(authors, ["a7", "a33"])
    sample = author_sample(dataset, 52, seed=1)
    counts = sample.frame["name"].value_counts()
    assert len(sample.frame) == 50  # ten whole authors: an eleventh would pass 52
    assert set(counts) == {5}
    assert {"a7", "a33"} <= set(counts.index)
    assert sorted(sample.external["name"]) == ["a33", "a7"]
    assert author_sample(dataset, 52, seed=1).fingerprint == sample.fingerprint  # seeded
    assert set(author_sample(dataset, 52, seed=2).frame["name"]) != set(counts.index)
    assert author_sample(dataset, 500, seed=1) is dataset  # not larger than asked: the whole
    with pytest.raises(ConfigError, match="at least 1 record"):
        author_sample(dataset, 0, seed=1)


def test_author_sample_without_authors_draws_records() -> None:
    frame = pd.DataFrame({"text": [f"post {i}" for i in range(100)]})
    dataset = Dataset("t", frame, Schema(text="text"))
    sample = author_sample(dataset, 30, seed=0)
    assert len(sample.frame) == 30 and sample.frame["text"].is_unique
    assert list(sample.frame.index) == list(range(30))


def test_a_large_table_shows_a_sample_first_then_the_full_sweep(monkeypatch, tmp_path) -> None:
    import streamlit as st

    from dashboard import compute, scaled, session
    from dashboard.caching import params_key, release_slot

    # a first visit: no sweep of the demo made by an earlier test in this process or kept in the cache folder
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(tmp_path / "cache"))
    st.cache_resource.clear()
    monkeypatch.setattr(scaled, "SAMPLE_FIRST_RECORDS", 2_000)
    monkeypatch.setattr(compute, "KEPT_ON_DISK_RECORDS", 5_000)  # the whole's releases in files, the sample's not
    monkeypatch.setattr(sys, "argv", ["app.py"])
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("views/protect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    whole = at.session_state[session.DATASET]
    note = " ".join(i.value for i in at.info)
    assert "-record sample of 6,555" in note and "The full sweep is running in the background" in note
    assert "Pin and Export use the full sweep" in note
    chosen = at.session_state[session.CHOICE]
    assert chosen.fingerprint == whole.fingerprint  # Export and Pin name the whole dataset, never the sample
    shown = scaled.sample_of(whole, 0)
    assert 1_500 < shown.n_records <= 2_000
    assert chosen.sweep is compute.get_sweep(shown, "redact", 1, 0, options=chosen.options)
    # the background sweep of the whole (waited for here as Export waits for it), then the page shows it
    full = compute.get_sweep(whole, "redact", 1, 0, options=chosen.options)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Showing the sweep of all 6,555 records" in " ".join(s.value for s in at.success)
    assert not any("-record sample" in i.value for i in at.info)
    assert at.session_state[session.CHOICE].sweep is full
    # the whole's releases were kept in files and read one at a time to draw its views; the sample's in memory
    assert isinstance(full.releases, ReleasesOnDisk) and type(chosen.sweep.releases) is dict
    assert len(list(full.releases.folder.iterdir())) == len(full.grid)
    knob = full.grid[-1]
    release = compute.get_release(whole, "redact", knob, 0, 1)
    assert not release_slot(whole.fingerprint, "redact", params_key(get_protector("redact")), knob, 0, 1).filled
    made = make_release(compute.get_fitted(whole, "redact"), knob, 0, 1)
    pd.testing.assert_frame_equal(release.data, made.data)


def test_real_table_loads_small_and_is_not_sampled() -> None:
    from dashboard import scaled

    dataset = load_dataset("airline-tweets")
    assert dataset.n_records < scaled.SAMPLE_FIRST_RECORDS  # the demo's page is as before: no sample
