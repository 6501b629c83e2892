"""Build the five demo datasets in assets/demo/ from the raw files in ../shared/data (see its SOURCES.md).

    python scripts/make_demos.py [--data ../shared/data] [--out assets/demo]

Each demo folder gets data.csv (and for airline-tweets external.csv), schema.toml, demo.toml (title,
description, licence) and README.md; assets/demo/README.md indexes them. All files are UTF-8 with "\\n" line
endings. Randomness is numpy.random.default_rng(0), a fresh generator per demo, so re-running the script
gives byte-identical files. Values are copied as written in the source file (read as strings), never reformatted.

Sampling rules:

- airline-tweets (tweets/twitter_us_airline_sentiment.csv): keep the tweets of users (`name`) with at least 3
  tweets (4 if the demo would exceed 2 MB). user_timezone is reduced to its 8 most frequent values among
  those tweets (ties by name) and "other" (missing is "other"). The hold-out rule of
  engine.data.external.split_external (seed 0) then moves one tweet of each of 300 users into external.csv:
  the eligible users are sorted by name, 300 are drawn without replacement, and for each chosen user (in
  name order) one of their tweets is drawn. external.csv keeps text, name, airline, user_timezone.
- nyc-airbnb (airbnb/AB_NYC_2019.csv): of the listings with a non-empty name and price > 0, 10,000 drawn
  without replacement, kept in file order.
- clothing-reviews (reviews/womens_clothing_ecommerce_reviews.csv): of the reviews with a non-empty Review
  Text, 3,000 drawn without replacement, kept in file order; columns renamed to snake_case.
- earnings-calls (earnings_calls/maec_2017-02_transcripts.jsonl): the first 35 calls in call_id order with
  at least 20 sentences, each cut into consecutive chunks of 8 sentences joined by a space (the last chunk
  may be shorter); `chunk` numbers the chunks of a call from 1. No randomness.
- twitter-profiles (tweets/twitter_user_gender_classification.csv, read as latin-1): of the rows with a
  non-empty description and gender male, female or brand, 3,000 drawn without replacement, kept in file
  order; user_timezone reduced as for airline-tweets (8 most frequent in the sample, plus "other").

"Drawn" means ``rng.choice(n_eligible, size, replace=False)`` on the eligible rows in file order, sorted back
into file order. "Non-empty" means not missing and not only whitespace.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.data.external import split_external  # noqa: E402
from engine.data.load import load_dataset  # noqa: E402
from engine.data.schema import ExternalSpec, FieldSpec, Schema, dict_to_toml  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "assets" / "demo"
RAW_FILES = {
    "airline": Path("tweets") / "twitter_us_airline_sentiment.csv",
    "airbnb": Path("airbnb") / "AB_NYC_2019.csv",
    "clothing": Path("reviews") / "womens_clothing_ecommerce_reviews.csv",
    "earnings": Path("earnings_calls") / "maec_2017-02_transcripts.jsonl",
    "gender": Path("tweets") / "twitter_user_gender_classification.csv",
}
"""The files of the shared data folder the demos are made from."""
SEED = 0
MAX_DEMO_BYTES = 2 * 1024 * 1024
TOP_TIMEZONES = 8


@dataclass
class Demo:
    """One demo before it is written: its records, schema, metadata and the README's particulars."""

    name: str
    title: str
    description: str
    licence: str
    schema: Schema
    data: pd.DataFrame
    external: pd.DataFrame | None = None
    identifiers: pd.DataFrame | None = None  # direct identifiers of the protected metadata (identifiers.csv)
    origin: str = ""  # file under shared/data
    upstream: str = ""  # repository @ commit, path
    attribution: str = ""
    sampling: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------------
# Helpers


