"""Gather the annotation passes of the privacy-attribute gold set into its files, with character offsets, and
report the agreement of the second pass with the first (``engine.protect.kanon.gold``).

    .venv/bin/python scripts/gold_set.py --first F1.jsonl F2.jsonl … --second S1.jsonl … [--out assets/gold/privacy-attributes]

Each input line is {"id": …, "spans": [[exact text, label], …]} as GUIDELINES.md says; the outputs are
``annotations.jsonl`` (every post once), ``second_pass.jsonl`` and ``agreement.json`` (Cohen's κ over tokens).
A span that cuts a word or is out of order (`span_problems`) stops it. The same for the cross-source set with
``--out assets/gold/privacy-attributes-cross``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.protect.kanon.gold import GOLD_DIR, agreement, read_posts, resolve, span_problems  # noqa: E402


def gather(paths: list[Path], posts: dict) -> dict[str, list[list]]:
    out: dict[str, list[list]] = {}
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row["id"] in out:
                raise SystemExit(f"{path}:{n}: post {row['id']} annotated twice in one pass")
            text = posts[row["id"]].text
            spans = resolve(text, row["spans"], f"{path}:{n}")
            out[row["id"]] = [[s, e, label, text[s:e]] for s, e, label in spans]
            problems = span_problems(text, out[row["id"]])
            if problems:
                raise SystemExit(f"{path}:{n}: post {row['id']}: " + "; ".join(problems))
    return out


def write(path: Path, rows: dict[str, list[list]], order: list[str]) -> None:
    lines = [json.dumps({"id": i, "spans": rows[i]}, ensure_ascii=False) for i in order if i in rows]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--first", nargs="+", type=Path, required=True)
    p.add_argument("--second", nargs="+", type=Path, required=True)
    p.add_argument("--out", type=Path, default=GOLD_DIR)
    args = p.parse_args()
    posts = read_posts(args.out)
    order = list(posts)
    first, second = gather(args.first, posts), gather(args.second, posts)
    missing = [i for i in order if i not in first]
    if missing:
        raise SystemExit(f"the first pass lacks {len(missing)} posts: {missing[:10]}")
    write(args.out / "annotations.jsonl", first, order)
    write(args.out / "second_pass.jsonl", second, order)
    as_spans = {k: [(s, e, lab) for s, e, lab, _ in v] for k, v in first.items()}
    second_spans = {k: [(s, e, lab) for s, e, lab, _ in v] for k, v in second.items()}
    kappa = agreement(posts, as_spans, second_spans)
    counts = Counter(label for spans in first.values() for _, _, label, _ in spans)
    report = {
        "posts": len(first),
        "second_pass_posts": len(second),
        "spans_per_label": dict(sorted(counts.items())),
        "token_kappa": {k: round(v, 3) for k, v in kappa.items()},
    }
    (args.out / "agreement.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
