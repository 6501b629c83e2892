"""Draw the posts of the cross-source privacy-attribute gold set (issue 51): a yardstick for the `kanon` tagger
from sources it was not trained on, annotated under the same GUIDELINES.md as the Twitter-gender gold set.

    .venv/bin/python scripts/make_cross_gold_sample.py --data ../shared/data --out assets/gold/privacy-attributes-cross

Two sources, each drawn by the rule of `make_gold_sample.py` (texts of 30–280 characters, English-looking, no
mojibake, ordered by the SHA-256 of their text, duplicates dropped; the first ``cued`` texts with a cue, then
the first ``plain`` without one):

- **WNUT-17 dev** (``text_anonymization/wnut17_dev.conll``, CC BY 4.0): one post per sentence, ``row`` its
  0-based number in the file. The tokens are joined back into text by `detokenize`. A sentence is cued when it
  holds a cue word of `make_gold_sample.CUES` or WNUT-17 tags one of its tokens ``person`` or ``location``.
- **Twitter US Airline Sentiment** (``tweets/twitter_us_airline_sentiment.csv``, CC BY-NC-SA 4.0): the
  ``text`` column, ``row`` the 0-based data row. A tweet is cued when it holds a cue word of
  `make_gold_sample.CUES`.

The cues only steer the sample toward posts that state something; nothing else reads them. Writes
``posts.jsonl``: id (``c0000``…), kind (``wnut17`` or ``airline-tweet``), row, text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_gold_sample import CUES, draw  # noqa: E402

WNUT = Path("text_anonymization") / "wnut17_dev.conll"
AIRLINE = Path("tweets") / "twitter_us_airline_sentiment.csv"
CLOSING = re.compile(r"[.,!?;:)\]}%…]+")
OPENING = {"(", "[", "{", "#", "@"}
APOSTROPHES = {"'", "´", "’"}
CLITICS = {"s", "t", "ve", "ll", "re", "m", "d"}


def detokenize(words: list[str]) -> str:
    """WNUT-17's tokens as text: one space between tokens, except none before a token made only of closing
    punctuation (``.,!?;:)]}%…``), none after an opening bracket or a lone ``#`` or ``@`` followed by a word, and
    an apostrophe followed by a clitic (s, t, ve, ll, re, m, d) joined to both neighbours ("That ´ s" →
    "That´s"), and a lone ``n`` before an apostrophe and ``t`` joined to the word before it ("do n ' t" →
    "don't"). Quotation marks and all other tokens keep their spaces."""
    out = ""
    for k, word in enumerate(words):
        prev = words[k - 1] if k else ""
        glued = (
            not out
            or CLOSING.fullmatch(word) is not None
            or (prev in {"(", "[", "{"})
            or (prev in {"#", "@"} and re.match(r"\w", word) is not None)
            or (word in APOSTROPHES and k + 1 < len(words) and words[k + 1].lower() in CLITICS)
            or (prev in APOSTROPHES and word.lower() in CLITICS and k >= 2)
            or (word.lower() == "n" and k + 2 < len(words) and words[k + 1] in APOSTROPHES and words[k + 2] == "t")
        )
        out += word if glued else " " + word
    return out


def wnut_sentences(path: Path) -> pd.DataFrame:
    """The sentences of a WNUT-17 CoNLL file (blank or whitespace-only lines between them): their text and
    whether a token is tagged person or location."""
    rows, words, named = [], [], False
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.strip():
            word, _, tag = line.partition("\t")
            words.append(word)
            named = named or tag.strip().endswith(("person", "location"))
        elif words:
            rows.append({"text": detokenize(words), "named": named})
            words, named = [], False
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="../shared/data", type=Path)
    p.add_argument("--out", default="assets/gold/privacy-attributes-cross", type=Path)
    p.add_argument("--cued", type=int, default=70, help="texts with a cue, per source")
    p.add_argument("--plain", type=int, default=30, help="texts without one, per source")
    args = p.parse_args(argv)
    wnut = wnut_sentences(args.data / WNUT)
    named = wnut["named"].to_dict()
    wnut_cue: Callable[[int, str], bool] = lambda row, text: bool(named[row] or CUES.search(text))  # noqa: E731
    posts = draw(wnut, "text", "wnut17", args.cued, args.plain, wnut_cue)
    airline = pd.read_csv(args.data / AIRLINE, encoding="utf-8", usecols=["text"])
    posts += draw(airline, "text", "airline-tweet", args.cued, args.plain)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"c{k:04d}", **post}, ensure_ascii=False) for k, post in enumerate(posts)]
    (args.out / "posts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(posts)} posts written to {args.out / 'posts.jsonl'}")


if __name__ == "__main__":
    main()