def read_csv_as_strings(path: Path, encoding: str = "utf-8") -> pd.DataFrame:
    """Every value as the string written in the file; only empty cells are missing."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding=encoding)


def non_empty(col: pd.Series) -> pd.Series:
    return col.fillna("").str.strip().ne("")


def draw_rows(frame: pd.DataFrame, size: int, seed: int = SEED) -> pd.DataFrame:
    """``size`` rows drawn without replacement with default_rng(seed), returned in their original order."""
    rng = np.random.default_rng(seed)
    picked = np.sort(rng.choice(len(frame), size=size, replace=False))
    return frame.iloc[picked].reset_index(drop=True)


def top_values(col: pd.Series, n: int = TOP_TIMEZONES, other: str = "other") -> pd.Series:
    """Keep the ``n`` most frequent values (ties broken by value); everything else, and missing, is ``other``."""
    counts = col.dropna().value_counts()
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    keep = {v for v, _ in ranked}
    return col.where(col.isin(keep), other).fillna(other)


# ---------------------------------------------------------------------------------------------------------------
# The five demos


def airline_tweets(data_dir: Path) -> Demo:
    raw = read_csv_as_strings(data_dir / RAW_FILES["airline"])
    schema = Schema(
        text="text",
        author="name",
        fields=(
            FieldSpec("airline", "categorical", "key"),
            FieldSpec("airline_sentiment", "categorical", "sensitive"),
            FieldSpec("user_timezone", "categorical", "key"),
        ),
    )
    for min_tweets in (3, 4):
        counts = raw["name"].value_counts()
        kept = raw[raw["name"].isin(counts.index[counts >= min_tweets])].reset_index(drop=True)
        kept = kept[schema.columns].copy()
        kept["user_timezone"] = top_values(kept["user_timezone"])
        rule = ExternalSpec(holdout_per_author=1, min_records=min_tweets, max_authors=300, seed=SEED)
        release, external = split_external(kept, schema, rule)
        size = len(_csv_bytes(release)) + len(_csv_bytes(external))
        if size <= MAX_DEMO_BYTES - 64 * 1024:  # room for schema, README and metadata
            break
    tightened = min_tweets > 3
    return Demo(
        name="airline-tweets",
        title="US airline tweets",
        description=(
            f"Tweets to six US airlines by {release['name'].nunique():,} users who each wrote at least {min_tweets} "
            "of them, "
            "with the airline, the tweet's sentiment and the user's time zone; one held-out tweet of 300 users "
            "is the intruder's external text."
        ),
        licence="CC BY-NC-SA 4.0",
        schema=replace(schema, external=ExternalSpec(file="external.csv")),
        data=release,
        external=external,
        origin="tweets/twitter_us_airline_sentiment.csv",
        upstream=(
            "`Anuragiitk/Twitter-US-Sentiment-Analysis` @ `58786bed120ea193a2a6ed6d5565c4dbbc4890a9`, path "
            '`Tweets.csv` — the Kaggle "Twitter US Airline Sentiment" data (Figure Eight / CrowdFlower, Data '
            "for Everyone)"
        ),
        attribution=(
            '"Twitter US Airline Sentiment", Figure Eight (formerly CrowdFlower), Data for Everyone library, '
            "published on Kaggle; licensed CC BY-NC-SA 4.0 (https://creativecommons.org/licenses/by-nc-sa/4.0/). "
            "This sample is an adaptation (rows and columns selected, time zones grouped) and is shared under "
            "the same licence. **Non-commercial use only**: it may not be used for commercial purposes, and "
            "anything built from it must be shared under CC BY-NC-SA 4.0 too."
        ),
        sampling=[
            f"Keep every tweet of the users (`name`) who have at least {min_tweets} tweets in the file"
            + (" (tightened from 3 because the demo would exceed 2 MB)." if tightened else "."),
            "`user_timezone`: the 8 most frequent time zones among those tweets (ties by name) are kept; every "
            "other value, and a missing one, becomes `other`.",
            "Hold-out (the intruder's external texts), with `numpy.random.default_rng(0)`: the users with at "
            f"least {min_tweets} tweets are sorted by name, 300 of them are drawn without replacement, and for each "
            "chosen user, in name order, one of their tweets is drawn and moved from data.csv to external.csv. "
            "This is `engine.data.external.split_external` with holdout_per_author=1, "
            f"min_records={min_tweets}, max_authors=300, seed=0.",
            "external.csv keeps what an intruder may know: text, name, airline, user_timezone — not the "
            "sensitive sentiment.",
            "Dropped: tweet ids, coordinates, creation times, locations, negative reasons, confidences, gold "
            "labels and retweet counts.",
        ],
        notes=[
            "Tweets mention real public Twitter handles (@...), and `name` is each author's public screen name.",
        ],
    )


def nyc_airbnb(data_dir: Path) -> Demo:
    raw = read_csv_as_strings(data_dir / RAW_FILES["airbnb"])
    eligible = raw[non_empty(raw["name"]) & (pd.to_numeric(raw["price"], errors="coerce") > 0)]
    schema = Schema(
        text="name",
        fields=(
            FieldSpec("neighbourhood_group", "categorical", "key"),
            FieldSpec("room_type", "categorical", "key"),
            FieldSpec("number_of_reviews", "count", "key"),
            FieldSpec("availability_365", "count", "sensitive"),
            FieldSpec("price", "continuous", "sensitive"),
        ),
        methods=(("count-bayes", (("upper", 365),)),),  # days of a year: a public bound (Guo & Hu's 0–365)
    )
    data = draw_rows(eligible.reset_index(drop=True), 10_000)[schema.columns]
    return Demo(
        name="nyc-airbnb",
        title="New York City Airbnb listings (2019)",
        description=(
            "10,000 Airbnb listings in New York City: the listing's title as text, with borough, room type, "
            "number of reviews, availability and price."
        ),
        licence="CC0 1.0 (Kaggle); underlying data Inside Airbnb, CC BY 4.0",
        schema=schema,
        data=data,
        origin="airbnb/AB_NYC_2019.csv",
        upstream=(
            "`amcelvis/Airbnb-Data-Analysis` @ `7aa991ac4fb7959fe9bbbe14eaf5f8a31efc8a74`, path "
            '`AB_NYC_2019.csv.zip`, member `AB_NYC_2019.csv` — the Kaggle "New York City Airbnb Open Data" '
            "file (dgomonov)"
        ),
        attribution=(
            '"New York City Airbnb Open Data" by Dgomonov on Kaggle, dedicated to the public domain under CC0 '
            "1.0. The data were compiled from Inside Airbnb (http://insideairbnb.com), whose data are licensed "
            'CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/): "Data from Inside Airbnb". This sample '
            "selects rows and columns and changes no value."
        ),
        sampling=[
            "Eligible: listings with a non-empty `name` and `price` > 0.",
            "10,000 of them drawn without replacement with `numpy.random.default_rng(0)` "
            "(`rng.choice(n_eligible, 10000, replace=False)`), kept in file order.",
            "Dropped: listing and host ids, host names, neighbourhood, latitude/longitude, minimum nights, "
            "review dates and rates, host listing counts.",
        ],
        notes=["There is no author column: each listing is one record."],
    )


def clothing_reviews(data_dir: Path) -> Demo:
    raw = read_csv_as_strings(data_dir / RAW_FILES["clothing"])
    renamed = raw.rename(
        columns={
            "Review Text": "review_text",
            "Rating": "rating",
            "Recommended IND": "recommended",
            "Age": "age",
            "Division Name": "division_name",
            "Department Name": "department_name",
            "Class Name": "class_name",
        }
    )
    schema = Schema(
        text="review_text",
        fields=(
            FieldSpec("rating", "categorical", "sensitive"),
            FieldSpec("recommended", "categorical", "sensitive"),
            FieldSpec("age", "count", "key"),
            FieldSpec("division_name", "categorical", "key"),
            FieldSpec("department_name", "categorical", "key"),
            FieldSpec("class_name", "categorical", "key"),
        ),
    )
    eligible = renamed[non_empty(renamed["review_text"])].reset_index(drop=True)
    data = draw_rows(eligible, 3_000)[schema.columns]
    return Demo(
        name="clothing-reviews",
        title="Women's clothing e-commerce reviews",
        description=(
            "3,000 reviews of women's clothing with the reviewer's age, rating, whether they recommend the item, "
            "and the product's division, department and class."
        ),
        licence="CC0 1.0",
        schema=schema,
        data=data,
        origin="reviews/womens_clothing_ecommerce_reviews.csv",
        upstream=(
            "`MichalSzopinski00/The-Best-Classifier` @ `31a3d4bdcaf1499e4a8bfc74d4b935280a616d91`, path "
            "`womens-ecommerce-clothing-reviews.zip`, member `womens-ecommerce-clothing-reviews/Womens Clothing "
            "E-Commerce Reviews.csv` — the Kaggle dataset by nicapotato"
        ),
        attribution=(
            '"Women\'s E-Commerce Clothing Reviews" by nicapotato on Kaggle, dedicated to the public domain under '
            "CC0 1.0 (https://creativecommons.org/publicdomain/zero/1.0/). Attribution is not required; we give it "
            "as a courtesy."
        ),
        sampling=[
            "Eligible: reviews with a non-empty `Review Text`.",
            "3,000 of them drawn without replacement with `numpy.random.default_rng(0)`, kept in file order.",
            "Columns renamed to snake_case (`Recommended IND` → `recommended`). Dropped: the unnamed index, "
            "Clothing ID, Title and Positive Feedback Count.",
            "A few reviews have no division/department/class; those cells are empty and load as `(missing)`.",
        ],
        notes=["There is no author column: each review is one record."],
    )


EARNINGS_CALL_COMPANIES: dict[str, tuple[str, ...]] = {
    "ADP": ("Automatic Data Processing, Inc.",),
    "AFG": ("American Financial Group, Inc.",),
    "AIV": (
        "Apartment Investment and Management Company",
        "Aimco",
    ),
    "AN": ("AutoNation, Inc.",),
    "ANTM": ("Anthem, Inc.",),
    "AVY": ("Avery Dennison Corporation",),
    "CBM": ("Cambrex Corporation",),
    "CBT": ("Cabot Corporation",),
    "CI": ("Cigna Corporation",),
    "CLX": ("The Clorox Company",),
    "CMG": (
        "Chipotle Mexican Grill, Inc.",
        "Chipotle",
    ),
    "CY": ("Cypress Semiconductor Corporation",),
    "EQT": ("EQT Corporation",),
    "EZPW": ("EZCORP, Inc.",),
    "GPI": ("Group 1 Automotive, Inc.",),
    "HSY": (
        "The Hershey Company",
        "Hershey",
    ),
    "IR": ("Ingersoll-Rand plc",),
    "JCI": ("Johnson Controls International plc",),
    "KIM": ("Kimco Realty Corporation",),
    "LNC": (
        "Lincoln National Corporation",
        "Lincoln Financial Group",
    ),
    "LYB": (
        "LyondellBasell Industries N.V.",
        "LyondellBasell",
    ),
    "MAA": ("Mid-America Apartment Communities, Inc.",),
    "MINI": ("Mobile Mini, Inc.",),
    "MTX": ("Minerals Technologies Inc.",),
    "PH": (
        "Parker-Hannifin Corporation",
        "Parker Hannifin",
    ),
    "PSX": ("Phillips 66",),
    "RGLD": ("Royal Gold, Inc.",),
    "RGS": ("Regis Corporation",),
    "SKYW": ("SkyWest, Inc.",),
    "SSD": (
        "Simpson Manufacturing Co., Inc.",
        "Simpson Strong-Tie",
    ),
    "THG": ("The Hanover Insurance Group, Inc.",),
    "TSCO": ("Tractor Supply Company",),
    "V": ("Visa Inc.",),
    "WY": ("Weyerhaeuser Company",),
    "XEL": ("Xcel Energy Inc.",),
}
"""Company names of the earnings-calls demo by ticker: public facts written for this sample (where
ect_ticker_company_names.csv lists a ticker, its name agrees), for the swap method's identifiers.csv."""


