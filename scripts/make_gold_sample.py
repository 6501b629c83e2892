"""Draw the posts of the privacy-attribute gold set (issue 14) from the Twitter User Gender Classification data
(CrowdFlower, CC0; ../shared/data/tweets/twitter_user_gender_classification.csv, read as latin-1).

    .venv/bin/python scripts/make_gold_sample.py --data ../shared/data --out assets/gold/privacy-attributes

The rule is deterministic (no seed): English-looking texts of 30–280 characters without mojibake, profile
descriptions and tweets apart, ordered by the SHA-256 of their text; of each kind, the first ``cued`` texts that
hold one of the cue words below (the paper picked its tweets by a keyword search, Abeywardana & Thayasivam,
Section 5) and the first ``plain`` others. The cue words only steer the sample toward posts that hold privacy
attributes; they are not a gazetteer and nothing else reads them. Writes ``posts.jsonl``: id, kind
(description or tweet), row (0-based row of the source file), text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

SOURCE = Path("tweets") / "twitter_user_gender_classification.csv"
CUES = re.compile(
    r"\b(\d\d ?(y/?o|yrs?|years? old)|age[ds]? \d|born in|mom|mum|dad|wife|husband|married|single|divorced|"
    r"girlfriend|boyfriend|gay|lesbian|cancer|diabet\w*|depress\w*|anxiety|autis\w*|adhd|pregnan\w*|sick|"
    r"teacher|nurse|doctor|student|engineer|lawyer|writer|developer|manager|designer|photographer|ceo|"
    r"speak\w*|english|spanish|french|fluent|black|white|latina?|asian|african|american|british|"
    r"democrat|republican|liberal|conservative|salary|\$\d)",
    re.IGNORECASE,
)
MOJIBAKE = re.compile(r"[ÃÂÏÐÛ¢]|â€")


def eligible(text: object) -> bool:
    if not isinstance(text, str):
        return False
    text = text.strip()
    if not 30 <= len(text) <= 280 or MOJIBAKE.search(text):
        return False
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 20 and sum(c.isascii() for c in letters) / len(letters) >= 0.98


def draw(
    frame: pd.DataFrame,
    column: str,
    kind: str,
    cued: int,
    plain: int,
    is_cued: Callable[[int, str], bool] | None = None,
) -> list[dict]:
    """The first ``cued`` eligible texts of ``frame[column]`` with a cue (``is_cued(row, text)``, default: a
    word of `CUES`) and the first ``plain`` without, in the order of their text's SHA-256."""
    rows = [
        (hashlib.sha256(t.strip().encode()).hexdigest(), i, t.strip()) for i, t in frame[column].items() if eligible(t)
    ]
    seen: set[str] = set()
    out_cued, out_plain = [], []
    for _, row, text in sorted(rows):
        if text in seen:
            continue
        seen.add(text)
        hit = is_cued(row, text) if is_cued is not None else CUES.search(text) is not None
        target = out_cued if hit else out_plain
        if len(target) < (cued if target is out_cued else plain):
            target.append({"kind": kind, "row": int(row), "text": text})
    return out_cued + out_plain


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="../shared/data", type=Path)
    p.add_argument("--out", default="assets/gold/privacy-attributes", type=Path)
    p.add_argument("--cued", type=int, default=220, help="texts with a cue word, per kind")
    p.add_argument("--plain", type=int, default=100, help="texts without one, per kind")
    args = p.parse_args(argv)
    frame = pd.read_csv(args.data / SOURCE, encoding="latin-1", usecols=["description", "text"])
    posts = draw(frame, "description", "description", args.cued, args.plain)
    posts += draw(frame, "text", "tweet", args.cued, args.plain)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": f"p{k:04d}", **post}, ensure_ascii=False) for k, post in enumerate(posts)]
    (args.out / "posts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(posts)} posts written to {args.out / 'posts.jsonl'}")


if __name__ == "__main__":
    main()
