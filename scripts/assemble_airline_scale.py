"""Assemble a large airline-style table (default 200,000 posts) from the public files in ../shared/data, for
trying the dashboard at scale. Deterministic under ``--seed``; writes to the folder the user gives, never into
assets/.

    python scripts/assemble_airline_scale.py OUT [--records 200000] [--seed 0] [--data ../shared/data]

OUT receives ``airline-scale.csv`` (text, name, airline, airline_sentiment, user_timezone: the airline demo's
columns), ``airline-scale.schema.toml`` (the demo's roles; `load_dataset` finds it beside the CSV),
``airline-scale.external.csv`` (one held-out post of 300 authors: the intruder's texts, as the demo has) and
``airline-scale.README.md`` (what was drawn, with the counts of this run). Open it with
``textsdc dashboard --data OUT/airline-scale.csv``.

How records are drawn. 200,000 distinct posts do not exist in ../shared/data, so the table is honest about
repetition:

1. The originals, each once: the airline tweets (with their airline, sentiment and time zone), the tweets and
   the profile descriptions of the gender-classification file (one author per handle; a description is a post by
   its handle), the 50 authors' tweets of the authorship file, and the clothing and Amazon fashion reviews (an
   Amazon reviewer is an author; a clothing review has no author id, so each is its own author, "shopper-<row>").
   A post without an airline is addressed to one: its author's airline, drawn once per author from the airline
   tweets' airline shares, is written before it as the airline's handle. Sentiment: the airline tweets' label;
   a review's rating (1–2 negative, 3 neutral, 4–5 positive); otherwise drawn from the airline tweets'
   sentiment shares at that airline (so it is not predictable from the text). Time zone: the author's own where
   the file has one (the 8 most frequent, else "other", as the demo groups them), else drawn once per author
   from the authors' time zones in the airline tweets.
2. Copies, until the table has ``--records`` rows: an original author, drawn uniformly (so the copies' numbers
   of posts per author follow the originals'), gets a new pseudonymous author "<name>~<k>" who writes the same
   posts in a new order with the airline handle changed to the copy's own airline (drawn as above); sentiment and
   time zone are the original's. A copy's text is thus an original's with at most its airline handle changed:
   the README states how many records are such copies. The last copy is cut to fit.
3. Of the first ``--records`` + 300 rows in the order drawn, 300 authors with at least 3 posts each give one post
   to the external file (`engine.data.external.split_external`, seed ``--seed``; one author per 20 records in a
   table under 6,000), and every copy of a held-out post is left out of the table (the intruder would otherwise
   find her texts word for word under another name); the rows drawn next (3,000 are drawn beyond, for this)
   take their places. The table is then shuffled.

Authors therefore write as often as the real authors do (most once, some hundreds of times), so the risk
measures that group records by author are measured on authors, not on one record each.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.data.external import split_external  # noqa: E402
from engine.data.schema import ExternalSpec, FieldSpec, Schema  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data"
STEM = "airline-scale"
COLUMNS = ["text", "name", "airline", "airline_sentiment", "user_timezone"]
TOP_TIMEZONES = 8
EXTERNAL_AUTHORS = 300
COPY_MARGIN = 3_000  # rows drawn beyond the table, to replace the copies of held-out posts
HANDLES = {
    "Virgin America": "@VirginAmerica",
    "United": "@united",
    "Southwest": "@SouthwestAir",
    "Delta": "@JetBlue",  # the source's "Delta" tweets are addressed to @JetBlue
    "US Airways": "@USAirways",
    "American": "@AmericanAir",
}
HANDLE_RE = re.compile("|".join(re.escape(h) for h in HANDLES.values()), re.IGNORECASE)
SCHEMA = Schema(
    text="text",
    author="name",
    fields=(
        FieldSpec("airline", "categorical", "key"),
        FieldSpec("airline_sentiment", "categorical", "sensitive"),
        FieldSpec("user_timezone", "categorical", "key"),
    ),
)
FILES = {
    "airline": "tweets/twitter_us_airline_sentiment.csv",
    "gender": "tweets/twitter_user_gender_classification.csv",
    "authorship": "tweets/authorship_50users_200tweets.csv",
    "clothing": "reviews/womens_clothing_ecommerce_reviews.csv",
    "amazon": "reviews/amazon2018_AMAZON_FASHION_5.jsonl",
}


def _rating_sentiment(rating: pd.Series) -> pd.Series:
    r = pd.to_numeric(rating, errors="coerce")
    return pd.Series(np.select([r <= 2, r == 3, r >= 4], ["negative", "neutral", "positive"], ""), index=rating.index)


def _posts(frame: pd.DataFrame, source: str, **columns: object) -> pd.DataFrame:
    out = pd.DataFrame({c: columns.get(c, "") for c in COLUMNS}, index=frame.index)
    out["source"] = source
    out = out.fillna("")
    return out[out["text"].astype(str).str.strip() != ""]


def originals(data: Path) -> pd.DataFrame:
    """Every post of the five files once, with what its file says of it ("" where it says nothing)."""
    for f in FILES.values():
        if not (data / f).is_file():
            raise SystemExit(f"{data / f} is missing; give --data the shared data folder (see its SOURCES.md)")
    a = pd.read_csv(data / FILES["airline"], dtype=str, keep_default_na=False)
    g = pd.read_csv(data / FILES["gender"], dtype=str, encoding="latin-1", keep_default_na=False)
    w = pd.read_csv(data / FILES["authorship"], dtype=str, keep_default_na=False)
    c = pd.read_csv(data / FILES["clothing"], dtype=str, keep_default_na=False)
    z = pd.read_json(data / FILES["amazon"], lines=True, dtype=False)
    decoded = w["0"].map(lambda s: ast.literal_eval(s).decode("utf-8", "replace").strip() if s.startswith("b") else s)
    parts = [
        _posts(
            a,
            "airline tweets",
            text=a["text"],
            name=a["name"],
            airline=a["airline"],
            airline_sentiment=a["airline_sentiment"],
            user_timezone=a["user_timezone"],
        ),
        _posts(g, "gender tweets", text=g["text"], name=g["name"], user_timezone=g["user_timezone"]),
        _posts(g, "profiles", text=g["description"], name=g["name"], user_timezone=g["user_timezone"]),
        _posts(w, "authorship tweets", text=decoded, name="user" + w["1"].astype(str)),
        _posts(
            c,
            "clothing reviews",
            text=c["Review Text"],
            name="shopper-" + c.index.astype(str),
            airline_sentiment=_rating_sentiment(c["Rating"]),
        ),
        _posts(
            z,
            "Amazon reviews",
            text=z["reviewText"].fillna("").astype(str),
            name="reviewer-" + z["reviewerID"].astype(str),
            airline_sentiment=_rating_sentiment(z["overall"]),
        ),
    ]
    return pd.concat(parts, ignore_index=True)


def _top_timezones(zones: pd.Series) -> set[str]:
    """The 8 most frequent time zones of the airline tweets (ties by name); every other one becomes "other"."""
    counts = zones[zones != ""].value_counts()
    return {v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_TIMEZONES]}


def _address(text: str, airline: str) -> str:
    """The post addressed to ``airline``: its airline handles changed to that airline's, or the handle before it."""
    handle = HANDLES[airline]
    return HANDLE_RE.sub(handle, text) if HANDLE_RE.search(text) else f"{handle} {text}"