def earnings_calls(data_dir: Path) -> Demo:
    path = data_dir / RAW_FILES["earnings"]
    calls = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    calls = sorted((c for c in calls if len(c["sentences"]) >= 20), key=lambda c: c["call_id"])[:35]
    rows = []
    for call in calls:
        sentences = call["sentences"]
        for k, start in enumerate(range(0, len(sentences), 8), start=1):
            rows.append(
                {
                    "text": " ".join(sentences[start : start + 8]),
                    "call_id": call["call_id"],
                    "chunk": str(k),
                    "ticker": call["ticker"],
                }
            )
    tickers = sorted({c["ticker"] for c in calls})
    identifiers = pd.DataFrame(
        [(t, "Company Name", name) for t in tickers for name in EARNINGS_CALL_COMPANIES[t]],
        columns=["ticker", "label", "value"],
    )
    schema = Schema(
        text="text",
        document="call_id",
        fields=(FieldSpec("chunk", "count", "other"), FieldSpec("ticker", "categorical", "sensitive")),
    )
    return Demo(
        name="earnings-calls",
        title="Earnings conference calls (MAEC, February 2017)",
        description=(
            "35 earnings calls of US companies from February 2017, cut into chunks of 8 sentences; the "
            "sensitive field is the company's ticker."
        ),
        licence="CC BY-SA 4.0",
        schema=schema,
        data=pd.DataFrame(rows, columns=schema.columns),
        identifiers=identifiers,
        origin="earnings_calls/maec_2017-02_transcripts.jsonl",
        upstream=(
            "`Earnings-Call-Dataset/MAEC-A-Multimodal-Aligned-Earnings-Conference-Call-Dataset-for-Financial-Risk-"
            "Prediction` @ `65a109f5b1a8cb4c96e8337b749ce3db41f2c210`, files `MAEC_Dataset/201702??_*/text.txt`"
        ),
        attribution=(
            "MAEC: A Multimodal Aligned Earnings Conference Call Dataset for Financial Risk Prediction (Li, Yang, "
            "Smyth & Dong, CIKM 2020), https://github.com/Earnings-Call-Dataset/MAEC-A-Multimodal-Aligned-"
            "Earnings-Conference-Call-Dataset-for-Financial-Risk-Prediction, licensed CC BY-SA 4.0 "
            "(https://creativecommons.org/licenses/by-sa/4.0/). This sample is an adaptation (calls selected, "
            "sentences grouped into chunks) and is shared under the same licence: **share-alike** — anything "
            "built from it must be released under CC BY-SA 4.0 as well."
        ),
        sampling=[
            "The calls are sorted by `call_id` (date, then ticker); the first 35 with at least 20 sentences are "
            "kept. No randomness.",
            "Each call's sentences are cut into consecutive chunks of 8 (the last chunk may be shorter); a chunk's "
            "sentences are joined by a single space. MAEC sentences carry no final full stop, so chunks read as "
            "run-on text.",
            "`chunk` is the chunk's position in its call, from 1. `call_id` marks the document a chunk belongs to.",
            "Dropped: date, source path and the speaker labels.",
        ],
        notes=[
            "MAEC text is partly pre-anonymised: `<UNK>` replaces some names. It mixes prepared remarks with Q&A.",
            "The ticker names the company the text came from; guessing it from the text is the disclosure risk.",
            "`identifiers.csv` lists each company's name (and a short form where the calls use one) for the swap "
            "method, which suppresses these direct identifiers and the ticker before swapping; the names are "
            "public facts written for this sample (those in `ect_ticker_company_names.csv`, ODC-PDDL, agree).",
        ],
    )


