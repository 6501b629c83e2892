"""The `kanon` method beside Abeywardana & Thayasivam: the tagger's quality on the gold set's held-out 30% (Table
5) and on the cross-source gold set it never trains on (issue 51), the models and feature sets compared, and, on
10,000 tweets and profile descriptions of ../shared/data (skipped without it), tagging throughput, the
k-anonymization's time and memory, and the sanitization counts, discernibility and loss per attribute at the
paper's k = 4 (Tables 7–9). Not part of the tests.

    .venv/bin/python benchmarks/bench_kanon.py [--json benchmarks/results_kanon.json] [--only cross_source]

``--only cross_source`` measures that section alone and writes it into the ``--json`` file beside the others.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "tweets" / "twitter_user_gender_classification.csv"
PAPER_TABLE5 = {  # precision, recall, F1 (the paper reports no QILANG row)
    "DI": (0.83, 0.70, 0.76),
    "QIAGE": (0.69, 0.77, 0.73),
    "QIGENDER": (0.57, 0.65, 0.61),
    "QIRACE": (0.74, 0.49, 0.60),
    "QIREGION": (0.78, 0.82, 0.80),
    "QIJOB": (0.59, 0.70, 0.64),
    "SA": (0.73, 0.81, 0.77),
    "NONE": (0.98, 0.98, 0.98),
    "macro": (None, None, 0.74),
}
TABLE4 = (
    "is_first is_last is_capitalized is_all_caps is_all_lower prefix-1 prefix-2 prefix-3 suffix-1 suffix-2 "
    "suffix-3 prev_word next_word has_hyphen is_numeric pos_tag named_entity"
).split()


def compared() -> list[dict]:
    """Macro F1 on the held-out split: the paper's decision tree and the CRF, on Table 4's features and with
    the stated additions (the token itself, its hashtag/handle sign, the word lists of `gazetteers`)."""
    import pycrfsuite
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.metrics import f1_score
    from sklearn.tree import DecisionTreeClassifier

    from engine.protect.kanon.features import posts_features
    from engine.protect.kanon.gold import LABELS, NONE, token_labels
    from engine.protect.kanon.tagger import C1, C2, ITERATIONS, _crf_items, gold_texts, split

    ids, texts, spans = gold_texts()
    at = {i: k for k, i in enumerate(ids)}
    train, test = ([at[i] for i in part] for part in split(ids))
    features = [f for _, f in posts_features(texts)]
    labels = [token_labels(t, s) for t, s in zip(texts, spans)]
    order = [*LABELS, NONE]
    out = []
    for name, keys in (("Table 4", set(TABLE4)), ("Table 4 + token, hashtag or handle sign, word lists", None)):
        pick = [[{k: v for k, v in f.items() if keys is None or k in keys} for f in post] for post in features]
        gold = [y for i in test for y in labels[i]]
        vec = DictVectorizer()
        tree = DecisionTreeClassifier(random_state=0).fit(
            vec.fit_transform([f for i in train for f in pick[i]]), [y for i in train for y in labels[i]]
        )
        predicted = tree.predict(vec.transform([f for i in test for f in pick[i]]))
        out.append(
            {
                "features": name,
                "model": "decision tree (paper)",
                "macro_f1": f1_score(gold, predicted, labels=order, average="macro", zero_division=0),
            }
        )
        trainer = pycrfsuite.Trainer(verbose=False)
        for i in train:
            trainer.append(pycrfsuite.ItemSequence(_crf_items(pick[i])), labels[i])
        trainer.set_params({"c1": C1, "c2": C2, "max_iterations": ITERATIONS, "feature.possible_transitions": True})
        model = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-tagger-{os.getpid()}.crf"
        trainer.train(str(model))
        tagger = pycrfsuite.Tagger()
        tagger.open(str(model))
        predicted = [y for i in test for y in tagger.tag(pycrfsuite.ItemSequence(_crf_items(pick[i])))]
        tagger.close()
        model.unlink()
        out.append(
            {
                "features": name,
                "model": "CRF",
                "macro_f1": f1_score(gold, predicted, labels=order, average="macro", zero_division=0),
            }
        )
    for row in out:
        row["macro_f1"] = round(float(row["macro_f1"]), 3)
    return out


def _rounded(table) -> list[dict]:
    return [
        {k: (round(v, 3) if isinstance(v, float) else v) for k, v in rec.items()} for rec in table.to_dict("records")
    ]


def cross_source() -> dict:
    """The tagger on the cross-source gold set (``assets/gold/privacy-attributes-cross``: WNUT-17 posts and airline
    tweets, never trained on), scored as Table 5 is (`quality_table`: token-level precision, recall and F1 per
    label, macro over the labels with support, NONE included), per source and together. Two taggers: the one a
    release uses (trained on all of its own gold set) and the one Table 5 scores (trained on its 70% split; its
    held-out macro F1 is measured again here as a check that it is that tagger)."""
    from engine.protect.kanon.gold import gold_set
    from engine.protect.kanon.tagger import (
        PrivacyTagger,
        default_tagger,
        gold_texts,
        held_out_quality,
        scores,
        split,
        training_items,
    )

    own_ids, own_texts, own_spans = gold_texts()
    own_items = training_items(own_texts, own_spans)
    at = {i: k for k, i in enumerate(own_ids)}
    train, test = split(own_ids)
    split_tagger = PrivacyTagger.train_on([own_items[at[i]] for i in train])
    in_split = held_out_quality().set_index("label").loc["macro", "f1"]
    again = scores(split_tagger, [own_items[at[i]] for i in test]).set_index("label").loc["macro", "f1"]
    if round(float(again), 6) != round(float(in_split), 6):
        raise SystemExit(f"the 70% tagger trained here scores {again:.4f} on its held-out posts, not {in_split:.4f}")

    cross = gold_set("cross-source")
    ids = list(cross.posts)
    items = dict(zip(ids, training_items([cross.posts[i].text for i in ids], [cross.first[i] for i in ids])))
    sources = {kind: [i for i in ids if cross.posts[i].kind == kind] for kind in ("wnut17", "airline-tweet")}
    sources["all"] = ids
    out: dict = {
        "gold": "assets/gold/privacy-attributes-cross",
        "in_split_macro_f1": round(float(in_split), 3),
        "taggers": {},
    }
    for name, tagger in (
        ("trained on all 640 own posts (a release's)", default_tagger()),
        ("trained on the 70% split (Table 5's)", split_tagger),
    ):
        per_source = {}
        for source, members in sources.items():
            table = scores(tagger, [items[i] for i in members])
            per_source[source] = {
                "posts": len(members),
                "macro_f1": round(float(table.set_index("label").loc["macro", "f1"]), 3),
                "table": _rounded(table),
            }
        out["taggers"][name] = per_source
    return out


def posts_sample(n: int = 10_000) -> list[str]:
    """The first ``n`` non-empty tweets and profile descriptions of the gender data, in file order."""
    import pandas as pd

    frame = pd.read_csv(SHARED, encoding="latin-1", usecols=["text", "description"])
    return [t for col in ("text", "description") for t in frame[col].dropna().astype(str)][:n]


def on_posts(n: int = 10_000, k: int = 4) -> dict | None:
    """Tagging throughput, the k-anonymization of ``n`` posts at ``k`` (time, peak memory) and Tables 7–9."""
    if not SHARED.is_file():
        return None
    import numpy as np
    import pandas as pd

    from engine.data.dataset import Dataset
    from engine.data.schema import Schema
    from engine.protect import get_protector
    from engine.protect.kanon.lattice import ANY, loss_metric
    from engine.protect.kanon.method import KanonDetail
    from engine.protect.kanon.tagger import default_tagger
    from engine.sweep import make_release

    posts = posts_sample(n)
    tagger = default_tagger()
    t = time.perf_counter()
    tagged = tagger.tag(posts)
    tag_seconds = time.perf_counter() - t
    dataset = Dataset("gender-posts", pd.DataFrame({"text": posts}), Schema(text="text"), source="bench")
    t = time.perf_counter()
    fitted = get_protector("kanon").fit(dataset)
    fit_seconds = time.perf_counter() - t
    t = time.perf_counter()
    release = make_release(fitted, k, seed=0)
    release_seconds = time.perf_counter() - t
    detail = release.detail(KanonDetail)
    terms = sum(len(s) for s in fitted.spans)
    words = sum(len(p.split()) for p in posts)
    per_attribute = []
    for column in detail.original.columns:
        stated = np.array([len(c) > 0 for c in detail.original[column]])
        released = detail.released[column]
        # DM among the records that state the attribute, grouped by its released value alone
        among = released[stated].tolist()
        keys = pd.factorize(pd.Series([tuple(c) for c in among]))[0]
        sizes = np.bincount(keys)[keys] if len(among) else np.zeros(0, int)
        gone = detail.suppressed[stated]
        dm = float(sizes[~gone].sum() + gone.sum() * len(among))
        lm = loss_metric(
            detail.original[[column]][stated], detail.released[[column]][stated], detail.suppressed[stated]
        )
        values = pd.Series([v for c in released[stated & ~detail.suppressed] for v in c]).value_counts()
        per_attribute.append(
            {
                "attribute": column,
                "operation": fitted.scheme[column],
                "level": detail.levels.get(column),
                "records_stating": int(stated.sum()),
                "dm": dm,
                "lm_stating": round(lm, 3) if stated.any() else None,
                "to_any": int(sum(c == (ANY,) for c in released)),
                "top_released_values": values.head(5).index.tolist(),
            }
        )
    changed = release.changes[release.changes["original"] != release.changes["replacement"]]  # not the kept spans
    return {
        "posts": len(posts),
        "tag_seconds": round(tag_seconds, 1),
        "posts_per_second": round(len(posts) / tag_seconds, 1),
        "spans_found": sum(len(s) for s in tagged),
        "fit_seconds": round(fit_seconds, 1),
        "release_seconds_k4": round(release_seconds, 2),
        "k": k,
        "levels": detail.levels,
        "over_limit": bool(detail.over_limit),
        "suppressed_records": int(detail.suppressed.sum()),
        "terms_tagged": terms,
        "terms_sanitized": int(len(changed)),
        "words": words,
        "share_of_words_sanitized": round(len(changed) / words, 4),
        "loss_metric": round(float(detail.loss), 4),
        "per_attribute": per_attribute,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here")
    p.add_argument("--only", choices=["cross_source"], help="measure this section alone, into the --json file")
    args = p.parse_args()
    if args.only:
        path = Path(args.json) if args.json else None
        doc = json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else {}
        doc[args.only] = cross_source()
        print(json.dumps(doc[args.only], indent=2))
        if path:
            path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return
    from engine.protect.kanon.tagger import held_out_quality

    t = time.perf_counter()
    table = held_out_quality()
    train_seconds = time.perf_counter() - t
    rows = []
    for rec in table.to_dict("records"):
        paper = PAPER_TABLE5.get(rec["label"], (None, None, None))
        rows.append(
            {
                **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in rec.items()},
                "paper_precision": paper[0],
                "paper_recall": paper[1],
                "paper_f1": paper[2],
            }
        )
    doc = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "held_out_table5": rows,
        "train_and_score_seconds": round(train_seconds, 1),
        "cross_source": cross_source(),
        "compared": compared(),
        "posts_10000": on_posts(),
    }
    print(json.dumps(doc, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
