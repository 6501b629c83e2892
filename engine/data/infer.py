"""Inferring a schema from a frame when none is given."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from engine.data.schema import FieldKind, FieldSpec, Schema
from engine.data.values import is_str, n_distinct, numbers
from engine.errors import DataError

_TEXT_NAMES = ("text", "review", "review_text", "description", "tweet", "content", "body")
_AUTHOR_NAMES = (
    "author", "user", "user_id", "name", "username", "user_name", "screen_name", "reviewer_id", "auteur", "autor",
)  # fmt: skip
_DOCUMENT_NAMES = ("document", "doc_id", "call_id")
_MIN_PREFERRED_TEXT_LENGTH = 20
TEXT_COLUMN_ADVICE = 'give a schema that names the text column (text = "COLUMN")'
"""How to name the text column when inference cannot (the dashboard's Data page offers its own choice)."""
_MAX_CATEGORICAL_INTEGERS = 20


def _normalized(name: Any) -> str:
    """A column name's words joined by underscores, lower case: "Review Text", "review-text" and "reviewText"
    are all review_text."""
    return "_".join(_name_parts(name))


def infer_schema(frame: pd.DataFrame) -> Schema:
    """A schema guessed from the columns: the text, author and document columns, and a kind for every field.

    Text: among the columns that read like prose (mostly several words; not a path, URL or address; not named
    like an identifier), one named text / review / review_text / description / tweet / content / body (any
    case, spaces as underscores) whose mean length is at least 20 characters, else the one with the largest
    mean length; a `DataError` asks for a schema when none qualifies or a column named like the text does
    not. Author: a column named author / user / user_id / name / username / user_name / screen_name /
    reviewer_id / auteur / autor whose values repeat (names compared by their words: reviewerID is reviewer_id).
    Document: a column named document / doc_id / call_id. A column of text named like the people of a record
    (participants, executives, speakers), a person's name (host_name, lastname, screen_name), a handle, or plainly
    "name" with many different values (`person_name_column`) is a direct-identifier column
    (`Schema.direct_identifiers`): never released, its names sought in the text. A column that reads as free text besides the text
    (`_free_text`: written in words, and varied as writing is — a review's summary) is an other free-text column
    (`Schema.other_text`), which no bundle holds unless the schema asks for it to be protected. Other columns
    become fields: categorical for strings, booleans and integers with at most 20 distinct values (unless named
    as counts or amounts, `_infer_kind`); count for other non-negative integers; continuous for other numbers
    and for whole numbers named as amounts (price, rate). A field's role is "sensitive" when it is a rating
    (`_rating_like`: named overall / rating / stars / score / grade, or whole numbers on a scale such as 1–5 or
    0–10), else "other"; the steward can change either. Left out (`left_out_columns` says why): direct
    identifiers — columns named like an identifier or a contact detail (user_id, email, phone, ...), numbers
    named like a name, and columns of e-mail addresses or links, which a release would otherwise carry in
    clear —, columns with a single distinct value, strings that differ in every record, and numeric columns
    with gaps and more than 20 distinct values (a count or continuous field may not have missing values).
    """
    return infer_with_reasons(frame)[0]


def left_out_columns(frame: pd.DataFrame) -> dict[str, str]:
    """Why each column the inferred schema leaves out is left out; {} when no schema can be inferred."""
    try:
        return infer_with_reasons(frame)[1]
    except DataError:
        return {}


def kind_of(col: pd.Series) -> FieldKind:
    """The kind a column would have as a field: the inferred one, or categorical where none is (numbers with
    gaps, text)."""
    return _infer_kind(col, _numeric_view(col)) or "categorical"


def likely_text_column(frame: pd.DataFrame) -> str:
    """The column most likely to be the text when inference cannot tell (`infer_schema` raised): of the columns
    that do not hold numbers, the one with the longest values; else the first column."""
    candidates = [c for c in frame.columns if _numeric_view(frame[c]) is None]
    return str(max(candidates, key=lambda c: _mean_length(frame[c])) if candidates else frame.columns[0])


def infer_with_reasons(frame: pd.DataFrame, text: str | None = None) -> tuple[Schema, dict[str, str]]:
    """`infer_schema`'s schema, and why each column it leaves out (not a field, nor the text, author or
    document column) is left out, in the steward's words. ``text`` names the text column instead of inferring
    it (the Data page's fallback when no column surely is the text: the steward then chooses)."""
    numeric = {c: _numeric_view(frame[c]) for c in frame.columns}
    if text is not None and text not in frame.columns:
        raise DataError(f"no column '{text}'; columns: {_column_list(frame)}")
    text = _infer_text_column(frame, numeric) if text is None else text
    author = _named_column(frame, _AUTHOR_NAMES, exclude={text}, repeating=True)
    document = _named_column(frame, _DOCUMENT_NAMES, exclude={text, author}, repeating=False)
    fields, reasons, named, other_text = [], {}, [], []
    text_values = n_distinct(frame[text])
    for c in frame.columns:
        if c in (text, author, document):
            continue
        if numeric[c] is None and person_name_column(c, frame[c]):
            named.append(str(c))
            continue
        reason = _why_left_out(c, frame[c], numeric[c])
        if reason is None and numeric[c] is None and _free_text(frame[c], text_values):
            other_text.append(str(c))
            continue
        reason = reason or _singles_out(frame[c], numeric[c])
        kind = _infer_kind(frame[c], numeric[c]) if reason is None else None
        if kind is not None:
            fields.append(FieldSpec(str(c), kind, "sensitive" if _rating_like(c, numeric[c]) else "other"))
        else:
            reasons[str(c)] = reason or "numbers with gaps: a count or an amount may not have missing values"
    schema = Schema(
        text=str(text),
        author=author,
        document=document,
        fields=tuple(fields),
        direct_identifiers=tuple(named),
        other_text=tuple(other_text),
    )
    return schema, reasons


def _names_people(name: Any) -> bool:
    """Whether a column's name says its values name people: participants, executives, speakers (`_NAMED_PEOPLE`),
    or a person's name ("host_name", "user name", "screen_name", "lastname"). Such a column is a direct identifier
    (`Schema.direct_identifiers`): never released, and its names are taken out of the text by the methods that
    suppress identifiers, and looked for in the released text at export."""
    parts = set(_name_parts(name))
    person_name = bool(parts & {"name", "names"}) and bool(parts & set(_PERSON_PARTS))
    return bool(parts & set(_NAMED_PEOPLE)) or person_name or bool(parts & set(_PERSON_NAME_PARTS))


def person_name_column(name: Any, col: pd.Series) -> bool:
    """Whether a column, by its name, holds people's names or handles: named like the people of a record or a
    person's name (`_names_people`: participants, user_name, full_name, screen_name), like a handle, or plainly
    "name" / "names" with `_MIN_NAMES` different values or more, one in ten records or more (a "name" of a few
    levels is a category). Inference makes such a column of strings a direct identifier, and the release guard
    takes its names whatever role a schema gives it (`engine.protect.guard.name_columns`)."""
    parts = set(_name_parts(name))
    if _names_people(name) or parts & {"handle", "handles"}:
        return True
    if not parts or not parts <= {"name", "names"}:
        return False
    distinct = n_distinct(col)
    return distinct >= _MIN_NAMES and distinct >= 0.1 * len(col)


_PERSON_NAME_PARTS = ("username", "screenname", "nickname", "firstname", "lastname", "fullname", "surname")


_NAMED_PEOPLE = (
    "participant", "participants", "executive", "executives", "speaker", "speakers", "attendee", "attendees",
    "officers", "panelists",
)  # fmt: skip
"""Words of a column name that make it a direct-identifier column: it names the people of a record (a call's
participants), whom the text may name too."""


_DIRECT_IDENTIFIER_PARTS = (
    "id", "ids", "uuid", "guid", "email", "mail", "phone", "telephone", "mobile", "fax", "ssn", "passport", "ip",
    "ipaddress", "url", "uri", "handle", "username", "screenname", "nickname", "firstname", "lastname",
    "fullname", "surname",
)  # fmt: skip
_PERSON_PARTS = (
    "user", "reviewer", "host", "author", "customer", "client", "patient", "person", "first", "last", "full",
    "given", "family", "middle", "screen", "sender", "recipient", "owner", "contact", "employee", "member",
    "account", "display", "real", "profile", "nick", "maiden", "student", "guest", "buyer", "seller",
)  # fmt: skip
_LINK_OR_EMAIL = r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\S+@\S+\.\S+"
_FILE_PATH = re.compile(r"[^\s/\\]*(?:[/\\][^\s/\\]+)+")


def _is_file_path(value: str) -> bool:
    """folder/name.txt, C:\\data\\x.csv, a/b/c: separated parts with letters, and a file extension or two
    separators or more (not a date, 10/26/15, nor "and/or")."""
    if not _FILE_PATH.fullmatch(value) or not re.search(r"[A-Za-z]", value):
        return False
    return bool(re.search(r"\.[A-Za-z0-9]{1,5}$", value)) or len(re.findall(r"[/\\]", value)) >= 2


_MIN_NAMES = 20
"""Distinct values from which a column named ``...name`` without a person's word in it (a Class Name of twenty
levels is a category; a product_name of hundreds may name a person) is taken for names."""


def _why_left_out(name: Any, col: pd.Series, nums: pd.Series | None) -> str | None:
    """Why a column that is not the text, author or document is not inferred as a field (None: it is one)."""
    parts = _name_parts(name)
    named = next((p for p in parts if p in _DIRECT_IDENTIFIER_PARTS), None)
    if named is None and {"name", "names"} & set(parts):
        distinct = n_distinct(col)
        if set(parts) & set(_PERSON_PARTS) or (distinct >= _MIN_NAMES and distinct >= 0.1 * len(col)):
            named = "name"
    if named is not None:
        return (
            f"named like a direct identifier ('{named}'): left out, so that no release carries it in clear; "
            "give it a role to keep it"
        )
    values = col.dropna().iloc[:2000].astype(str)
    if nums is None and len(values) and values.str.contains(_LINK_OR_EMAIL, case=False).mean() >= 0.5:
        return "its values hold e-mail addresses or links (direct identifiers): left out; give it a role to keep it"
    if _normalized(name) in _AUTHOR_NAMES:
        return (
            "named like the author column, but no author has two records: a person's identifier, left out; "
            "choose it as the author column, or give it a role, to keep it"
        )
    if n_distinct(col) <= 1 and len(col) > 1:
        return "the same value in every record: nothing to protect or to keep"
    if nums is None and len(values) and values.str.strip().map(_is_file_path).mean() >= 0.5:
        return "file paths, which often name where a record came from (a company, a person): give it a role to keep it"
    return None


def _singles_out(col: pd.Series, nums: pd.Series | None) -> str | None:
    """Why a column of strings that differ in every record (twenty or more) is left out; None for any other."""
    present = int(col.notna().sum())
    if nums is None and present >= _MIN_NAMES and n_distinct(col) == present:
        return (
            f"one value per record ({present:,} different): it singles records out like an identifier; give it a "
            "role to keep it (sensitive, for the swap to protect it)"
        )
    return None


_MIN_FREE_TEXT_VALUES = 20
"""Different values from which a column written in words may be free text by their number alone."""
_FREE_TEXT_SHARE = 0.1
"""The share of the text column's different values that a column's different values reach as free text."""
_NEW_WORDS = 0.1
"""The share of the words of a column's different values (of those read) that differ, from which it is written
rather than put together from a few labels."""


def _free_text(col: pd.Series, text_values: int, sample: int = 2000) -> bool:
    """Whether a column besides the text reads as free text (`Schema.other_text`). Of its values that are
    strings (at least half of them; up to ``sample`` read):

    - written in words: at least half hold two words or more, and the median value two words of letters or more
      (not a code, a single word or a date such as "09 4, 2015");
    - varied as writing is: at least half of the values differ and the median holds three words of letters (a
      sentence), or at least `_MIN_FREE_TEXT_VALUES` differ, they number at least `_FREE_TEXT_SHARE` of the
      text column's different values ``text_values`` (a review's title: 1,011 titles for 5,269 reviews; not a
      time zone: 85 zones for 14,427 tweets, nor a neighbourhood: 221 for 47,905 listings), and at least
      `_NEW_WORDS` of the words of the different values differ (a review's summaries: 423 words in 1,308; not a
      product's size and colour put together from a few labels, "Big Boys: Blue/Orange": 83 in 1,578).
    """
    strings = is_str(col)
    if strings.sum() == 0 or strings.sum() < 0.5 * col.notna().sum():
        return False
    values = col[strings].iloc[:sample].astype(str)
    words = values.str.split().str.len()
    lettered = values.str.count(_LETTER_WORD)
    if words.ge(2).mean() < 0.5 or lettered.median() < 2:
        return False
    if values.nunique() >= 0.5 * len(values) and lettered.median() >= 3:
        return True
    different = n_distinct(col[strings])
    if different < _MIN_FREE_TEXT_VALUES or different < _FREE_TEXT_SHARE * text_values:
        return False
    words_of = pd.Series(values.unique()).str.lower().str.findall(_LETTER_WORD)
    return len({w for ws in words_of for w in ws}) >= _NEW_WORDS * words_of.str.len().sum()


_RATING_WORDS = frozenset("overall rating ratings rated stars star score scores grade grades".split())
"""Words of a column name that make its numbers a rating."""
_RATING_TOP = (4, 10)
"""The lowest and highest top of a rating scale (1–4 to 0–10)."""


def _rating_like(name: Any, nums: pd.Series | None) -> bool:
    """Whether a field's numbers are a rating, which a reviewer would not want tied to them (role "sensitive"):
    numbers named as one (overall, rating, stars, score, grade), or whole numbers, not named as counts or
    amounts, on a scale from 0 or 1 to between 4 and 10 (`_RATING_TOP`: 1–5, 1–7, 0–10) of which at least three
    points are used."""
    if nums is None:
        return False
    words = set(_name_parts(name))
    if words & _RATING_WORDS:
        return True
    present = nums.dropna()
    if len(present) == 0 or words & (_COUNT_WORDS | _AMOUNT_WORDS) or not (present == np.floor(present)).all():
        return False
    low, high = float(present.min()), float(present.max())
    return present.nunique() >= 3 and low in (0, 1) and _RATING_TOP[0] <= high <= _RATING_TOP[1]


def _name_parts(name: Any) -> list[str]:
    """The words of a column name, lower case: split at spaces, punctuation and case changes (reviewerID →
    reviewer, id; IPAddress → ip, address)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", str(name).strip())
    return [p for p in re.split(r"[^a-z0-9]+", spaced.lower()) if p]


def _numeric_view(col: pd.Series) -> pd.Series | None:
    """Numbers of a numeric column, or of a string column whose every value parses as a number; else None."""
    if pd.api.types.is_bool_dtype(col):
        return None
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    present = col[col.notna()]
    if len(present) == 0 or not is_str(present).all():
        if len(present) == 0 or not present.map(lambda v: isinstance(v, (str, int, float))).all():
            return None
    if numbers(present.iloc[:100]).isna().any():  # cheap early exit for text columns
        return None
    nums = numbers(col)
    return nums if nums.notna().sum() == len(present) else None


def _mean_length(col: pd.Series) -> float:
    """Mean length in characters, counting missing and non-string values as 0."""
    if len(col) == 0:
        return 0.0
    return float(col.where(is_str(col), "").astype(str).str.len().mean())


def _infer_text_column(frame: pd.DataFrame, numeric: dict[Any, pd.Series | None]) -> Any:
    """The free-text column, or a `DataError` asking for a schema when no column is surely the text.

    A candidate is a string column (at least half of its values) that is not number-like, not named like an
    identifier, a path or an address, and reads like prose (`_reads_like_prose`). A column named like the
    text that fails this is never passed over silently for another column: the steward is asked instead."""
    strings = [c for c in frame.columns if numeric[c] is None and is_str(frame[c]).mean() >= 0.5]
    candidates = [c for c in strings if not _identifier_name(c) and _reads_like_prose(frame[c])]
    # in the order of `_TEXT_NAMES` (a tweet's "text" before its author's profile "description"), not the file's
    named = sorted(
        (c for c in frame.columns if _normalized(c) in _TEXT_NAMES), key=lambda c: _TEXT_NAMES.index(_normalized(c))
    )
    lengths = {c: _mean_length(frame[c]) for c in candidates}
    for c in named:
        if c in candidates and lengths[c] >= _MIN_PREFERRED_TEXT_LENGTH:
            return c
    if named and not any(c in candidates for c in named):
        c = named[0]
        raise DataError(
            f"the column '{c}' is named like the text but {_why_not_text(frame[c], numeric[c])}; "
            f"{TEXT_COLUMN_ADVICE}; columns: {_column_list(frame)}"
        )
    if not candidates:
        raise DataError(
            "no column reads like free text (every column is empty, numeric, an identifier, a path or an address, "
            f"or holds single words); {TEXT_COLUMN_ADVICE}; columns: {_column_list(frame)}"
        )
    return max(candidates, key=lambda c: lengths[c])  # max keeps the first of equal lengths


_IDENTIFIER_PARTS = ("id", "ids", "path", "file", "filename", "url", "uri", "link", "href", "email", "handle")
_LETTER_WORD = r"\b[^\W\d_]{2,}\b"
"""A word of two or more letters (of any alphabet)."""
_PATH_OR_ADDRESS = r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\S*[/\\]\S*|\S+@\S+\.\S+"


def _identifier_name(name: Any) -> bool:
    """Named like an identifier, a path or an address (user_id, source_path, URL, ...), or like the document
    column. (Author columns are not excluded by name: a listing's ``name`` is its title; screen names and
    personal names fail `_reads_like_prose` instead.)"""
    norm = _normalized(name)
    return norm in _DOCUMENT_NAMES or any(p in _IDENTIFIER_PARTS for p in _name_parts(name))


def _reads_like_prose(col: pd.Series, sample: int = 2000) -> bool:
    """Most values (of up to ``sample``) hold two or more words, the median value three or more of which two are
    words of letters (so a column of personal names, of labels such as "Entire home/apt" or of dates such as
    "05 16, 2018" is not prose), and are not a path, URL or e-mail address."""
    values = col[is_str(col)].iloc[:sample].astype(str)
    if len(values) == 0:
        return False
    words = values.str.split().str.len()
    lettered = values.str.count(_LETTER_WORD)
    address = values.str.strip().str.fullmatch(_PATH_OR_ADDRESS, case=False).mean()
    return bool(words.ge(2).mean() >= 0.5 and words.median() >= 3 and lettered.median() >= 2 and address < 0.5)


def _why_not_text(col: pd.Series, nums: pd.Series | None) -> str:
    if col.isna().all() or (is_str(col) & col.astype(str).str.strip().ne("")).sum() == 0:
        return "it is empty"
    if nums is not None:
        return "it holds numbers"
    if is_str(col).mean() < 0.5:
        return "most of its values are not text"
    return "most of its values are single words, names, paths or addresses, not prose"


def _column_list(frame: pd.DataFrame, most: int = 12) -> str:
    names = [str(c) for c in frame.columns[:most]]
    return ", ".join(names) + (f" and {len(frame.columns) - most} more" if len(frame.columns) > most else "")


def _named_column(frame: pd.DataFrame, names: tuple[str, ...], exclude: set[Any], repeating: bool) -> str | None:
    for c in frame.columns:
        if c in exclude or _normalized(c) not in names:
            continue
        if frame[c].isna().any():
            continue  # a missing id would merge unrelated records; validation rejects it
        if not repeating or n_distinct(frame[c]) < len(frame):
            return str(c)
    return None


_AMOUNT_WORDS = frozenset(
    "price prices amount amounts cost costs fee fees salary income revenue revenues spend spending payment "
    "payments wage wages rent rate usd eur gbp dollars euros".split()
)
"""Words of a column name that make whole numbers an amount ("nightly_rate": 109, 172, …), not a count."""
_COUNT_WORDS = frozenset(
    "count counts number num total days nights times followers friends likes favourites favorites retweets "
    "reviews listings visits views clicks orders".split()
)
"""Words of a column name that make a few whole numbers a count ("retweet_count": 0, 1, 2), not categories."""


def _infer_kind(col: pd.Series, nums: pd.Series | None) -> FieldKind | None:
    """The kind of a field: text is categorical; whole numbers with at most `_MAX_CATEGORICAL_INTEGERS` values
    (ratings) too, unless the name says they count or cost something; numbers with gaps none (they cannot be
    modelled as counts or amounts); a name of `_AMOUNT_WORDS` continuous; whole numbers ≥ 0 a count."""
    if nums is None:
        return "categorical"
    present = nums.dropna()
    integral = bool((present == np.floor(present)).all())
    words = set(_name_parts(col.name))
    named = bool(words & (_COUNT_WORDS | _AMOUNT_WORDS))
    if integral and present.nunique() <= _MAX_CATEGORICAL_INTEGERS and (not named or nums.isna().any()):
        return "categorical"
    if nums.isna().any():
        return None
    if words & _AMOUNT_WORDS:
        return "continuous"
    if integral and present.min() >= 0:
        return "count"
    return "continuous"