def twitter_profiles(data_dir: Path) -> Demo:
    raw = read_csv_as_strings(data_dir / RAW_FILES["gender"], encoding="latin-1")
    eligible = raw[non_empty(raw["description"]) & raw["gender"].isin(["male", "female", "brand"])]
    schema = Schema(
        text="description",
        fields=(
            FieldSpec("gender", "categorical", "sensitive"),
            FieldSpec("user_timezone", "categorical", "key"),
            FieldSpec("tweet_count", "count", "other"),
        ),
    )
    data = draw_rows(eligible.reset_index(drop=True), 3_000)[schema.columns].copy()
    data["user_timezone"] = top_values(data["user_timezone"])
    return Demo(
        name="twitter-profiles",
        title="Twitter profiles with gender",
        description=(
            "3,000 Twitter profile descriptions (bios) labelled male, female or brand, with the user's time zone "
            "and tweet count."
        ),
        licence="CC0 1.0 (as listed on Kaggle; not verified)",
        schema=schema,
        data=data,
        origin="tweets/twitter_user_gender_classification.csv",
        upstream=(
            "`mgent83/dataScience` @ `56971eebd972174f9c2013da7954666e5028e2a4`, path "
            '`gender-classifier-DFE-791531.csv.zip` — the CrowdFlower "Twitter User Gender Classification" '
            "data as published on Kaggle"
        ),
        attribution=(
            '"Twitter User Gender Classification", Figure Eight (formerly CrowdFlower), Data for Everyone '
            "library, published on Kaggle. The Kaggle page lists it as CC0 1.0 (public domain); **we have not "
            "verified this licence** — check it before redistributing the data outside this project."
        ),
        sampling=[
            "The source file is latin-1 / cp1252 encoded; it is read as latin-1 and written as UTF-8. Some "
            "mojibake of the original remains.",
            "Eligible: rows with a non-empty `description` and `gender` male, female or brand.",
            "3,000 of them drawn without replacement with `numpy.random.default_rng(0)`, kept in file order.",
            "`user_timezone`: the 8 most frequent time zones in the sample (ties by name) are kept; every other "
            "value, and a missing one, becomes `other`.",
            "Dropped: the handle `name` (a direct identifier), the tweet text, profile images, colours, "
            "coordinates, dates, ids and the crowd-labelling columns.",
        ],
        notes=["Descriptions are real public bios and may mention names, places and other handles."],
    )


