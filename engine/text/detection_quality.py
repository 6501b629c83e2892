"""How well redaction finds identifiers, measured on a gold-annotated file.

Gold files come in two formats: CoNLL BIO (one ``token<TAB>tag`` per line, a blank line between sentences; the
text is the tokens joined by single spaces) and span JSON (a JSON list, or one JSON object per line, each with a
``text`` and its ``spans`` as ``[start, end, label]`` or ``{"start", "end", "label"}``; the TAB corpus'
``annotations`` as ``[[start, end], label]`` are read too).

Scoring follows what redaction is for, hiding a token, not naming its type:
- **token level, type-agnostic**: a gold token is found when a replaced span covers any of it; a replaced token
  is correct when it lies in any gold span. Tokens are the CoNLL tokens, or for span JSON runs of word
  characters and single other characters.
- **per type**: recall of a gold type counts its tokens found under any label; precision of a type counts the
  tokens replaced under the labels of that type (`TYPE_OF`), correct when in any gold span.
- **span level**: a gold span is found when every one of its tokens is; a replaced span is correct when it
  overlaps a gold span.
F2 weighs recall twice as much as precision (a missed identifier costs more than a needless placeholder).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from engine.errors import ConfigError, DataError
from engine.progress import Progress, no_progress

Span = tuple[int, int, str]

# Gold labels of common corpora and our own labels, by the type they are scored as: an alias of one of our
# labels (a gold's CARD, IP or SSN) is folded into it, so that each type is listed once.
TYPE_OF: dict[str, str] = {
    **{k: "PERSON" for k in ("PERSON", "PER", "NAME", "person")},
    **{k: "LOCATION" for k in ("LOCATION", "LOC", "GPE", "FAC", "location", "geo-loc", "CITY", "COUNTRY")},
    **{k: "ORGANIZATION" for k in ("ORGANIZATION", "ORG", "corporation", "COMPANY", "group")},
    **{k: "NORP" for k in ("NORP", "NRP")},
    **{k: "PRODUCT" for k in ("PRODUCT", "product")},
    **{k: "CREATIVE_WORK" for k in ("creative-work", "WORK_OF_ART")},
    **{k: "DATE" for k in ("DATE", "TIME", "DATE_TIME")},
    **{k: "PHONE" for k in ("PHONE", "PHONE_NUMBER")},
    **{k: "EMAIL" for k in ("EMAIL", "EMAIL_ADDRESS")},
    "IBAN_CODE": "IBAN",
    **{k: "CREDIT_CARD" for k in ("CREDIT_CARD", "CARD", "CARD_NUMBER", "CREDIT_CARD_NUMBER", "CCN")},
    **{k: "IP_ADDRESS" for k in ("IP_ADDRESS", "IP", "IPADDRESS", "IP_ADDR")},
    **{k: "US_SSN" for k in ("US_SSN", "SSN", "SOCIAL_SECURITY_NUMBER")},
    **{k: "URL" for k in ("URL", "URI", "url")},
    **{k: "STREET_ADDRESS" for k in ("STREET_ADDRESS", "ADDRESS", "STREET")},
}


def type_of(label: str) -> str:
    """The type ``label`` is scored as: `TYPE_OF`'s, else the label itself in capitals."""
    return TYPE_OF.get(label, label.upper().replace("-", "_"))


@dataclass(frozen=True)
class GoldDocument:
    text: str
    spans: tuple[Span, ...]
    tokens: tuple[tuple[int, int], ...]


_TOKEN = re.compile(r"\w+|[^\w\s]")


