"""Data page: choose a demo or upload a file, map its columns to roles, load it, and preview what is in use."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from dashboard import display, loading, session
from engine.data.background import read_background
from engine.data.delimited import SHOWN_ROWS, described
from engine.data.demos import DemoInfo
from engine.data.readers import TableRead
from engine.data.schema import FIELD_KINDS, FIELD_ROLES, ExternalSpec, Schema
from engine.measures.risk.duplicates import verbatim_warning

DEMO = "Demo dataset"
UPLOAD = "Upload a file"
FILE = "File given at start"
NONE = "(none)"
FLASH = "data_flash"
# The choice for rows of the wrong length: the `bad_rows` of `engine.data.load.load_dataset`.
BAD_ROWS_CHOICES = {"error": "refuse the file", "drop": "leave them out"}


@dataclass
class Source:
    """The file chosen on this page (not yet necessarily the dataset in use)."""

    id: str
    table: pd.DataFrame
    schema: Schema
    demo: str | None = None
    path: str | None = None  # the file given to `textsdc dashboard --data`
    filename: str = ""
    data: bytes = b""
    encoding: str | None = None
    external: tuple[str, bytes] | None = None
    unclear: str | None = None  # why no column surely holds the text (the steward chooses it), or None
    nested: tuple[str, ...] = ()  # columns whose lists or records were read as text
    delimiter: str | None = None  # as chosen (None: found from the file)
    bad_rows: str = "error"


def _demo_source() -> Source | None:
    infos: list[DemoInfo] | None = session.guarded(loading.demo_infos)
    if not infos:
        st.warning("No demo dataset is installed; upload a file instead.")
        return None
    by_name = {d.name: d for d in infos}
    origin = session.current_origin()
    start = (
        origin.data
        if origin is not None and origin.kind == "demo" and origin.data in by_name
        else session.DEFAULT_SOURCE
    )
    st.session_state.setdefault("data_demo", start if start in by_name else infos[0].name)
    name = st.selectbox(
        "Demo dataset",
        list(by_name),
        format_func=lambda n: by_name[n].title,
        key="data_demo",
        persist_state="session",
    )
    info = by_name[name]
    st.markdown(display.md_escape(info.description))
    st.caption(
        f"{display.counted(info.n_records, 'record')} · {display.counted(info.n_external, 'external record')} for the intruder · "
        f"licence: {display.md_escape(info.licence)} · name: {display.md_escape(info.name)}"
    )
    table = session.guarded(lambda: loading.demo_table(name))
    if table is None:
        return None
    return Source(id=f"demo:{name}", table=table, schema=loading.demo_schema(name), demo=name)


def _file_source(path: str, encoding: str | None, delimiter: str | None, bad_rows: str) -> Source | None:
    """The file given to `textsdc dashboard --data`, with the schema saved beside it or one inferred."""
    st.caption(
        f"{display.md_escape(path)}, given to `textsdc dashboard --data`"
        + (f" (encoding {display.md_escape(encoding)})" if encoding else "")
        + "."
    )
    read = session.guarded(lambda: loading.file_table(path, encoding, delimiter, bad_rows))
    if read is None:
        return None
    _how_read(read)
    table, nested = read.frame, read.nested
    beside = session.guarded(lambda: loading.file_schema(path))
    if beside is not None:
        schema, why = beside, None
    else:
        start = session.guarded(lambda: loading.default_schema_for(table, None))
        if start is None:
            return None
        schema, why = start
    return Source(
        id=f"file:{path}",
        table=table,
        schema=schema,
        path=path,
        encoding=encoding,
        unclear=why,
        nested=tuple(nested),
        delimiter=delimiter,
        bad_rows=bad_rows,
    )


def _how_read(read: TableRead) -> None:
    """The delimiter a delimited file was read with, and the rows left out (with their numbers)."""
    if read.delimiter is not None:
        st.caption(f"Values separated by {display.md_escape(described(read.delimiter))}.")
    if read.dropped:
        rows = ", ".join(map(str, read.dropped[:SHOWN_ROWS])) + (" …" if len(read.dropped) > SHOWN_ROWS else "")
        noun = "row" if len(read.dropped) == 1 else "rows"
        st.warning(
            f"{display.counted(len(read.dropped), 'row')} left out for another number of fields than the header "
            f"({noun} {rows}, counted from 1 at the first record)."
        )


def _upload_source() -> Source | None:
    upload = st.file_uploader(
        "Data file",
        type=list(loading.UPLOAD_TYPES),
        key="data_upload",
        help="CSV, TSV, Parquet or JSON Lines; one record per row, with a header row.",
    )
    encoding = st.text_input(
        "Text encoding",
        key="data_encoding",
        value="utf-8",
        persist_state="session",
        help="Of CSV, TSV and JSON Lines files. Parquet files carry their own.",
    )
    st.caption(
        "If the file was saved by Excel or an older program and does not load, the message says which encoding "
        "reads it (usually **cp1252**)."
    )
    c1, c2 = st.columns(2)
    delimiter = c1.selectbox(
        "Delimiter",
        list(loading.DELIMITER_CHOICES),
        format_func=loading.DELIMITER_CHOICES.__getitem__,
        key="data_delimiter",
        persist_state="session",
        help="Of CSV and TSV files: what separates the values (spreadsheets in many countries save CSV files "
        "with semicolons). Found from the file's first records unless chosen here.",
    )
    bad_rows = c2.radio(
        "Rows of the wrong length",
        list(BAD_ROWS_CHOICES),
        format_func=BAD_ROWS_CHOICES.__getitem__,
        key="data_bad_rows",
        persist_state="session",
        horizontal=True,
        help="Rows of a CSV or TSV file with more or fewer values than the header: refuse the file (naming the "
        "rows), or leave those rows out and count them.",
    )
    external = st.file_uploader(
        "Intruder's external texts (optional)",
        type=list(loading.UPLOAD_TYPES),
        key="data_external",
        help="A second file with other texts by some of the same authors (the text and author columns): what an "
        "intruder already holds. Without it, records can be held out of the data file instead.",
    )
    if upload is None:
        st.info("Upload a data file to map its columns.")
        return None
    data = upload.getvalue()
    enc = encoding.strip() or None
    read = session.guarded(lambda: loading.upload_table(upload.name, data, enc, delimiter or None, bad_rows))
    if read is None:
        return None
    _how_read(read)
    table, nested = read.frame, read.nested
    start = session.guarded(lambda: loading.default_schema_for(table, None))
    if start is None:
        return None
    schema, why = start
    digest = hashlib.sha256(data).hexdigest()[:16]
    return Source(
        id=f"upload:{digest}",
        table=table,
        schema=schema,
        filename=upload.name,
        data=data,
        encoding=enc,
        external=None if external is None else (external.name, external.getvalue()),
        unclear=why,
        nested=tuple(nested),
        delimiter=delimiter or None,
        bad_rows=bad_rows,
    )


def _pick(label: str, options: list[str], default: str | None, key: str, help: str) -> str:
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else options[0]
    return st.selectbox(label, options, key=key, help=help, persist_state="session")


def _external_rule(source: Source, author: str | None) -> tuple[ExternalSpec | None, bool]:
    """The intruder's external records for the mapping, and whether the inputs are valid."""
    spec = source.schema.external
    if author is None:
        st.caption("No author column: there are no external texts, so the identification attack is not measured.")
        return None, True
    if source.external is not None:
        st.caption(f"The intruder's external texts come from the second file, {display.md_escape(source.external[0])}.")
        return ExternalSpec(file=source.external[0]), True
    if spec is not None and spec.file:
        st.caption(f"The intruder's external texts come with the demo ({display.md_escape(spec.file)}).")
        return spec, True
    base = spec or ExternalSpec()
    on = st.checkbox(
        "Hold out records as the intruder's external texts",
        value=spec is not None or source.demo is None,
        key=f"holdout::{source.id}",
        help="Moves a few records of some authors out of the data into what the intruder holds, so the "
        "identification attack can be measured.",
    )
    if not on:
        return None, True
    c1, c2, c3, c4 = st.columns(4)
    per_author = c1.number_input("Records per author", 1, 100, base.holdout_per_author, key=f"ho_per::{source.id}")
    min_records = c2.number_input(
        "Authors with at least", 2, 1000, base.min_records, key=f"ho_min::{source.id}", help="records are eligible"
    )
    max_authors = c3.number_input("At most this many authors", 1, 100_000, base.max_authors, key=f"ho_max::{source.id}")
    seed = c4.number_input("Seed", 0, 2**31 - 1, base.seed, key=f"ho_seed::{source.id}")
    rule = session.guarded(lambda: ExternalSpec(None, int(per_author), int(min_records), int(max_authors), int(seed)))
    return rule, rule is not None