BUILDERS: list[Callable[[Path], Demo]] = [
    airline_tweets,
    nyc_airbnb,
    clothing_reviews,
    earnings_calls,
    twitter_profiles,
]


# ---------------------------------------------------------------------------------------------------------------
# Writing


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _write(path: Path, content: bytes | str) -> None:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def _role_of(schema: Schema, column: str) -> str:
    if column == schema.text:
        return "text"
    if column == schema.author:
        return "author"
    if column == schema.document:
        return "document"
    f = schema.field(column)
    return f"{f.kind}, {f.role}"


def readme(demo: Demo) -> str:
    n_ext = 0 if demo.external is None else len(demo.external)
    lines = [
        f"# {demo.title} (`{demo.name}`)",
        "",
        demo.description,
        "",
        f"- Records: {len(demo.data):,} in `data.csv`"
        + (f"; {n_ext:,} external records in `external.csv`" if n_ext else ""),
        f"- Licence: {demo.licence}",
        "",
        "## Origin",
        "",
        f"- File: `../shared/data/{demo.origin}` (see that folder's SOURCES.md).",
        f"- Upstream: {demo.upstream}.",
        "",
        "## Licence and attribution",
        "",
        demo.attribution,
        "",
        "## How this sample was made",
        "",
        "Built by `scripts/make_demos.py` (seed 0); re-running it gives byte-identical files.",
        "",
        *[f"- {s}" for s in demo.sampling],
        "",
        "## Columns",
        "",
        "| column | role |",
        "|---|---|",
        *[f"| `{c}` | {_role_of(demo.schema, c)} |" for c in demo.schema.columns],
        "",
        "Roles: *sensitive* fields are what a release must protect; *key* fields are what an intruder may "
        "already know; *other* fields are neither.",
    ]
    if demo.notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in demo.notes]]
    return "\n".join(lines) + "\n"