def word_tokens(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((m.start(), m.end()) for m in _TOKEN.finditer(text))


def read_gold(path: str | Path) -> list[GoldDocument]:
    """The documents of a gold file: span JSON for ``.json``/``.jsonl``, CoNLL BIO otherwise; DataError naming
    the line and what is accepted on anything malformed."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"gold file {path} does not exist")
    try:
        content = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"gold file {path.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if path.suffix.lower() in (".json", ".jsonl"):
        docs = _span_json(content, path.name)
    else:
        docs = _conll(content, path.name)
    if not docs:
        raise DataError(f"gold file {path.name} holds no document; {ACCEPTED}")
    return docs


ACCEPTED = (
    "accepted: CoNLL BIO (token<TAB>tag lines, a blank line between sentences) or span JSON "
    '(.json/.jsonl: {"text": ..., "spans": [[start, end, label], ...]})'
)


def _conll(content: str, name: str) -> list[GoldDocument]:
    docs: list[GoldDocument] = []
    words: list[str] = []
    tags: list[str] = []

    def close() -> None:
        if not words:
            return
        starts, pos = [], 0
        for w in words:
            starts.append(pos)
            pos += len(w) + 1
        tokens = tuple((s, s + len(w)) for s, w in zip(starts, words))
        spans: list[Span] = []
        for i, tag in enumerate(tags):
            if tag == "O":
                continue
            kind, label = tag[0], tag[2:]
            if kind == "B" or not spans or spans[-1][1] != tokens[i - 1][1] or spans[-1][2] != label:
                spans.append((tokens[i][0], tokens[i][1], label))
            else:
                spans[-1] = (spans[-1][0], tokens[i][1], label)
        docs.append(GoldDocument(" ".join(words), tuple(spans), tokens))
        words.clear()
        tags.clear()

    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            close()
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        tag = parts[-1].strip() if len(parts) >= 2 else ""
        if not parts[0].strip() or not (tag == "O" or re.fullmatch(r"[BI]-\S+", tag)):
            raise DataError(f"{name} line {number}: {line.strip()[:60]!r} is not a token and a BIO tag; {ACCEPTED}")
        words.append(parts[0].strip())
        tags.append(tag)
    close()
    return docs


def _span_json(content: str, name: str) -> list[GoldDocument]:
    stripped = content.strip()
    try:
        if stripped.startswith("["):
            records = [(i + 1, r) for i, r in enumerate(json.loads(stripped))]
        else:
            records = [(n, json.loads(line)) for n, line in enumerate(content.splitlines(), 1) if line.strip()]
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: not valid JSON (line {exc.lineno}: {exc.msg}); {ACCEPTED}") from None
    docs = []
    for number, record in records:
        where = f"{name} record {number}"
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise DataError(f"{where} has no 'text'; {ACCEPTED}")
        text = record["text"]
        raw = record.get("spans", record.get("annotations")) or []
        if not isinstance(raw, list):
            raise DataError(f"{where}: 'spans' is not a list; {ACCEPTED}")
        spans = [_one_span(s, where) for s in raw]
        for s, e, label in spans:
            if not 0 <= s < e <= len(text):
                raise DataError(f"{where}: span [{s}, {e}, {label}] lies outside its text of {len(text)} characters")
        docs.append(GoldDocument(text, tuple(sorted(spans)), word_tokens(text)))
    return docs


def _one_span(raw: Any, where: str) -> Span:
    try:
        if isinstance(raw, dict):
            return int(raw["start"]), int(raw["end"]), str(raw["label"])
        if isinstance(raw[0], (list, tuple)):  # TAB style: [[start, end], label]
            return int(raw[0][0]), int(raw[0][1]), str(raw[1])
        return int(raw[0]), int(raw[1]), str(raw[2])
    except (KeyError, IndexError, TypeError, ValueError):
        raise DataError(f"{where}: span {raw!r} is not [start, end, label]; {ACCEPTED}") from None


@dataclass
class DetectionQuality:
    """The scores of one detector on one gold set; `table` has one row per type and one for all."""

    table: pd.DataFrame
    missed: list[tuple[str, int]] = field(default_factory=list)
    false: list[tuple[str, int]] = field(default_factory=list)
    documents: int = 0
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "settings": self.settings,
            "scores": self.table.astype(object).where(self.table.notna(), None).to_dict(orient="records"),
            "most_missed_tokens": [{"token": t, "count": c} for t, c in self.missed],
            "most_false_tokens": [{"token": t, "count": c} for t, c in self.false],
        }


def _f2(p: float, r: float) -> float:
    return 5 * p * r / (4 * p + r) if p + r > 0 else 0.0


def _ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


def covering(token: tuple[int, int], among: Sequence[Span]) -> Span | None:
    """The first span of ``among`` that covers any character of ``token``."""
    return next((s for s in among if s[0] < token[1] and token[0] < s[1]), None)


def score_detection(
    docs: Sequence[GoldDocument], found: Sequence[Sequence[Span]], top: int = 10, settings: Mapping | None = None
) -> DetectionQuality:
    """Token- and span-level precision, recall and F2, overall and per type, of the spans ``found`` in each
    gold document (see the module's docstring for the definitions)."""
    if len(docs) != len(found):
        raise ValueError("one list of found spans per gold document")
    gold_tok: Counter[str] = Counter()
    gold_hit: Counter[str] = Counter()
    pred_tok: Counter[str] = Counter()
    pred_ok: Counter[str] = Counter()
    gold_spans: Counter[str] = Counter()
    gold_spans_hit: Counter[str] = Counter()
    pred_spans: Counter[str] = Counter()
    pred_spans_ok: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    false: Counter[str] = Counter()
    for doc, spans in zip(docs, found):
        masked = {tok for tok in doc.tokens if covering(tok, spans)}
        in_gold = {tok for tok in doc.tokens if covering(tok, doc.spans)}
        for tok in doc.tokens:
            g, p = covering(tok, doc.spans), covering(tok, spans)
            word = doc.text[tok[0] : tok[1]]
            for kind in ("ALL", type_of(g[2])) if g else ():
                gold_tok[kind] += 1
                gold_hit[kind] += p is not None
            for kind in ("ALL", type_of(p[2])) if p else ():
                pred_tok[kind] += 1
                pred_ok[kind] += g is not None
            if g and not p:
                missed[word] += 1
            if p and not g:
                false[word] += 1
        for s, e, label in doc.spans:
            toks = [t for t in doc.tokens if t[0] < e and s < t[1]]
            for kind in ("ALL", type_of(label)):
                gold_spans[kind] += 1
                gold_spans_hit[kind] += bool(toks) and all(t in masked for t in toks)
        for s, e, label in spans:
            ok = any(t in in_gold for t in doc.tokens if t[0] < e and s < t[1])
            for kind in ("ALL", type_of(label)):
                pred_spans[kind] += 1
                pred_spans_ok[kind] += ok
    rows = []
    kinds = ["ALL", *sorted((set(gold_tok) | set(pred_tok)) - {"ALL"})]
    for kind in kinds:
        prec, rec = _ratio(pred_ok[kind], pred_tok[kind]), _ratio(gold_hit[kind], gold_tok[kind])
        sp, sr = _ratio(pred_spans_ok[kind], pred_spans[kind]), _ratio(gold_spans_hit[kind], gold_spans[kind])
        rows.append(
            {
                "type": kind,
                "gold_tokens": gold_tok[kind],
                "found_tokens": pred_tok[kind],
                "token_precision": prec,
                "token_recall": rec,
                "token_f2": _f2(prec, rec) if prec == prec and rec == rec else float("nan"),
                "gold_spans": gold_spans[kind],
                "found_spans": pred_spans[kind],
                "span_precision": sp,
                "span_recall": sr,
                "span_f2": _f2(sp, sr) if sp == sp and sr == sr else float("nan"),
            }
        )
    return DetectionQuality(
        table=pd.DataFrame(rows),
        missed=missed.most_common(top),
        false=false.most_common(top),
        documents=len(docs),
        settings=dict(settings or {}),
    )


def found_spans(
    texts: Sequence[str],
    thresholds: Mapping[str, float] | None = None,
    use_ner: bool = True,
    progress: Progress = no_progress,
) -> pd.DataFrame:
    """Every span redaction replaces at some level in ``texts`` (found, then made consistent across the texts
    as a release would), one row per span with its record, start, end, label and tier."""
    from engine.text.entities import find_identifiers
    from engine.text.recurrence import propagate

    return propagate(list(texts), find_identifiers(list(texts), progress, use_ner, thresholds))


def spans_at(spans: pd.DataFrame, n: int, level: int) -> list[list[Span]]:
    """Per text, the (start, end, label) of the `found_spans` replaced at ``level``."""
    from engine.text.recurrence import outermost

    out: list[list[Span]] = [[] for _ in range(n)]
    kept = outermost(spans[spans["tier"] <= level])  # as `release` applies them
    for record, start, end, label in zip(kept["record"], kept["start"], kept["end"], kept["label"]):
        out[int(record)].append((int(start), int(end), str(label)))
    return out


def redaction_spans(
    texts: Sequence[str],
    level: int = 4,
    thresholds: Mapping[str, float] | None = None,
    use_ner: bool = True,
    progress: Progress = no_progress,
) -> list[list[Span]]:
    """What redaction at ``level`` replaces in each text, as (start, end, label)."""
    return spans_at(found_spans(texts, thresholds, use_ner, progress), len(texts), level)


def evaluate_detection(
    docs: Sequence[GoldDocument],
    levels: Sequence[int] = (4,),
    thresholds: Mapping[str, float] | None = None,
    use_ner: bool = True,
    progress: Progress = no_progress,
) -> dict[int, DetectionQuality]:
    """Redaction's detection quality on the gold documents ``docs`` at each of ``levels`` (found once)."""
    for level in levels:
        if not 0 <= level <= 4:
            raise ConfigError(f"redaction level {level} is not accepted; accepted: 0 to 4")
    spans = found_spans([d.text for d in docs], thresholds, use_ner, progress)
    return {
        level: score_detection(
            docs,
            spans_at(spans, len(docs), level),
            settings={"level": level, "thresholds": dict(thresholds or {}), "use_ner": use_ner},
        )
        for level in levels
    }
