"""A Dataset's frame and fingerprint cannot drift apart: it is frozen and fingerprinted when made."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema

SCHEMA = Schema(text="text", author="user", fields=(FieldSpec("stars", "count", "sensitive"),))


def frame(stars: list[int] | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "text": ["late again", "lost my bag", "smooth landing"],
            "user": ["ann", "bob", "ann"],
            "stars": stars or [3, 1, 5],
        }
    )


def dataset(**kwargs) -> Dataset:
    return Dataset("d", kwargs.pop("frame", frame()), SCHEMA, **kwargs)


@pytest.mark.parametrize(
    "field, value",
    [
        ("frame", frame([1, 1, 1])),
        ("external", frame()),
        ("schema", Schema(text="text")),
        ("name", "other"),
        ("source", "elsewhere"),
        ("fingerprint", "0" * 64),
    ],
)
def test_assigning_a_field_raises(field, value):
    d = dataset()
    before = d.fingerprint
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(d, field, value)
    assert d.fingerprint == before


def test_the_fingerprint_cannot_be_deleted():
    d = dataset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        del d.fingerprint


def test_the_fingerprint_is_computed_when_the_dataset_is_made():
    d = dataset()
    assert "fingerprint" in vars(d)
    d.frame.loc[0, "stars"] = 4  # in-place changes are not prevented; the fingerprint describes the data as made
    assert d.fingerprint == dataset().fingerprint


def test_replace_with_another_frame_gives_a_fresh_fingerprint():
    d = dataset()
    other = dataclasses.replace(d, frame=frame([2, 1, 5]))
    assert other.fingerprint != d.fingerprint
    assert other.fingerprint == Dataset("d", frame([2, 1, 5]), SCHEMA).fingerprint
    assert d.fingerprint == dataset().fingerprint  # the original is untouched


def test_replace_with_other_external_records_or_schema_changes_the_fingerprint():
    d = dataset()
    assert dataclasses.replace(d, external=frame()[["text", "user"]]).fingerprint != d.fingerprint
    assert dataclasses.replace(d, schema=Schema(text="text", author="user")).fingerprint != d.fingerprint


def test_name_and_source_are_not_part_of_the_fingerprint():
    d = dataset()
    assert dataclasses.replace(d, name="renamed", source="upload:x.csv").fingerprint == d.fingerprint


def test_same_data_gives_the_same_fingerprint():
    a, b = dataset(), dataset(frame=frame().copy())
    assert a is not b and a.frame is not b.frame
    assert a.fingerprint == b.fingerprint
    assert dataset(external=frame()).fingerprint == dataset(external=frame()).fingerprint


def test_datasets_compare_by_identity():
    a, b = dataset(), dataset()
    assert a == a and a != b  # eq=False: equal data is told apart by `fingerprint`, not by ==
    assert len({a, b}) == 2