def write_demo(demo: Demo, out_dir: Path) -> Path:
    folder = out_dir / demo.name
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "data.csv", _csv_bytes(demo.data))
    if demo.external is not None:
        _write(folder / "external.csv", _csv_bytes(demo.external))
    if demo.identifiers is not None:
        _write(folder / "identifiers.csv", _csv_bytes(demo.identifiers))
    _write(folder / "schema.toml", "# Written by scripts/make_demos.py\n" + demo.schema.to_toml())
    meta = {"title": demo.title, "description": demo.description, "licence": demo.licence}
    _write(folder / "demo.toml", "# Written by scripts/make_demos.py\n" + dict_to_toml(meta))
    _write(folder / "README.md", readme(demo))
    return folder


def index_readme(demos: list[Demo]) -> str:
    lines = [
        "# Demo datasets",
        "",
        "Small samples of public data, each in its own folder with `data.csv`, an optional `external.csv` (the "
        "intruder's texts), `schema.toml` (column roles), `demo.toml` (title, description, licence) and a README "
        "giving its origin, licence and sampling rule. Load one with `engine.data.load.load_dataset(name)` or "
        "`textsdc ... --data NAME`.",
        "",
        "They are built by `scripts/make_demos.py` from the raw files in `../shared/data` (seeded; re-running it "
        "gives byte-identical files). Check each licence before using a demo outside this project; "
        "`airline-tweets` is non-commercial.",
        "",
        "| name | title | records | external | licence |",
        "|---|---|---:|---:|---|",
    ]
    for d in demos:
        n_ext = 0 if d.external is None else len(d.external)
        lines.append(f"| [`{d.name}`]({d.name}/README.md) | {d.title} | {len(d.data):,} | {n_ext:,} | {d.licence} |")
    return "\n".join(lines) + "\n"


