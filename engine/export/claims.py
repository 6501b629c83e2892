"""The claims a bundle's manifest makes of its tables (`AnonymityClaim`), checked on the tables as written: k, ℓ
and t counted here, on the bundle's CSV file, over every column but the one that marks suppressed rows and the
sensitive one (a column the claim does not name counts too), the suppressed rows set aside; and every table of
values per class (anatomy) checked to hold only classes of at least k records. `textsdc verify` prints each
claim beside its check.

Beside the tables, what can be checked from outside (`verify_claims`): a differentially private release's ε
(`EpsilonClaim`) against the knob and the vocabulary setting recorded — ε covers the vocabulary only where it was
fixed before the data was seen ("public"), and then the digest recorded must be that of the public word list
installed where verify runs; and a declared background corpus's SHA-256 and rows recomputed on the file (given,
or at the path the release's settings recorded), or said to be unchecked without it.

The counts follow pycanon's definitions (Sáinz-Pardo Díaz & López García 2022), which the tests confirm on the
demo's bundles: k the size of the smallest class, ℓ the fewest distinct sensitive values in a class, t the
largest equal-distance (half the L1) distance of a class's sensitive distribution from that of all rows kept.
pycanon itself is not a dependency: it pins exact versions of numpy, pandas and scipy that textsdc does not use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from engine.data.background import read_background
from engine.errors import TextsdcError
from engine.protect.claims import AnonymityClaim, EpsilonClaim
from engine.record.manifest import BackgroundNote, ReleaseRecord, read_record
from engine.text.vocabulary import public_vocabulary

TRUE = "True"
"""How a CSV file of the bundle writes a true cell (pandas' ``str(True)``)."""
TOLERANCE = 1e-9


@dataclass(frozen=True)
class ClaimCheck:
    """One claim beside what the table shows, and whether it holds."""

    claimed: str
    found: str
    holds: bool
    checked: bool = True
    """False: nothing here to check the claim on (the line says what is needed); not counted as failed."""

    def line(self) -> str:
        if not self.checked:
            return f"{self.claimed}; {self.found} (not checked)"
        return f"{self.claimed}; {self.found} {'✓' if self.holds else '✗'}"


def read_table(path: Path) -> pd.DataFrame:
    """A bundle's CSV file as text cells, an empty cell kept as "" (not stated), as the bundle wrote it."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def class_sizes(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """The size of every class (rows equal in ``columns``)."""
    return frame.groupby(columns, sort=False, dropna=False).size()


def smallest_class(frame: pd.DataFrame, columns: list[str]) -> int:
    """k: the size of the smallest class (0 for no rows)."""
    return int(class_sizes(frame, columns).min()) if len(frame) else 0


def fewest_distinct(frame: pd.DataFrame, columns: list[str], sensitive: str) -> int:
    """Distinct ℓ: the fewest distinct values of ``sensitive`` in a class."""
    return int(frame.groupby(columns, sort=False, dropna=False)[sensitive].nunique().min()) if len(frame) else 0


def farthest_distribution(frame: pd.DataFrame, columns: list[str], sensitive: str) -> float:
    """t: the largest equal-distance of a class's distribution of ``sensitive`` from that of all rows."""
    if not len(frame):
        return 0.0
    whole = frame[sensitive].value_counts(normalize=True)
    shares = frame.groupby(columns, sort=False, dropna=False)[sensitive].value_counts(normalize=True).unstack()
    distance = (shares.fillna(0.0).reindex(columns=whole.index, fill_value=0.0) - whole).abs().sum(axis=1) / 2
    return float(distance.max())


def _kept(frame: pd.DataFrame, claim: AnonymityClaim) -> tuple[pd.DataFrame, int, list[str]]:
    """The rows the claim covers, how many it sets aside, and the columns the classes are formed on."""
    aside = claim.suppressed
    gone = frame[aside] == TRUE if aside in frame.columns else pd.Series(False, index=frame.index)
    columns = [c for c in frame.columns if c not in (aside, claim.sensitive)]
    return frame[~gone].reset_index(drop=True), int(gone.sum()), columns


def check_claim(folder: Path, claim: AnonymityClaim) -> list[ClaimCheck]:
    """Each part of ``claim`` (k; ℓ and t when claimed; every separate table) beside the count on the bundle."""
    path = Path(folder) / claim.table
    if not path.is_file():
        return [ClaimCheck(f"k = {claim.k} claimed", f"{claim.table} is missing", False)]
    kept, aside, columns = _kept(read_table(path), claim)
    missing = [c for c in claim.quasi_identifiers if c not in columns]
    where = f"on {claim.table} over all {len(columns)} columns but {claim.suppressed or 'none'}"
    where += f" ({len(kept):,} records; {aside:,} suppressed set aside)"
    if missing:
        return [ClaimCheck(f"k = {claim.k} claimed", f"{claim.table} has no column {', '.join(missing)}", False)]
    if not len(kept):  # every record suppressed: no class to single one out of
        return [ClaimCheck(f"k = {claim.k} claimed", f"on {claim.table}: every record suppressed, no class", True)]
    k = smallest_class(kept, columns)
    out = [ClaimCheck(f"k = {claim.k} claimed", f"{where}: k = {k}", k >= claim.k)]
    if (claim.ell or claim.t) and claim.sensitive not in kept.columns:
        return [*out, ClaimCheck("ℓ, t claimed", f"{claim.table} has no sensitive column {claim.sensitive}", False)]
    if claim.ell and claim.sensitive:
        ell = fewest_distinct(kept, columns, claim.sensitive)
        out.append(ClaimCheck(f"ℓ = {claim.ell} claimed", f"{claim.sensitive} {where}: ℓ = {ell}", ell >= claim.ell))
    if claim.t and claim.sensitive:
        t = farthest_distribution(kept, columns, claim.sensitive)
        out.append(
            ClaimCheck(f"t = {claim.t:g} claimed", f"{claim.sensitive} {where}: t = {t:.3f}", t <= claim.t + TOLERANCE)
        )
    sizes = kept[claim.class_column].value_counts() if claim.class_column in kept.columns else pd.Series(dtype=int)
    for name in claim.separate:
        out.append(_check_separate(Path(folder) / name, claim, sizes))
    return out


def _check_separate(path: Path, claim: AnonymityClaim, sizes: pd.Series) -> ClaimCheck:
    """A table of values per class: every class it names is one of at least k records kept."""
    said = f"{path.name}: values per class of at least {claim.k} records"
    if not path.is_file():
        return ClaimCheck(said, "it is missing", False)
    table = read_table(path)
    key = claim.class_column
    if key is None or key not in table.columns:
        return ClaimCheck(said, f"it has no column {key}", False)
    small = sorted({c for c in table[key] if sizes.get(c, 0) < claim.k})
    found = f"{table[key].nunique():,} classes, the smallest of {min((sizes.get(c, 0) for c in table[key]), default=0)}"
    if small:
        return ClaimCheck(said, f"{found}; {len(small)} of fewer than {claim.k} records kept", False)
    return ClaimCheck(said, f"{found} records in {claim.table}", True)


def _short(digest: str | None) -> str:
    return "none" if not digest else f"{digest[:12]}…"


def check_epsilon(record: ReleaseRecord, claim: EpsilonClaim) -> list[ClaimCheck]:
    """The ε claim beside the record's knob and vocabulary setting, and a public vocabulary's digest beside the
    word list installed here (`engine.text.vocabulary.public_vocabulary`)."""
    from engine.protect import is_method, method_class
    from engine.text.vocabulary import vocabulary_digest

    knob = record.method.knob
    shown = method_class(record.method.name).knob.format if is_method(record.method.name) else "{:g}".format
    out = [
        ClaimCheck(
            f"ε = {shown(claim.epsilon)} claimed",
            f"the release's knob: {record.method.knob_symbol or 'ε'} = {shown(knob)}",
            abs(claim.epsilon - knob) <= TOLERANCE * max(1.0, abs(knob)),
        )
    ]
    setting = record.method.params.get("vocabulary")
    covers = "ε covers the vocabulary" if claim.covers_vocabulary else "ε does not cover the vocabulary"
    public = claim.vocabulary == "public"
    if setting != claim.vocabulary:
        found = f"the method's vocabulary setting is {setting!r}, not the claim's"
        holds = False
    elif claim.covers_vocabulary != public:
        found = f"vocabulary = {setting!r}: " + (
            "a vocabulary taken from the data is disclosed by the release, which ε does not cover"
            if not public
            else "a public vocabulary is fixed before the data is seen, yet the claim says ε does not cover it"
        )
        holds = False
    else:
        found = f"vocabulary = {setting!r}: " + (
            "fixed before the data was seen" if public else "the data's own words, disclosed beyond ε"
        )
        holds = True
    out.append(ClaimCheck(f"{covers} ({claim.vocabulary}: {claim.source})", found, holds))
    if public:
        said = f"public vocabulary of {claim.words:,} words, SHA-256 {_short(claim.digest)}"
        try:
            words = public_vocabulary()
        except TextsdcError as exc:
            out.append(ClaimCheck(said, f"cannot check here: {exc}", True, checked=False))
            return out
        digest = vocabulary_digest(words)
        found = f"the public word list installed here: {len(words):,} words, SHA-256 {_short(digest)}"
        out.append(ClaimCheck(said, found, claim.digest == digest and claim.words == len(words)))
    return out


def check_background(record: ReleaseRecord, note: BackgroundNote, given: Path | None = None) -> ClaimCheck:
    """The declared background corpus's SHA-256 and rows recomputed on ``given``, else on the file at the path the
    release's measure settings recorded when it is here; unchecked without either."""
    said = f"background corpus {note.file}: SHA-256 {_short(note.sha256)}, {note.rows:,} rows"
    recorded = record.measure_settings.get("background")
    path = given
    if path is None and isinstance(recorded, str) and Path(recorded).expanduser().is_file():
        path = Path(recorded).expanduser()
    if path is None:
        return ClaimCheck(said, "cannot check without the file: give it with --background FILE", True, checked=False)
    try:
        found = read_background(path)
    except TextsdcError as exc:
        return ClaimCheck(said, f"{path.name}: {exc}", False)
    where = "" if given is not None else " (at the path the release recorded)"
    text = f"{path.name}{where}: SHA-256 {_short(found.sha256)}, {found.rows:,} rows"
    return ClaimCheck(said, text, found.sha256 == note.sha256 and found.rows == note.rows)


def verify_claims(folder: Path, background: Path | None = None) -> list[ClaimCheck]:
    """Every claim of the bundle in ``folder`` beside its check: its tables' (k, ℓ, t), its ε and vocabulary, its
    background corpus's checksum (on ``background`` when given); none where the release claims nothing."""
    record = read_record(Path(folder))
    out = [check for claim in record.claims for check in check_claim(Path(folder), claim)]
    if record.epsilon is not None:
        out += check_epsilon(record, record.epsilon)
    if record.background is not None:
        out.append(check_background(record, record.background, background))
    return out