def _mapping(source: Source) -> None:
    st.subheader("Column roles")
    columns = [str(c) for c in source.table.columns]
    if source.nested:
        st.caption(
            f"{display.counted(len(source.nested), 'column')} held lists or records, read as text: "
            f"{', '.join(display.md_escape(c) for c in source.nested)} (a list's items one per line; a list of records one "
            "paragraph per record, its values joined by “: ”, as in “Operator: Good morning”)."
        )
    schema = source.schema
    c1, c2, c3 = st.columns(3)
    with c1:
        text = _pick("Text column", columns, schema.text, f"map_text::{source.id}", "The free text to protect.")
    with c2:
        author = _pick(
            "Author column",
            [NONE, *columns],
            schema.author or NONE,
            f"map_author::{source.id}",
            "Who wrote each record (one person, several records), or none.",
        )
    with c3:
        document = _pick(
            "Document column",
            [NONE, *columns],
            schema.document or NONE,
            f"map_document::{source.id}",
            "Records that are chunks of one document, or none.",
        )
    if source.unclear is not None and not st.session_state.get(_confirmed(source)):
        st.warning(f"No column surely holds the free text: {display.md_escape(source.unclear)}.")
    author_col = None if author == NONE else author
    document_col = None if document == NONE else document
    fields_from = loading.schema_for_text(source.table, schema, text, source.demo)
    base = loading.field_table(source.table, fields_from, {text, author, document})
    st.caption(
        "The other columns: their kind, and their role — sensitive (to be protected), key (an intruder "
        "may know it), other, direct identifier (names the record's people or organization, as a call's "
        "participants: never released, and its names are taken out of the text), other free text (free text "
        "besides the text column, as a review's summary: left out of every release unless the schema asks for it "
        "to be protected), or drop (left out of the dataset)."
    )
    table_key = (
        f"map_fields::{source.id}::" + hashlib.sha1("\x1f".join([text, *base["column"]]).encode()).hexdigest()[:10]
    )
    fields = st.data_editor(
        base,
        key=table_key,
        hide_index=True,
        num_rows="fixed",
        disabled=["column", "note"],
        column_config={
            "column": st.column_config.TextColumn("Column"),
            "note": st.column_config.TextColumn("Why it is left out or treated so", width="large"),
            "kind": st.column_config.SelectboxColumn("Kind", options=list(FIELD_KINDS), required=True),
            "role": st.column_config.SelectboxColumn(
                "Role", options=[*FIELD_ROLES, loading.DIRECT, loading.OTHER_TEXT, loading.DROP], required=True
            ),
        },
    )
    noted = base[base["note"] != ""]
    if len(noted):  # the table's cells cut long notes, and the steward needs their last words (how to keep one)
        st.caption(
            "Why they are left out or treated so: "
            + " · ".join(
                f"**{display.md_escape(c)}**: {display.md_escape(n)}" for c, n in zip(noted["column"], noted["note"])
            )
        )
    external, ok = _external_rule(source, author_col)
    # One key whatever the source: a click made while the page still shows the previous demo's button (just
    # after another was picked) reaches this run, which loads the source now chosen. A key naming the source
    # would make that click the old button's, absent from this run, and Streamlit would drop it.
    if st.button("Use this data", type="primary", key="data_use", disabled=not ok):
        loaded = session.guarded(lambda: _load(source, text, author_col, document_col, fields, external))
        if loaded is not None:
            session.use_dataset(*loaded)
            st.session_state[_confirmed(source)] = True  # the steward has chosen the text column: no more warning
            st.session_state[FLASH] = f"Loaded {loaded[0].name}: {display.counted(loaded[0].n_records, 'record')}."
            st.rerun()