def check(folder: Path) -> tuple[int, int]:
    """Load the written demo with the engine's own validation; returns (records, external records)."""
    ds = load_dataset(folder / "data.csv", folder / "schema.toml", name=folder.name)
    return ds.n_records, 0 if ds.external is None else len(ds.external)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared/data folder (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the demos (default: %(default)s)")
    args = parser.parse_args(argv)
    if not (args.data / "SOURCES.md").is_file():
        print(f"error: {args.data} does not look like the shared data folder (no SOURCES.md)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    demos = [build(args.data) for build in BUILDERS]
    rows = []
    for demo in demos:
        folder = write_demo(demo, args.out)
        n, n_ext = check(folder)
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        if size > MAX_DEMO_BYTES:
            print(f"error: {demo.name} is {size / 1e6:.2f} MB, over the 2 MB budget", file=sys.stderr)
            return 1
        rows.append((demo.name, n, n_ext, size))
    _write(args.out / "README.md", index_readme(demos))
    print(f"{'demo':<18} {'records':>8} {'external':>9} {'size':>10}")
    for name, n, n_ext, size in rows:
        print(f"{name:<18} {n:>8,} {n_ext:>9,} {size / 1024:>8.0f} KB")
    print(
        f"{'total':<18} {sum(r[1] for r in rows):>8,} {sum(r[2] for r in rows):>9,} {sum(r[3] for r in rows) / 1024:>8.0f} KB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
