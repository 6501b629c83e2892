"""`textsdc annotate`: a steward's annotations without the dashboard (issue 51), the same engine as the Protect
page's panel (`engine.annotation`).

- ``sample``: a stratified sample of the records with the detector's spans filled in, as span JSON to correct;
- ``import FILE``: span JSON or CoNLL read against the data (each record's number and text, the detector's
  labels) and kept, as reviewed, in the cache folder with the dataset's other annotations;
- ``score``: the detector's recall and precision per type on the kept records, with Wilson intervals, and for
  redaction each type's precision–recall points as its confidence threshold moves;
- ``export``: the kept records as span JSON or CoNLL.

The annotations stay on this machine (the cache folder), never in a bundle.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from engine.annotation.detectors import Detector, detector
from engine.annotation.formats import FORMATS, read_annotations, to_conll, to_span_json
from engine.annotation.residual import annotation_records, detector_at, found_in, measured
from engine.annotation.sample import SAMPLE_STEP, draw_sample
from engine.annotation.scores import ALL, DetectionScores
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.annotation.store import annotations_path, import_records, load_annotations, save_annotations
from engine.annotation.thresholds import type_curves
from engine.atomic import atomic_write_text
from engine.cli.args import add_parameter_flags, add_reading_arguments, knob_argument, load, protector_of
from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError


def _detector(args: argparse.Namespace, dataset: Dataset) -> Detector:
    return detector(protector_of(args, dataset), args.detector)


def _kept(args: argparse.Namespace, dataset: Dataset, det: Detector) -> Annotations:
    annotations = load_annotations(dataset.fingerprint, det.name)
    if annotations is None or not annotations.done:
        raise ConfigError(
            f"no annotated record of {dataset.name} is kept for {det.title}; annotate some first "
            f"(`textsdc annotate sample`, then `textsdc annotate import FILE`, or the Protect page's panel)"
        )
    return annotations


def cmd_sample(args: argparse.Namespace) -> int:
    dataset = load(args)
    det = _detector(args, dataset)
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise ConfigError(f"{out} exists; give --overwrite to replace it, or another --out")
    sample = tuple(draw_sample(dataset, args.n, args.seed))
    kept = load_annotations(dataset.fingerprint, det.name)
    annotations = Annotations(dataset.fingerprint, det.name, sample, {} if kept is None else dict(kept.done))
    found = found_in(det, dataset, annotation_records(annotations)).at(None)
    texts = dataset.texts.fillna("").astype(str)
    prefilled = [annotations.done.get(r) or RecordAnnotation(r, str(texts.iloc[r]), tuple(found[r])) for r in sample]
    save_annotations(annotations)  # the sample drawn, with what was reviewed before
    atomic_write_text(out, to_span_json(prefilled) if args.format == "json" else to_conll(prefilled))
    reviewed = sum(r in annotations.done for r in sample)
    print(
        f"{len(sample):,} records of {dataset.name} written to {out} with what {det.title} finds filled in "
        f"({reviewed:,} of them annotated before, as annotated); correct the spans (labels: {', '.join(det.labels)}) "
        f"and import the file with `textsdc annotate import {out} --data {args.data} --method {args.method}`"
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    dataset = load(args)
    det = _detector(args, dataset)
    path = Path(args.file)
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path} is not UTF-8 text; save it as UTF-8") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    texts = dict(enumerate(dataset.texts.fillna("").astype(str).tolist()))
    records = read_annotations(content, path.name, texts, det.labels)
    annotations = import_records(dataset.fingerprint, det.name, records)
    spans = sum(len(r.spans) for r in records)
    print(
        f"imported {len(records):,} annotated records ({spans:,} spans) for {det.title}; "
        f"{len(annotations.done):,} kept for {dataset.name} in {annotations_path(dataset.fingerprint, det.name)}"
    )
    return 0


def _share_row(label: str, scores: DetectionScores) -> str:
    token, span = scores.get(label, "token"), scores.get(label, "span")
    assert token is not None and span is not None
    name = "all types" if label == ALL else label
    return (
        f"{name:<16} {token.recall.total:>7,} {token.recall.text():>15} {token.precision.text():>15} "
        f"{span.recall.text():>15}"
    )


def cmd_score(args: argparse.Namespace) -> int:
    dataset = load(args)
    protector = protector_of(args, dataset)
    det = detector(protector, args.detector)
    knob = protector.knob.default if args.knob is None else args.knob
    protector.knob.validate(knob)
    annotations = _kept(args, dataset, det)
    scores = measured(det, annotations, dataset, knob)
    print(
        f"{detector_at(det, knob)} on {scores.records:,} annotated records of {dataset.name} "
        "(token level; brackets: Wilson 95% intervals)"
    )
    print(f"{'type':<16} {'marked':>7} {'recall':>15} {'precision':>15} {'whole spans':>15}")
    for label in scores.labels:
        print(_share_row(label, scores))
    if args.curves:
        print("\nprecision and recall per type as its threshold moves (* the threshold in use):")
        for curve in type_curves(det, dataset, annotations, knob):
            print(f"{curve.label}: {curve.why}")
            for p in curve.points:
                mark = "*" if curve.current is not None and curve.at(curve.current) == p else " "
                at = f"threshold {p.threshold:g}" if curve.current is not None else "at its settings"
                print(f"  {mark} {at:<16} recall {p.recall.text():>15}  precision {p.precision.text():>15}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    dataset = load(args)
    det = _detector(args, dataset)
    reviewed = _kept(args, dataset, det).reviewed()
    text = to_span_json(reviewed) if args.format == "json" else to_conll(reviewed)
    if args.out is None:
        print(text, end="")
        return 0
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise ConfigError(f"{out} exists; give --overwrite to replace it, or another --out")
    atomic_write_text(out, text)
    print(f"{len(reviewed):,} annotated records written to {out} ({FORMATS[args.format]})")
    return 0


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--data", required=True, help="a demo name (see `textsdc datasets`) or a CSV/Parquet/JSONL file")
    sp.add_argument("--schema", help="a schema TOML file (default: the demo's, or inferred)")
    add_reading_arguments(sp)
    sp.add_argument("--method", default="redact", help="the method whose detector is annotated for (default redact)")
    sp.add_argument(
        "--detector",
        help="the detector: the method's own (default) or guard, the release guard that runs after every method",
    )
    add_parameter_flags(sp, settings=False)


def add_parsers(sub: Any) -> None:
    """The `textsdc annotate` commands on the `textsdc` parser."""
    a = sub.add_parser("annotate", help="annotate a sample of the records for a method's detector and score it")
    cmds = a.add_subparsers(dest="annotate", required=True)

    s = cmds.add_parser("sample", help="draw a stratified sample with the detector's spans filled in, to correct")
    _common(s)
    s.add_argument("--n", type=int, default=SAMPLE_STEP, help=f"records in the sample (default {SAMPLE_STEP})")
    s.add_argument("--seed", type=int, default=0, help="random seed of the sample (default 0)")
    s.add_argument("--format", choices=tuple(FORMATS), default="json", help="span JSON (default) or CoNLL BIO")
    s.add_argument("--out", required=True, help="file to write the sample into")
    s.add_argument("--overwrite", action="store_true", help="replace the --out file if it exists")
    s.set_defaults(func=cmd_sample)

    i = cmds.add_parser("import", help="keep the annotations of a span JSON or CoNLL file (checked against the data)")
    i.add_argument("file", help="span JSON (.json/.jsonl) or CoNLL BIO, as `annotate sample` or the dashboard writes")
    _common(i)
    i.set_defaults(func=cmd_import)

    c = cmds.add_parser("score", help="the detector's recall and precision per type on the annotated records")
    _common(c)
    c.add_argument("--knob", type=knob_argument, help="knob value to score at (default: the method's default)")
    c.add_argument(
        "--curves",
        action="store_true",
        help="also each type's precision and recall at each confidence threshold (redaction's scored types)",
    )
    c.set_defaults(func=cmd_score)

    e = cmds.add_parser("export", help="write the annotated records as span JSON or CoNLL")
    _common(e)
    e.add_argument("--format", choices=tuple(FORMATS), default="json", help="span JSON (default) or CoNLL BIO")
    e.add_argument("--out", help="file to write (default: print)")
    e.add_argument("--overwrite", action="store_true", help="replace the --out file if it exists")
    e.set_defaults(func=cmd_export)
