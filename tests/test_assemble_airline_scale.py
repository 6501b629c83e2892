"""scripts/assemble_airline_scale.py: the 200,000-post table for the dashboard at scale, on a tiny fake copy of
../shared/data (runs everywhere) and on the real one (skipped where it is absent)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from engine.data.load import load_dataset
from tests.conftest import SHARED_DATA, needs_shared_files

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location(
        "assemble_airline_scale", ROOT / "scripts" / "assemble_airline_scale.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_shared(root: Path) -> Path:
    """Each of the five files with a few rows, laid out as ../shared/data lays them out."""
    (root / "tweets").mkdir(parents=True)
    (root / "reviews").mkdir()
    airline = pd.DataFrame(
        {
            "tweet_id": range(12),
            "airline_sentiment": ["negative", "positive", "neutral"] * 4,
            "airline": ["United", "Delta", "American", "Southwest"] * 3,
            "name": ["ann", "ann", "ann", "bob", "bob", "bob", "cy", "cy", "cy", "dee", "eve", "fay"],
            "text": [
                f"{h} flight {i} was late"
                for i, h in enumerate(["@united", "@JetBlue", "@AmericanAir", "@SouthwestAir"] * 3)
            ],
            "user_timezone": ["Eastern Time (US & Canada)", "", "Quito"] * 4,
        }
    )
    airline.to_csv(root / "tweets" / "twitter_us_airline_sentiment.csv", index=False)
    gender = pd.DataFrame(
        {
            "name": ["gus", "hal", "ivy"],
            "gender": ["male", "male", "female"],
            "text": ["new phone día", "coffee first", "rainy again"],
            "description": ["I like trains", "", "painter"],
            "user_timezone": ["London", "", "Pacific Time (US & Canada)"],
        }
    )
    gender.to_csv(root / "tweets" / "twitter_user_gender_classification.csv", index=False, encoding="latin-1")
    authorship = pd.DataFrame({"0": [repr(f"news item {i}\n".encode()) for i in range(6)], "1": [7, 7, 7, 8, 8, 8]})
    authorship.to_csv(root / "tweets" / "authorship_50users_200tweets.csv", index=False)
    clothing = pd.DataFrame({"Review Text": ["lovely dress", "too small", ""], "Rating": [5, 1, 3]})
    clothing.to_csv(root / "reviews" / "womens_clothing_ecommerce_reviews.csv")
    amazon = [{"overall": 3.0, "reviewerID": "R1", "reviewText": "ok shoes"}, {"overall": 4.0, "reviewerID": "R1"}]
    (root / "reviews" / "amazon2018_AMAZON_FASHION_5.jsonl").write_text("\n".join(json.dumps(r) for r in amazon))
    return root


def test_fake_layout_gives_the_records_asked_with_copies_said(tmp_path: Path) -> None:
    module = _script()
    data = _fake_shared(tmp_path / "shared")
    counts = module.write(tmp_path / "out", 100, 3, data)
    frame = pd.read_csv(tmp_path / "out" / "airline-scale.csv", keep_default_na=False)
    external = pd.read_csv(tmp_path / "out" / "airline-scale.external.csv", keep_default_na=False)
    # 12 airline tweets, 3 gender tweets, 2 descriptions, 6 authorship tweets, 2 clothing and 1 Amazon review
    assert sum(counts["by_source"].values()) == 26
    assert counts["original_posts"] + counts["copied_records"] == 100
    assert len(frame) == counts["records"] == 100
    assert len(external) == counts["external"] > 0
    copied = frame["name"].str.contains("~", regex=False)
    assert counts["copied_records"] == int(copied.sum()) >= 100 - 26  # at most the 26 originals are not copies
    assert not set(external["text"]) & set(frame["text"])  # no held-out post is in the table, copied or not
    assert list(frame.columns) == ["text", "name", "airline", "airline_sentiment", "user_timezone"]
    assert set(frame["airline"]) <= {"United", "Delta", "American", "Southwest"}
    assert set(frame["airline_sentiment"]) <= {"negative", "neutral", "positive"}
    assert "" not in set(frame["user_timezone"])
    # every post is addressed to its airline's handle
    handles = frame["airline"].map(module.HANDLES)
    assert all(h.lower() in t.lower() for h, t in zip(handles, frame["text"], strict=True))
    # a copy re-posts its original author's texts under a new name: fewer authors than records
    assert frame["name"].nunique() < len(frame)
    assert "sentiment" not in " ".join(external.columns)  # the intruder never holds the sensitive field
    readme = (tmp_path / "out" / "airline-scale.README.md").read_text()
    assert f"{counts['copied_records']:,} of the" in readme
    # it loads with its schema and external file, as `textsdc dashboard --data` loads it
    dataset = load_dataset(tmp_path / "out" / "airline-scale.csv")
    assert dataset.n_records == 100 and dataset.schema.author == "name"


def test_same_seed_same_bytes_other_seed_other_draw(tmp_path: Path) -> None:
    module = _script()
    data = _fake_shared(tmp_path / "shared")
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        module.write(tmp_path / name, 60, seed, data)
    read = {n: (tmp_path / n / "airline-scale.csv").read_bytes() for n in "abc"}
    assert read["a"] == read["b"]
    assert read["a"] != read["c"]


def test_refuses_assets_and_a_missing_data_folder(tmp_path: Path) -> None:
    module = _script()
    with pytest.raises(SystemExit):
        module.main([str(ROOT / "assets" / "scale"), "--data", str(tmp_path)])
    with pytest.raises(SystemExit, match="is missing"):
        module.main([str(tmp_path / "out"), "--data", str(tmp_path)])


def test_real_shared_data(tmp_path: Path) -> None:
    script = _script()
    needs_shared_files(*script.FILES.values())
    counts = script.write(tmp_path, 2_000, 0, SHARED_DATA)
    assert counts["records"] == 2_000 and counts["copied_records"] == 0  # fewer than the originals: no copy
    assert counts["authors"] < 2_000
