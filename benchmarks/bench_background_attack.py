"""The background attacker against the named-entity swap on the 306 earnings calls of 2021 Q3, with the 225
calls of 2021 Q1 as the background corpus (issue 50). Not part of the tests; skipped cleanly without the files.

    .venv/bin/python benchmarks/bench_background_attack.py [--json benchmarks/results_background_attack.json]
    .venv/bin/python benchmarks/bench_background_attack.py --embedding tfidf-svd --key roles
    .venv/bin/python benchmarks/bench_background_attack.py --docs   # rewrite docs/swap.md's tables from the JSON

Without ``--key`` the run (the swap's parameters as given, by default its defaults) is the JSON's top level; with
``--key roles`` it is one fit at the defaults with both role sets measured on its chunks, clusters and entities:
the paper's (organizations swapped, nothing exchanged along) and the defaults (person, location, product and
the company terms exchanged along, `engine.protect.swap.vocabulary`), written under ``roles`` with the other
keys of the JSON kept. Each role set's default-rate case also says what the intruder still reads in the swapped
chunks she names (`what_names`: the class of each one's top-weighted feature).

The intruder is the measure's own (`engine.measures.risk.background_attack.BackgroundIntruder`: word 1–2-gram
and character 3–5-gram TF-IDF, a linear SVM one company against the rest) trained on the Q1 calls labelled by
ticker. It attacks the swap's chunks of the Q3 calls whose company has a Q1 call:

- with the identifiers suppressed and nothing swapped (r = 0: the chunks as D_pre holds them),
- at the swap's default rate and at its top rate (the chunks as released),

on every attacked chunk and on the chunks each rate swaps (before: their r = 0 text; after: as released), and
at document level (each call's chunks pooled, the sum of their scores), with DU and DR at each rate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_swap import Q3, SHARED, q3_files  # noqa: E402

Q1 = SHARED / "ect_prepared_remarks_2021Q1.jsonl"


def share(correct: np.ndarray) -> dict:
    from engine.intervals import wilson

    n, k = int(correct.size), int(correct.sum())
    lo, hi = wilson(k, n)
    return {"n": n, "named": k, "accuracy": round(k / n, 4) if n else None, "lo": round(lo, 4), "hi": round(hi, 4)}


def run(out: Path, embedding: str = "minilm", key: str | None = None, calls: int | None = None) -> dict:
    from engine.data.background import read_background
    from engine.data.load import load_dataset
    from engine.measures.risk.background_attack import BackgroundIntruder
    from engine.protect import get_protector

    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench-background-"))  # the identifiers file stays beside the data
    dataset = load_dataset(str(q3_files(tmp, calls)))
    background = read_background(Q1)
    labels_bg = background.frame["ticker"].astype(str).to_numpy(dtype=object)
    intruder = BackgroundIntruder.train(background.texts(), labels_bg)
    protector = get_protector("swap", embedding=embedding)
    t = time.perf_counter()
    fitted = protector.fit(dataset)
    fit_seconds = time.perf_counter() - t
    if key is not None:
        fits = {"paper": paper_roles(fitted), "defaults": fitted}
        result = {
            "data": Q3.name,
            "embedding": embedding,
            "calls": int(dataset.n_records),
            "chunks": int(len(fitted.labels)),
            "fit_seconds": round(fit_seconds, 1),
            "sets": {name: measured_cases(dataset, f, intruder, analyse=True) for name, f in fits.items()},
            "total_seconds": round(time.perf_counter() - started, 1),
        }
        old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
        out.write_text(json.dumps({**old, key: result}, indent=2) + "\n", encoding="utf-8")
        return result
    cases = measured_cases(dataset, fitted, intruder)
    labels = np.asarray(fitted.labels, dtype=object)
    attacked = np.isin(labels, intruder.labels)
    result = {
        "data": Q3.name,
        "background": {"file": background.name, "rows": background.rows, "sha256": background.sha256},
        "calls": int(dataset.n_records),
        "chunks": int(len(labels)),
        "attacked_chunks": int(attacked.sum()),
        "companies_in_background": int(len(intruder.labels)),
        "chance": round(intruder.chance, 5),
        "cases": cases,
        "fit_seconds": round(fit_seconds, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def measured_cases(dataset, fitted, intruder, analyse: bool = False) -> dict:
    """The background intruder on ``fitted``'s releases at r = 0, the default and the top rate (module
    docstring), with DR and DU; with ``analyse``, at the default rate, `what_names` of the swapped chunks she
    names."""
    from engine.measures.base import ReleaseView
    from engine.measures.evaluate import Evaluator
    from engine.measures.swapped import released_chunks
    from engine.sweep import make_release

    labels = np.asarray(fitted.labels, dtype=object)  # each chunk's company
    documents = np.asarray(fitted.prepared.documents)
    attacked = np.isin(labels, intruder.labels)
    evaluator = Evaluator(dataset, ["swap_dr", "swap_du"], fitted=fitted)
    knob = fitted.knob
    rates = {"nothing swapped": 0.0, "default rate": float(knob.default), "top rate": float(knob.high)}

    def named(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        scores = intruder.scores(texts)
        return intruder.labels[np.argmax(scores, axis=1)] == labels, scores

    def pooled(scores: np.ndarray) -> np.ndarray:
        docs, codes = np.unique(documents, return_inverse=True)
        sums = np.zeros((len(docs), scores.shape[1]))
        np.add.at(sums, codes, scores)
        truth = np.array([labels[codes == i][0] for i in range(len(docs))], dtype=object)
        keep = np.isin(truth, intruder.labels)
        return (intruder.labels[np.argmax(sums, axis=1)] == truth)[keep]

    cases, before = {}, None
    for name, rate in rates.items():
        release = make_release(fitted, rate, seed=0)
        view = ReleaseView(dataset, release)
        texts = released_chunks(fitted, view)
        correct, scores = named(texts)
        swapped = np.zeros(len(labels), dtype=bool) if rate == 0 else np.asarray(fitted_swapped(release), dtype=bool)
        if before is None:
            before = correct
        measured = evaluator.evaluate(release)
        cases[name] = {
            "rate": rate,
            "all_attacked_chunks": share(correct[attacked]),
            "swapped_chunks_before": share(before[attacked & swapped]),
            "swapped_chunks_after": share(correct[attacked & swapped]),
            "documents_named_pooled": share(pooled(scores)),
            "swap_dr": round(measured["swap_dr"].value, 4),
            "swap_du": round(measured["swap_du"].value, 4),
        }
        if analyse and name == "default rate":
            still = np.flatnonzero(attacked & swapped & correct)
            cases[name]["what_names"] = what_names(
                intruder, [texts[k] for k in still], labels[still], fitted.prepared.chunks, labels
            )
        print(name, json.dumps(cases[name]), flush=True)
    return cases


def paper_roles(fitted):
    """``fitted`` with the paper's roles (organizations swapped, dates fixed, events must change; nothing
    exchanged along) on the same chunks, entities, embeddings and clusters: its valid pairs listed again."""
    import dataclasses

    from engine.protect.swap.method import data_knob
    from engine.protect.swap.swapping import check_roles, swap_entities, valid_pairs

    roles = {c: r for c, r in fitted.prepared.roles.items() if r != "A"}
    prepared = dataclasses.replace(fitted.prepared, roles=roles)
    values = prepared.entities.values
    swap, _, others = check_roles(values, roles)
    candidates = valid_pairs(values, prepared.documents, prepared.clusters, swap, others)
    full = swap_entities(
        values, prepared.documents, prepared.clusters, roles, 1.0, np.random.default_rng(0), candidates
    )
    limit = min(1.0, 2 * len(full.pairs) / max(len(values), 1))
    return dataclasses.replace(
        fitted, prepared=prepared, candidates=candidates, rate_limit=limit, knob=data_knob(limit), _pre_changes=None
    )


KINDS = ("person", "place", "product", "organization", "other entity", "figure", "company term", "shared phrasing")
"""What the top-weighted feature of a named chunk falls in (`what_names`)."""
PLACES = {"GPE", "LOC", "FAC", "NORP"}


def what_names(intruder, texts: list[str], truth: np.ndarray, chunks: list[str], labels: np.ndarray) -> dict:
    """For swapped chunks the intruder still names: the share whose top-weighted feature present (largest
    tf-idf × weight for the company she names) falls in a person's name, a place (GPE, LOC, FAC, NORP), a
    product, an organization or another spaCy entity, a figure (a word with a digit), a company term (a word one
    company's chunks hold at least half of, `vocabulary.company_terms` with no spans blocked) or else shared
    phrasing; and the ten most frequent top features of each class."""
    import re
    from collections import Counter

    from scipy import sparse

    from engine.protect.swap.vocabulary import company_terms
    from engine.text.entities import entity_spans

    if not texts:
        return {"chunks": 0}
    terms = company_terms(chunks, list(labels), [[] for _ in chunks])
    x = sparse.hstack([intruder.words.transform(texts), intruder.chars.transform(texts)]).tocsr()
    names = np.concatenate([intruder.words.get_feature_names_out(), intruder.chars.get_feature_names_out()])
    n_words = len(intruder.words.vocabulary_)
    row_of = {label: i for i, label in enumerate(intruder.labels)}
    kinds, examples = Counter(), {}
    for i, (text, spans) in enumerate(zip(texts, entity_spans(texts, len(texts)))):
        row = x.getrow(i)
        weights = row.data * intruder.coef[row_of[truth[i]], row.indices]
        top = int(row.indices[int(np.argmax(weights))])
        feature, low = str(names[top]).strip(), text.lower()
        found = (
            re.search(r"(?<!\w)" + r"\W+".join(map(re.escape, feature.split())) + r"(?!\w)", low)
            if top < n_words
            else re.search(re.escape(feature), low)
        )
        kind = "shared phrasing"
        if found is not None:
            s, e = found.span()
            label = next((lab for a, b, lab in spans if s < b and a < e), None)
            word = (
                re.search(r"[\w'&-]*$", low[:s]).group() + low[s:e] + re.match(r"[\w'&-]*", low[e:]).group()
            ).lower()
            if label == "PERSON":
                kind = "person"
            elif label in PLACES:
                kind = "place"
            elif label == "PRODUCT":
                kind = "product"
            elif label == "ORG":
                kind = "organization"
            elif label is not None:
                kind = "other entity"
            elif re.search(r"\d", word):
                kind = "figure"
            elif word in terms:
                kind = "company term"
        kinds[kind] += 1
        examples.setdefault(kind, Counter())[feature] += 1
    return {
        "chunks": len(texts),
        "top_feature": {k: round(kinds[k] / len(texts), 4) for k in KINDS},
        "examples": {k: [f for f, _ in examples[k].most_common(10)] for k in KINDS if k in examples},
    }


def fitted_swapped(release) -> list[bool]:
    from engine.protect.swap.method import SwapDetail

    detail = release.detail(SwapDetail)
    return [] if detail is None else list(detail.swapped)


BEGIN, END = "<!-- background-attack-table:begin -->", "<!-- background-attack-table:end -->"
PAGE = ROOT / "docs" / "swap.md"
"""The page holding the benchmark's table, between the markers."""
TARGET = 0.5
"""Issue 50's target: the swapped chunks named as released at most half as often as with nothing swapped (the
measure's `engine.measures.risk.background_attack.TARGET_RATIO`, which the dashboard and the bundle check)."""


def markdown(results: dict) -> str:
    """The table of docs/swap.md from a results JSON: per rate DR, DU, the attacked chunks named, the swapped
    chunks named before → after against the target, and the calls named with their chunks pooled."""

    def named(share: dict) -> str:
        return f"{share['accuracy']:.3f} ({share['named']:,} of {share['n']:,})"

    out = [
        f"The intruder trained on the {results['background']['rows']:,} calls of {results['background']['file']} "
        f"(one label per company, chance {results['chance']:.3g}) attacks the {results['attacked_chunks']:,} chunks "
        f"of the {results['calls']:,} calls of {results['data']} whose company the background holds "
        f'({results["chunks"]:,} chunks in all). "before" is a swapped chunk with the identifiers suppressed and '
        "nothing swapped; the target is at most half of it.",
        "",
        "| case | r | DR | DU | attacked chunks named | swapped chunks named, before → after | target | reached | "
        "calls named, chunks pooled |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for name, case in results["cases"].items():
        before, after = case["swapped_chunks_before"], case["swapped_chunks_after"]
        if before["n"]:
            swapped = f"{before['accuracy']:.3f} → {after['accuracy']:.3f} ({before['n']:,} chunks)"
            target = f"≤ {TARGET * before['accuracy']:.3f}"
            reached = "yes" if after["named"] <= TARGET * before["named"] else "**no**"
        else:
            swapped, target, reached = "—", "—", "—"
        out.append(
            f"| {name} | {case['rate']:g} | {case['swap_dr']:.3f} | {case['swap_du']:.3f} "
            f"| {named(case['all_attacked_chunks'])} | {swapped} | {target} | {reached} "
            f"| {named(case['documents_named_pooled'])} |"
        )
    out.append("")
    return "\n".join(out)


ROLES_BEGIN, ROLES_END = "<!-- background-roles-table:begin -->", "<!-- background-roles-table:end -->"
SETS = {
    "paper": "the paper's (organizations swapped)",
    "defaults": "the defaults (+ people, places, products, company terms exchanged along)",
}


def roles_markdown(results: dict) -> str:
    """The tables of the ``roles`` run: per role set and rate the intruder against the target, then what the
    top-weighted feature of each swapped chunk she still names falls in."""
    run = results["roles"]
    out = [
        f"One fit of the {run['calls']:,} calls ({run['chunks']:,} chunks, embedding {run['embedding']}), both role "
        "sets on its chunks, entities and clusters; the intruder and the attacked chunks as above.",
        "",
        "| roles | case | r | DR | DU | swapped chunks named, before → after | target | reached | calls named, "
        "chunks pooled |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for key, cases in run["sets"].items():
        for name, case in cases.items():
            if name == "nothing swapped" and key != "paper":
                continue
            before, after = case["swapped_chunks_before"], case["swapped_chunks_after"]
            if before["n"]:
                swapped = f"{before['accuracy']:.3f} → {after['accuracy']:.3f} ({before['n']:,} chunks)"
                target = f"≤ {TARGET * before['accuracy']:.3f}"
                reached = "yes" if after["named"] <= TARGET * before["named"] else "**no**"
            else:
                swapped, target, reached = "—", "—", "—"
            pooled = case["documents_named_pooled"]
            out.append(
                f"| {SETS[key] if name != 'nothing swapped' else 'either'} | {name} | {case['rate']:g} "
                f"| {case['swap_dr']:.3f} | {case['swap_du']:.3f} | {swapped} | {target} | {reached} "
                f"| {pooled['accuracy']:.3f} ({pooled['named']:,} of {pooled['n']:,}) |"
            )
    out += [
        "",
        "What still names a swapped chunk at the default rate: of the swapped chunks the intruder names, the share "
        "whose top-weighted feature (tf-idf × her weight for the company) lies in each kind of text.",
        "",
        "| roles | chunks named | " + " | ".join(KINDS) + " |",
        "|---|---:|" + "---:|" * len(KINDS),
    ]
    for key, cases in run["sets"].items():
        names = cases["default rate"].get("what_names", {"chunks": 0})
        if not names["chunks"]:
            continue
        shares = " | ".join(f"{names['top_feature'][k]:.2f}" for k in KINDS)
        out.append(f"| {SETS[key]} | {names['chunks']:,} | {shares} |")
    paper = run["sets"]["paper"]["default rate"].get("what_names", {})
    if paper.get("examples"):
        out += ["", "Their most frequent top features with the paper's roles, by kind:", ""]
        out += [f"- {kind}: {', '.join(f'“{f}”' for f in feats)}" for kind, feats in paper["examples"].items()]
    out.append("")
    return "\n".join(out)


def _between(page: str, begin: str, end: str, body: str) -> str:
    head, _, rest = page.partition(begin)
    _, _, tail = rest.partition(end)
    return f"{head}{begin}\n{body}{end}{tail}"


def with_table(page: str, results: dict) -> str:
    """``page`` with the table of ``results`` between its background-attack-table markers, and the role sets'
    tables between its background-roles-table markers when the results hold a ``roles`` run."""
    page = _between(page, BEGIN, END, markdown(results))
    if "roles" in results and ROLES_BEGIN in page:
        page = _between(page, ROLES_BEGIN, ROLES_END, roles_markdown(results))
    return page


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results_background_attack.json"))
    ap.add_argument("--docs", action="store_true", help="write the table of docs/swap.md from --json and stop")
    ap.add_argument("--embedding", default="minilm", choices=("minilm", "tfidf-svd"), help="the swap's embedding")
    ap.add_argument("--calls", type=int, help="the first CALLS calls only (a prototype; never committed)")
    ap.add_argument("--key", help="write the two role sets' run under this key of --json (module docstring)")
    args = ap.parse_args()
    if args.docs:
        results = json.loads(Path(args.json).read_text(encoding="utf-8"))
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), results), encoding="utf-8")
        return 0
    missing = [p for p in (Q3, Q1) if not p.is_file()]
    if missing:
        print(f"skipped: {', '.join(map(str, missing))} absent (not part of the repository)")
        return 0
    run(Path(args.json), args.embedding, args.key, args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