def _confirmed(source: Source) -> str:
    """The session key that says the steward loaded this source with the columns they chose."""
    return f"data_confirmed::{source.id}"


def _load(
    source: Source,
    text: str,
    author: str | None,
    document: str | None,
    fields: pd.DataFrame,
    external: ExternalSpec | None,
):
    schema = loading.build_schema(text, author, document, fields, None if source.external else external)
    # what the page does not edit comes from the schema the data came with: the methods' settings and the
    # [release] treatments of the author, document and other free-text columns (a steward's "drop" must not
    # become a pseudonym)
    kept = source.schema
    schema = replace(
        schema,
        methods=kept.methods,
        author_release=kept.author_release,
        document_release=kept.document_release,
        other_text_release=kept.other_text_release,
    )
    if source.demo is not None:
        dataset = loading.load_demo_with_schema(source.demo, schema)
        custom = schema != loading.demo_schema(source.demo)
        return dataset, loading.Origin("demo", source.demo, None, custom)
    delimiter, bad_rows = source.delimiter, source.bad_rows
    if source.path is not None:
        dataset = loading.load_file_with_schema(source.path, schema, source.encoding, delimiter, bad_rows)
        # the CLI reads the file with the schema beside it, or infers one: any other needs a schema file
        custom = schema != source.schema or source.unclear is not None
        return dataset, loading.Origin("file", source.path, source.encoding, custom, delimiter, bad_rows)
    second = source.external if author else None
    dataset = loading.load_upload(source.filename, source.data, schema, source.encoding, second, delimiter, bad_rows)
    return dataset, loading.Origin("upload", source.filename, source.encoding, True, delimiter, bad_rows)


