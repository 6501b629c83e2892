"""A steward's annotations written to and read from span JSON and CoNLL BIO, so that they can be kept, shared
with a second annotator and read back; a file written here reads back to exactly the same spans.

- **span JSON**: a JSON list with one object per reviewed record, ``{"record": 12, "text": ..., "spans":
  [[start, end, label], ...]}`` (character offsets, end exclusive); `engine.text.detection_quality.read_gold`
  reads it as a gold file too.
- **CoNLL BIO**: per record a block of ``# record = 12`` and ``# text = "..."`` (the text as a JSON string), then
  one ``token<TAB>tag`` line per token and a blank line (a line beginning with ``#`` is a comment unless it
  holds a tab). Tokens are runs of word characters and single other
  characters, cut where a span begins or ends, so every span is whole tokens and its offsets come back from the
  tokens' places in the text. A block without its ``# text`` line takes the data's text of that record.

Reading checks every record against the data (its number and, where the file holds it, its text) and names the
line or record of anything malformed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from engine.annotation.spans import RecordAnnotation, checked_spans
from engine.errors import DataError
from engine.text.detection_quality import Span, word_tokens

FORMATS = {"json": "span JSON", "conll": "CoNLL BIO"}
ACCEPTED = (
    'accepted: span JSON (a list of {"record": N, "text": ..., "spans": [[start, end, label], ...]}) or CoNLL BIO '
    '("# record = N" and "# text = \\"...\\"" lines, then token<TAB>tag lines, a blank line after each record)'
)


def to_span_json(annotations: Sequence[RecordAnnotation]) -> str:
    """The records as span JSON, one object per line of a JSON list."""
    rows = [
        json.dumps({"record": a.record, "text": a.text, "spans": [list(s) for s in a.spans]}, ensure_ascii=False)
        for a in annotations
    ]
    return "[\n" + ",\n".join(rows) + "\n]\n"


def span_tokens(text: str, spans: Sequence[Span]) -> list[tuple[int, int]]:
    """The tokens of ``text`` (`word_tokens`) cut where a span begins or ends."""
    cuts = sorted({p for s, e, _ in spans for p in (s, e)})
    out = []
    for start, end in word_tokens(text):
        inner = [c for c in cuts if start < c < end]
        bounds = [start, *inner, end]
        out += list(zip(bounds, bounds[1:]))
    return out


def to_conll(annotations: Sequence[RecordAnnotation]) -> str:
    """The records as CoNLL BIO blocks (module docstring)."""
    blocks = []
    for a in annotations:
        lines = [f"# record = {a.record}", f"# text = {json.dumps(a.text, ensure_ascii=False)}"]
        for start, end in span_tokens(a.text, a.spans):
            span = next((s for s in a.spans if s[0] <= start and end <= s[1]), None)
            tag = "O" if span is None else f"{'B' if span[0] == start else 'I'}-{span[2]}"
            lines.append(f"{a.text[start:end]}\t{tag}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def read_annotations(
    content: str, name: str, texts: Mapping[int, str], labels: Sequence[str] = ()
) -> list[RecordAnnotation]:
    """The records of an annotations file named ``name`` (span JSON for .json/.jsonl, CoNLL otherwise) checked
    against ``texts`` (the data's text of each record that may be annotated) and, when given, ``labels``."""
    content = content.removeprefix("\ufeff")
    if name.lower().endswith((".json", ".jsonl")):
        out = read_span_json(content, name, texts, labels)
    else:
        out = read_conll(content, name, texts, labels)
    if not out:
        raise DataError(f"{name} holds no annotated record; {ACCEPTED}")
    seen: set[int] = set()
    for a in out:
        if a.record in seen:
            raise DataError(f"{name}: record {a.record} is annotated twice")
        seen.add(a.record)
    return out


def _data_text(record: int, texts: Mapping[int, str], where: str, text: str | None) -> str:
    if record not in texts:
        raise DataError(f"{where}: record {record} is not one of the records that may be annotated in this data")
    if text is not None and text != texts[record]:
        raise DataError(f"{where}: the text of record {record} is not the data's (a file made from other data?)")
    return texts[record]


def read_span_json(
    content: str, name: str, texts: Mapping[int, str], labels: Sequence[str] = ()
) -> list[RecordAnnotation]:
    """Span JSON (module docstring): a JSON list, or one object per line."""
    stripped = content.strip()
    try:
        if stripped.startswith("["):
            records = list(enumerate(json.loads(stripped), 1))
        else:
            records = [(n, json.loads(line)) for n, line in enumerate(content.splitlines(), 1) if line.strip()]
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: not valid JSON (line {exc.lineno}: {exc.msg}); {ACCEPTED}") from None
    out = []
    for number, raw in records:
        where = f"{name} record {number}"
        if not isinstance(raw, dict) or isinstance(raw.get("record"), bool) or not isinstance(raw.get("record"), int):
            raise DataError(f"{where} has no whole-number 'record'; {ACCEPTED}")
        text = raw.get("text")
        if text is not None and not isinstance(text, str):
            raise DataError(f"{where}: 'text' is not a string; {ACCEPTED}")
        spans = raw.get("spans", [])
        if not isinstance(spans, list):
            raise DataError(f"{where}: 'spans' is not a list; {ACCEPTED}")
        record = raw["record"]
        text = _data_text(record, texts, where, text)
        out.append(RecordAnnotation(record, text, checked_spans(text, spans, where, labels)))
    return out


_RECORD = re.compile(r"#\s*record\s*=\s*(\S+)\s*$")
_TEXT = re.compile(r"#\s*text\s*=\s*(.*)$")
_TAG = re.compile(r"O|[BI]-\S+")


def read_conll(content: str, name: str, texts: Mapping[int, str], labels: Sequence[str] = ()) -> list[RecordAnnotation]:
    """CoNLL BIO with record lines (module docstring)."""
    out: list[RecordAnnotation] = []
    block: list[tuple[int, str]] = []
    for number, line in enumerate([*content.splitlines(), ""], 1):
        if line.strip():
            block.append((number, line))
        elif block:
            out.append(_conll_block(block, name, texts, labels))
            block = []
    return out


def _conll_block(
    block: list[tuple[int, str]], name: str, texts: Mapping[int, str], labels: Sequence[str]
) -> RecordAnnotation:
    first = block[0][0]
    record: int | None = None
    text: str | None = None
    rows: list[tuple[int, str, str]] = []
    for number, line in block:
        where = f"{name} line {number}"
        if line.startswith("#") and "\t" not in line:  # a token line has its tab ("#\tB-HASHTAG" is a token)
            if m := _RECORD.match(line):
                try:
                    record = int(m.group(1))
                except ValueError:
                    raise DataError(f"{where}: record {m.group(1)!r} is not a whole number") from None
            elif m := _TEXT.match(line):
                try:
                    text = json.loads(m.group(1))
                except json.JSONDecodeError:
                    raise DataError(f"{where}: the text is not a JSON string; {ACCEPTED}") from None
                if not isinstance(text, str):
                    raise DataError(f"{where}: the text is not a JSON string; {ACCEPTED}")
            continue
        if rows and record is None:
            break
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0] or not _TAG.fullmatch(parts[1].strip()):
            raise DataError(f"{where}: {line[:60]!r} is not a token, a tab and a BIO tag; {ACCEPTED}")
        rows.append((number, parts[0], parts[1].strip()))
    if record is None:
        raise DataError(f"{name} line {first}: the record's block has no '# record = N' line; {ACCEPTED}")
    text = _data_text(record, texts, f"{name} line {first}", text)
    spans: list[list] = []
    at, last = 0, ""
    for number, token, tag in rows:
        where = f"{name} line {number}"
        pos = text.find(token, at)
        if pos < 0 or text[at:pos].strip():
            raise DataError(f"{where}: token {token!r} is not the next word of record {record}'s text")
        start, end, at = pos, pos + len(token), pos + len(token)
        if tag == "O":
            last = ""
            continue
        kind, label = tag[0], tag[2:]
        if kind == "I" and last == label:  # an I- after another label or O begins a span, as B- does
            spans[-1][1] = end
        else:
            spans.append([start, end, label])
        last = label
    return RecordAnnotation(record, text, checked_spans(text, spans, f"{name} line {first}", labels))