def assemble(data: Path, records: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The table, its external file and the counts the README states."""
    rng = np.random.default_rng(seed)
    posts = originals(data)
    posts["text"] = posts["text"].astype(str).str.replace(r"\s+", " ", regex=True).str.strip()
    airline_rows = posts["source"] == "airline tweets"
    keep = _top_timezones(posts.loc[airline_rows, "user_timezone"])
    given = posts["user_timezone"] != ""
    posts.loc[given, "user_timezone"] = posts.loc[given, "user_timezone"].where(
        posts.loc[given, "user_timezone"].isin(keep), "other"
    )
    shares = posts.loc[airline_rows, "airline"].value_counts(normalize=True).sort_index()
    by_airline = posts[airline_rows].groupby("airline")["airline_sentiment"].value_counts(normalize=True).sort_index()
    author_tz = posts[airline_rows].drop_duplicates("name")["user_timezone"].value_counts(normalize=True).sort_index()

    names = posts["name"].astype(str).to_numpy()
    authors, first = np.unique(names, return_index=True)
    # per author: an airline (their own for an airline tweeter's first tweet) and a time zone
    own_airline = dict(zip(names[first], posts["airline"].to_numpy()[first], strict=True))
    drawn_airline = rng.choice(shares.index.to_numpy(), size=len(authors), p=shares.to_numpy())
    airline_of = {a: own_airline[a] or d for a, d in zip(authors, drawn_airline, strict=True)}
    tz_given = posts[posts["user_timezone"] != ""].drop_duplicates("name").set_index("name")["user_timezone"]
    drawn_tz = rng.choice(author_tz.index.to_numpy(), size=len(authors), p=author_tz.to_numpy())
    tz_of = {a: tz_given.get(a, d) for a, d in zip(authors, drawn_tz, strict=True)}

    no_airline = posts["airline"] == ""
    posts.loc[no_airline, "airline"] = posts.loc[no_airline, "name"].map(airline_of)
    posts.loc[no_airline, "text"] = [
        _address(t, a) for t, a in zip(posts.loc[no_airline, "text"], posts.loc[no_airline, "airline"], strict=True)
    ]
    no_tz = posts["user_timezone"] == ""
    posts.loc[no_tz, "user_timezone"] = posts.loc[no_tz, "name"].map(tz_of)
    no_sentiment = posts["airline_sentiment"] == ""
    for airline, rows in posts[no_sentiment].groupby("airline").groups.items():
        p = by_airline.loc[airline]
        posts.loc[rows, "airline_sentiment"] = rng.choice(p.index.to_numpy(), size=len(rows), p=p.to_numpy())
    originals_n = len(posts)
    table = posts[COLUMNS]

    # the external file's posts, and their copies, come out of the table: drawn beside the records asked for
    held = min(EXTERNAL_AUTHORS, max(1, records // 20))
    wanted = records + held + COPY_MARGIN
    groups = table.groupby("name", sort=True).indices
    pieces, drawn, total = [], [], originals_n
    while total < wanted:  # copies: original authors drawn uniformly, each re-posting all their posts
        author = authors[rng.integers(len(authors))]
        rows = rng.permutation(groups[author])[: wanted - total]
        pieces.append(rows)
        drawn.append(author)
        total += len(rows)
    copies = pd.DataFrame(columns=COLUMNS)
    if pieces:
        sizes = [len(r) for r in pieces]
        k = pd.Series(drawn).groupby(drawn).cumcount().to_numpy() + 1
        copy_airline = shares.index.to_numpy()[rng.choice(len(shares), size=len(pieces), p=shares.to_numpy())]
        copies = table.iloc[np.concatenate(pieces)].copy()
        copies["name"] = np.repeat([f"{a}~{i}" for a, i in zip(drawn, k, strict=True)], sizes)
        copies["airline"] = np.repeat(copy_airline, sizes)
        copies["text"] = [_address(t, a) for t, a in zip(copies["text"], copies["airline"], strict=True)]
    if wanted < originals_n:  # a small table: originals drawn without replacement
        table = table.iloc[np.sort(rng.choice(originals_n, size=wanted, replace=False))]
    frame = pd.concat([table, copies], ignore_index=True)
    rule = ExternalSpec(holdout_per_author=1, min_records=3, max_authors=held, seed=seed)
    release, external = split_external(frame.iloc[: records + held], SCHEMA, rule)
    # a held-out post copied under another name would be a word-for-word match for the intruder: left out, and
    # the rows drawn next (the last copies) take their place; then shuffled
    release = pd.concat([release, frame.iloc[records + held :]], ignore_index=True)
    release = release[~release["text"].isin(set(external["text"]))].iloc[:records]
    release = release.iloc[rng.permutation(len(release))].reset_index(drop=True)
    counts = {
        "records": len(release),
        "external": len(external),
        "original_posts": len(release) - int(release["name"].str.contains("~", regex=False).sum()),
        "copied_records": int(release["name"].str.contains("~", regex=False).sum()),
        "copied_authors": len(pieces),
        "authors": int(release["name"].nunique()),
        "distinct_texts": int(release["text"].nunique()),
        "by_source": posts["source"].value_counts().sort_index().to_dict(),
        "seed": seed,
    }
    return release, external, counts


def readme(counts: dict) -> str:
    by_source = "\n".join(f"- {s}: {n:,} posts" for s, n in counts["by_source"].items())
    return (
        f"# {STEM}: {counts['records']:,} airline-style posts (not a demo; built locally)\n\n"
        "Written by `scripts/assemble_airline_scale.py` (its docstring says how records are drawn) from the\n"
        "public files of ../shared/data; their licences apply (the airline tweets are CC BY-NC-SA 4.0, the\n"
        "authorship tweets and Amazon reviews research-only). Do not share this table.\n\n"
        f"Seed {counts['seed']}. Originals, each once:\n\n{by_source}\n\n"
        f"{counts['copied_records']:,} of the {counts['records']:,} records are copies: "
        f'{counts["copied_authors"]:,} pseudonymous authors ("<name>~<k>") re-post an original author\'s posts '
        "with the airline handle changed. "
        f"{counts['distinct_texts']:,} distinct texts; {counts['authors']:,} authors; {counts['external']} held-out "
        "posts in the external file.\n"
    )


def write(out: Path, records: int, seed: int, data: Path) -> dict:
    """Assemble and write the four files into ``out``; returns the counts."""
    release, external, counts = assemble(data, records, seed)
    out.mkdir(parents=True, exist_ok=True)
    release.to_csv(out / f"{STEM}.csv", index=False)
    external.to_csv(out / f"{STEM}.external.csv", index=False)
    schema = replace(SCHEMA, external=ExternalSpec(file=f"{STEM}.external.csv"))
    (out / f"{STEM}.schema.toml").write_text(schema.to_toml())
    (out / f"{STEM}.README.md").write_text(readme(counts))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write into (created; not assets/)")
    parser.add_argument("--records", type=int, default=200_000, help="records in the table (default 200,000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every draw (default 0)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.records < 1:
        parser.error(f"--records must be a positive number, got {args.records}")
    if (ROOT / "assets") in [args.out.resolve(), *args.out.resolve().parents]:
        parser.error("write the table outside assets/: nothing this large is committed")
    counts = write(args.out, args.records, args.seed, args.data)
    print(json.dumps({k: v for k, v in counts.items() if k != "by_source"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
