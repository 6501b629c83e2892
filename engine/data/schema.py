"""Column roles of a dataset: which column is the text, who wrote it, and the structured fields beside it.

A schema is written as TOML::

    text = "text"                 # required: the free-text column
    author = "name"               # optional: one person, several records
    document = "call_id"          # optional: records that are chunks of one document
    direct_identifiers = ["participants"]  # optional: columns naming each record's people or organization
    other_text = ["summary"]      # optional: free-text columns besides the text (a review's title)

    [fields.airline]              # one table per structured field
    kind = "categorical"          # categorical | count | continuous
    role = "key"                  # sensitive (to be protected) | key (an intruder may know it) | other

    [release]                     # optional: how the identifier columns leave in the bundle
    author = "pseudonymize"       # pseudonymize (default: a keyed pseudonym, the key never ships) | drop | keep
    document = "pseudonymize"     # the same choices for the document column
    other_text = "drop"           # drop (default: no bundle holds them) | protect (guarded, redacted with the text)

    [external]                    # optional: the intruder's external records (see `ExternalSpec`)
    file = "external.csv"         # a second file, relative to the schema file ...
    # ... or a rule that splits them off the release file:
    # holdout_per_author = 1, min_records = 2, max_authors = 300, seed = 0
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engine import MAX_SEED
from engine.errors import ConfigError

FieldKind = Literal["categorical", "count", "continuous"]
FieldRole = Literal["sensitive", "key", "other"]
FIELD_KINDS: tuple[str, ...] = ("categorical", "count", "continuous")
FIELD_ROLES: tuple[str, ...] = ("sensitive", "key", "other")
Treatment = Literal["pseudonymize", "drop", "keep"]
TREATMENTS: tuple[str, ...] = ("pseudonymize", "drop", "keep")
OtherTextTreatment = Literal["drop", "protect"]
OTHER_TEXT_TREATMENTS: tuple[str, ...] = ("drop", "protect")


@dataclass(frozen=True)
class FieldSpec:
    """One structured field: its column name, its kind and its disclosure role."""

    name: str
    kind: FieldKind = "categorical"
    role: FieldRole = "other"

    def __post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ConfigError(f"field '{self.name}': kind '{self.kind}' is not one of {', '.join(FIELD_KINDS)}")
        if self.role not in FIELD_ROLES:
            raise ConfigError(f"field '{self.name}': role '{self.role}' is not one of {', '.join(FIELD_ROLES)}")


@dataclass(frozen=True)
class ExternalSpec:
    """Where the intruder's external records come from.

    Either ``file`` (a second file with the text column, the author column and optionally known fields)
    or the hold-out rule: for up to ``max_authors`` authors with at least ``min_records`` records, move
    ``holdout_per_author`` of their records (chosen with ``seed``) out of the release file into the
    intruder's set.
    """

    file: str | None = None
    holdout_per_author: int = 1
    min_records: int = 2
    max_authors: int = 300
    seed: int = 0

    def __post_init__(self) -> None:
        if self.file is not None and (not isinstance(self.file, str) or not self.file.strip()):
            raise ConfigError(f"[external] file must be a file name in quotes, got {self.file!r}")
        for name in ("holdout_per_author", "min_records", "max_authors", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"[external] {name} must be a whole number, got {value!r}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ConfigError(f"[external] seed must be a whole number from 0 to 2^63 − 1, got {self.seed}")
        if self.holdout_per_author < 1:
            raise ConfigError(f"[external] holdout_per_author must be at least 1, got {self.holdout_per_author}")
        if self.min_records < self.holdout_per_author + 1:
            raise ConfigError(
                "[external] min_records must exceed holdout_per_author so every target keeps a released record "
                f"(got min_records={self.min_records}, holdout_per_author={self.holdout_per_author})"
            )
        if self.max_authors < 1:
            raise ConfigError(f"[external] max_authors must be at least 1, got {self.max_authors}")


@dataclass(frozen=True)
class Schema:
    """Column roles of one dataset."""

    text: str
    author: str | None = None
    document: str | None = None
    fields: tuple[FieldSpec, ...] = field(default_factory=tuple)
    external: ExternalSpec | None = None
    author_release: Treatment = "pseudonymize"
    document_release: Treatment = "pseudonymize"
    direct_identifiers: tuple[str, ...] = ()
    """Columns that name each record's direct identifiers (the people of a call, its company): never released
    (dropped from every bundle), and the names they hold are found in the text by redaction and suppressed by
    the swap (`engine.data.identifiers_file.column_identifiers`)."""
    methods: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    """Settings of methods for this data ([methods.NAME] tables: parameter = value), the defaults the CLI's
    flags and the dashboard's widgets start from; checked against the method's parameters when it is built
    (`engine.protect.schema_parameters`)."""
    other_text: tuple[str, ...] = ()
    """Free-text columns besides the text column (a review's summary or title beside its text), which can name
    people as the text does. No method takes them for the text, so by default (``other_text_release`` "drop")
    every bundle leaves them out; "protect" releases them after the release guard (formats, identifier names)
    and, where the method is redaction, redacted like the text (`engine.export.identifiers.column_treatments`)."""
    other_text_release: OtherTextTreatment = "drop"

    def method_settings(self, method: str) -> dict[str, Any]:
        """The [methods.METHOD] settings as written (lists as tuples), {} when there are none."""
        return dict(dict(self.methods).get(method, ()))

    def __post_init__(self) -> None:
        for role in ("text", "author", "document"):
            value = getattr(self, role)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"schema: '{role}' must be a column name in quotes, got {value!r}")
        for role in ("author", "document"):
            if getattr(self, role) == self.text:
                raise ConfigError(
                    f"schema: the {role} column cannot be the text column '{self.text}'; name the column that "
                    f"holds the {role} or leave '{role}' out"
                )
        if self.author is not None and self.author == self.document:
            raise ConfigError(
                f"schema: '{self.author}' is named both as the author and the document column; a column has one "
                "role, so name the document column or leave 'document' out"
            )
        for role, treatment in (("author", self.author_release), ("document", self.document_release)):
            if treatment not in TREATMENTS:
                raise ConfigError(
                    f"[release] {role} = {treatment!r} is not accepted; accepted: {', '.join(TREATMENTS)}"
                )
        names = [f.name for f in self.fields]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"schema lists field(s) {', '.join(dup)} more than once")
        for special in (self.text, self.author, self.document):
            if special is not None and special in names:
                raise ConfigError(f"column '{special}' cannot be both a role column and a structured field")
        for column in self.direct_identifiers:
            if not isinstance(column, str) or not column:
                raise ConfigError(f"schema: 'direct_identifiers' must list column names in quotes, got {column!r}")
            if column in (self.text, self.author, self.document) or column in names:
                raise ConfigError(
                    f"column '{column}' cannot be both a direct-identifier column and a role column or field"
                )
        if len(set(self.direct_identifiers)) < len(self.direct_identifiers):
            raise ConfigError("schema: 'direct_identifiers' lists a column more than once")
        for column in self.other_text:
            if not isinstance(column, str) or not column:
                raise ConfigError(f"schema: 'other_text' must list column names in quotes, got {column!r}")
            if column == self.text:
                raise ConfigError(
                    f"schema: '{column}' is the text column; 'other_text' lists the free-text columns besides it"
                )
            if column in (self.author, self.document) or column in names or column in self.direct_identifiers:
                raise ConfigError(
                    f"column '{column}' cannot be both an other free-text column and a role column, field or "
                    "direct identifier"
                )
        if len(set(self.other_text)) < len(self.other_text):
            raise ConfigError("schema: 'other_text' lists a column more than once")
        if self.other_text_release not in OTHER_TEXT_TREATMENTS:
            raise ConfigError(
                f"[release] other_text = {self.other_text_release!r} is not accepted; accepted: "
                f"{', '.join(OTHER_TEXT_TREATMENTS)}"
            )

    @property
    def columns(self) -> list[str]:
        """Every column the schema uses, text first."""
        cols = [self.text]
        cols += [c for c in (self.author, self.document) if c is not None]
        cols += [f.name for f in self.fields]
        cols += list(self.direct_identifiers)
        cols += list(self.other_text)
        return cols

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise ConfigError(f"no structured field named '{name}'; fields are: {', '.join(self.field_names) or 'none'}")

    @property
    def identifiers(self) -> dict[str, Treatment]:
        """The identifier columns (author, document, the direct identifiers) and how each leaves in a bundle: a
        direct-identifier column is always dropped."""
        out: dict[str, Treatment] = {}
        if self.author is not None:
            out[self.author] = self.author_release
        if self.document is not None and self.document not in out:
            out[self.document] = self.document_release
        out.update(dict.fromkeys(self.direct_identifiers, "drop"))
        return out

    @property
    def dropped_other_text(self) -> tuple[str, ...]:
        """The free-text columns besides the text that no bundle holds: all of them unless the schema asks for
        them to be protected (``[release] other_text = "protect"``)."""
        return self.other_text if self.other_text_release == "drop" else ()

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def fields_with_role(self, role: FieldRole) -> list[FieldSpec]:
        return [f for f in self.fields if f.role == role]

    def predictors(self, names: Sequence[str] | None, synthesized: Collection[str]) -> list[FieldSpec]:
        """The un-synthesized fields that predict the synthesized ones: ``names`` checked (ConfigError for an
        unknown or a synthesized field), or by default the key fields that are not synthesized."""
        if names is None:
            return [f for f in self.fields if f.role == "key" and f.name not in synthesized]
        out = []
        for name in names:
            if name not in self.field_names:
                raise ConfigError(
                    f"no structured field named '{name}' to use as a predictor; fields are: "
                    f"{', '.join(self.field_names)}"
                )
            if name in synthesized:
                raise ConfigError(f"'{name}' is synthesized, so it cannot also be a predictor")
            out.append(self.field(name))
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"text": self.text}
        if self.author:
            d["author"] = self.author
        if self.document:
            d["document"] = self.document
        if self.direct_identifiers:
            d["direct_identifiers"] = list(self.direct_identifiers)
        if self.other_text:
            d["other_text"] = list(self.other_text)
        d["fields"] = {f.name: {"kind": f.kind, "role": f.role} for f in self.fields}
        release: dict[str, str] = {
            role: treatment
            for role, treatment in (("author", self.author_release), ("document", self.document_release))
            if treatment != "pseudonymize"
        }
        if self.other_text_release != "drop":
            release["other_text"] = self.other_text_release
        if release:
            d["release"] = release
        if self.methods:
            d["methods"] = {m: {k: list(v) if isinstance(v, tuple) else v for k, v in kv} for m, kv in self.methods}
        if self.external is not None:
            ext = self.external
            d["external"] = (
                {"file": ext.file}
                if ext.file
                else {
                    "holdout_per_author": ext.holdout_per_author,
                    "min_records": ext.min_records,
                    "max_authors": ext.max_authors,
                    "seed": ext.seed,
                }
            )
        return d

    def to_toml(self) -> str:
        return dict_to_toml(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "schema") -> Schema:
        known = {
            "text", "author", "document", "direct_identifiers", "other_text", "fields", "external", "release",
            "methods",
        }  # fmt: skip
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)}; accepted: {', '.join(sorted(known))}")
        if not isinstance(d.get("text"), str) or not d["text"]:
            raise ConfigError(f"{source}: 'text' (the name of the free-text column) is required")
        fields_raw = d.get("fields", {})
        if not isinstance(fields_raw, dict):
            raise ConfigError(f"{source}: 'fields' must be a table of [fields.NAME] entries")
        fields = []
        for name, spec in fields_raw.items():
            if not isinstance(spec, dict):
                raise ConfigError(f"{source}: [fields.{name}] must be a table with 'kind' and 'role'")
            for key in ("kind", "role"):
                if key in spec and not isinstance(spec[key], str):
                    raise ConfigError(f"{source}: [fields.{name}] {key} must be a word in quotes, got {spec[key]!r}")
            bad = sorted(set(spec) - {"kind", "role"})
            if bad:
                raise ConfigError(
                    f"{source}: [fields.{name}] has unknown key(s) {', '.join(bad)}; accepted: kind, role"
                )
            fields.append(FieldSpec(name=name, kind=spec.get("kind", "categorical"), role=spec.get("role", "other")))
        ext_raw = d.get("external")
        external = None
        if ext_raw is not None:
            if not isinstance(ext_raw, dict):
                raise ConfigError(f"{source}: [external] must be a table")
            accepted = {"file", "holdout_per_author", "min_records", "max_authors", "seed"}
            bad = sorted(set(ext_raw) - accepted)
            if bad:
                raise ConfigError(
                    f"{source}: [external] has unknown key(s) {', '.join(bad)}; accepted: {', '.join(sorted(accepted))}"
                )
            try:
                external = ExternalSpec(**ext_raw)
            except ConfigError as exc:
                raise ConfigError(f"{source}: {exc}") from None
        release_raw = d.get("release", {})
        if not isinstance(release_raw, dict):
            raise ConfigError(f"{source}: [release] must be a table with 'author', 'document' and/or 'other_text'")
        bad = sorted(set(release_raw) - {"author", "document", "other_text"})
        if bad:
            raise ConfigError(
                f"{source}: [release] has unknown key(s) {', '.join(bad)}; accepted: author, document, other_text"
            )
        for role in ("author", "document"):
            if role in d and not isinstance(d[role], str):
                raise ConfigError(f"{source}: '{role}' must be a column name in quotes, got {d[role]!r}")
        for role, value in release_raw.items():
            if not isinstance(value, str):
                choices = OTHER_TEXT_TREATMENTS if role == "other_text" else TREATMENTS
                raise ConfigError(
                    f"{source}: [release] {role} must be one of {', '.join(choices)} in quotes, got {value!r}"
                )
        named = d.get("direct_identifiers", [])
        if not isinstance(named, list):
            raise ConfigError(f"{source}: 'direct_identifiers' must be a list of column names, got {named!r}")
        other = d.get("other_text", [])
        if not isinstance(other, list):
            raise ConfigError(f"{source}: 'other_text' must be a list of column names, got {other!r}")
        return cls(
            text=d["text"],
            direct_identifiers=tuple(named),
            methods=_method_settings(d.get("methods", {}), source),
            author=d.get("author") or None,
            document=d.get("document") or None,
            fields=tuple(fields),
            external=external,
            author_release=release_raw.get("author", "pseudonymize"),
            document_release=release_raw.get("document", "pseudonymize"),
            other_text=tuple(other),
            other_text_release=release_raw.get("other_text", "drop"),
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> Schema:
        p = Path(path)
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"schema file {p} does not exist") from None
        except OSError as exc:  # a folder, no permission, ...
            raise ConfigError(f"schema file {p} cannot be read: {exc.strerror or exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"schema file {p} is not valid TOML: {exc}") from None
        return cls.from_dict(raw, source=str(p))


def _method_settings(raw: Any, source: str) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """[methods.NAME] tables as (method, ((parameter, value), ...)) pairs; a list becomes a tuple and a table a
    tuple of "KEY=VALUE" entries (``thresholds = {PHONE = 0.3}`` is ``("PHONE=0.3",)``)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: 'methods' must be tables of settings, e.g. [methods.redact]")
    out = []
    for method, settings in raw.items():
        if not isinstance(settings, dict):
            raise ConfigError(f"{source}: [methods.{method}] must be a table of parameter = value lines")
        pairs = []
        for name, value in settings.items():
            if isinstance(value, dict):
                value = tuple(f"{k}={v}" for k, v in value.items())
            elif isinstance(value, list):
                value = tuple(value)
            if any(isinstance(v, (dict, list)) for v in (value if isinstance(value, tuple) else (value,))):
                raise ConfigError(
                    f"{source}: [methods.{method}] {name} must be a value, a list of values or a table of "
                    f"TYPE = value entries, got {settings[name]!r}"
                )
            pairs.append((name, value))
        out.append((method, tuple(pairs)))
    return tuple(out)


def _toml_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return _toml_string(str(v))


def _toml_string(s: str) -> str:
    """A TOML basic string: backslash, quote and every control character escaped, so any column name (one
    with a line break or a tab included) reads back as written."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(k: str) -> str:
    bare = bool(k) and all(c.isascii() and (c.isalnum() or c in "_-") for c in k)
    return k if bare else _toml_string(k)


def dict_to_toml(d: dict[str, Any]) -> str:
    """Write the schema's nested dict as TOML (scalars first, then [table], [fields.NAME] and [methods.NAME]
    sections)."""
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in d.items() if not isinstance(v, dict)]
    for k, v in d.items():
        if not isinstance(v, dict):
            continue
        if k in ("fields", "methods"):
            for name, spec in v.items():
                lines.append("")
                lines.append(f"[{k}.{_toml_key(name)}]")
                lines += [f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in spec.items()]
        else:
            lines.append("")
            lines.append(f"[{_toml_key(k)}]")
            lines += [f"{_toml_key(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"