def _preview() -> None:
    st.subheader("Dataset in use")
    dataset = session.current_dataset()
    if dataset is None:
        st.info("No dataset is loaded yet: choose one above and press “Use this data”.")
        return
    counts = loading.dataset_counts(dataset)
    c1, c2, c3 = st.columns(3)
    c1.metric("Records", f"{counts['records']:,}")
    c2.metric("Authors", "—" if counts["authors"] is None else f"{counts['authors']:,}")
    c3.metric("External records", f"{counts['external']:,}", help="The intruder's other texts by the same authors.")
    if warning := verbatim_warning(dataset):
        st.warning(warning)
    schema = dataset.schema
    roles = [f"text: {schema.text}", f"author: {schema.author or '—'}", f"document: {schema.document or '—'}"]
    roles += [f"{f.name}: {f.kind}, {f.role}" for f in schema.fields]
    roles += [f"{c}: direct identifier (never released)" for c in schema.direct_identifiers]
    left = "left out of every release" if schema.other_text_release == "drop" else "released guarded"
    roles += [f"{c}: other free text ({left})" for c in schema.other_text]
    st.caption(f"{display.md_escape(dataset.name)} · " + " · ".join(display.md_escape(r) for r in roles))
    st.dataframe(dataset.frame.head(50), hide_index=True, key="data_preview")
    st.download_button(
        "Download the schema (TOML)",
        schema.to_toml(),
        file_name=f"{dataset.name}.schema.toml",
        mime="application/toml",
        on_click="ignore",
        key="data_schema_download",
    )


def _background() -> None:
    """The background corpus the steward declares: what an intruder may already hold (an upload, kept in the
    textsdc cache, or a file on this machine); the background attacks of every page train on it."""
    st.subheader("Background corpus")
    st.caption(
        "Texts an intruder may already hold: public documents of the same sources (another quarter's calls of "
        "the same companies, other posts by the same authors), with the author column or a document field of "
        "the data (such as the company). The background attacks train on it and name each released text's "
        "author or document, one of them from writing style alone (Burrows' Delta); the bundle records the "
        "file's name, checksum and rows, never its content."
    )
    c1, c2 = st.columns(2)
    upload = c1.file_uploader(
        "Upload a background file",
        type=list(loading.UPLOAD_TYPES),
        key="background_upload",
        help="Read as the data is.",
    )
    path = c2.text_input("Or a file on this machine", key="background_path", placeholder="/path/to/background.jsonl")
    if st.button("Use this background", key="background_use", disabled=upload is None and not path.strip()):
        chosen = session.guarded(
            lambda: str(loading.save_background(upload.name, upload.getvalue())) if upload is not None else path.strip()
        )
        corpus = None if chosen is None else session.guarded(lambda: read_background(chosen))
        if corpus is not None:
            st.session_state[session.BACKGROUND_KEY] = chosen
    current = session.background()
    if current is None:
        st.caption("No background declared: the background attacks are not measured.")
        return
    corpus = session.guarded(lambda: read_background(current))
    if corpus is not None:
        st.success(
            f"Background in use: {display.md_escape(corpus.name)}, "
            f"{display.counted(corpus.rows, 'text')} (column {display.md_escape(corpus.text)}), "
            f"SHA-256 {corpus.sha256[:12]}…"
        )
    if st.button("Remove the background", key="background_remove"):
        st.session_state.pop(session.BACKGROUND_KEY, None)
        st.rerun()


def render() -> None:
    """The Data page."""
    st.title("Data")
    if error := st.session_state.get(session.STARTUP_ERROR):
        st.error(display.md_literal(error))
    if flash := st.session_state.pop(FLASH, None):
        st.success(flash)
    started = st.session_state.get(session.STARTUP_FILE)
    kinds = [FILE, DEMO, UPLOAD] if started else [DEMO, UPLOAD]
    st.session_state.setdefault("data_source", kinds[0])
    kind = st.radio("Source", kinds, key="data_source", horizontal=True, persist_state="session")
    if kind == FILE and started:
        source = _file_source(*started)
    else:
        source = _demo_source() if kind == DEMO else _upload_source()
    if source is not None:
        _mapping(source)
    _preview()
    _background()


if __name__ == "__main__":
    render()
