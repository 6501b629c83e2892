"""Names of organizations and people as they recur in text: their variants and how they match.

A name also appears without a legal suffix (Inc., Corporation, plc, …), without a leading "The", without
middle initials and without the one initial before a first and a last name ("C. Kelly Wall"); a short
all-capital string (a ticker or an acronym, up to five letters) matches only in capitals, so the ticker "ON"
does not take the word "on"; any other string matches in any case. An organization is also named by its first
word where that word is distinctive ("Lincoln" of "Lincoln National Corporation", not "American" of "American
Express"). A one-character name (the tickers A, C, F and T) is no variant at all: it cannot be told from the
article "A" or from "Q&A".
"""

from __future__ import annotations

import functools
import re

LEGAL_SUFFIXES = (
    "incorporated",
    "inc",
    "corporation",
    "corp",
    "company",
    "co",
    "limited",
    "ltd",
    "plc",
    "llc",
    "lp",
    "ag",
    "sa",
    "nv",
    "se",
    "holdings",
    "group",
)
_SUFFIX = re.compile(r"[\s,]+(?:" + "|".join(LEGAL_SUFFIXES) + r")\.?$", re.IGNORECASE)
_INITIAL = re.compile(r"(?<=\w) (?:[A-Z]\. )+(?=\w)")  # middle initials between two names
_LEADING_INITIAL = re.compile(r"^[A-Z]\. (?=[A-Z][\w'-]+ [A-Z][\w'-]+$)")  # "C. Kelly Wall" goes by Kelly Wall


def name_variants(name: str) -> list[str]:
    """``name``, and the same without trailing legal suffixes, without a leading "The" and without middle
    initials ("Douglas A. Lindsay" is also "Douglas Lindsay"), or the one initial before a first and a last
    name ("C. Kelly Wall" is also "Kelly Wall"); none of one character (module docstring)."""
    out, current = [name.strip()], name.strip()
    while (shorter := _SUFFIX.sub("", current)) != current and shorter:
        current = shorter.strip(" ,")
        out.append(current)
    out += [v[4:] for v in list(out) if v.lower().startswith("the ") and len(v) > 4]
    out += [_INITIAL.sub(" ", v) for v in list(out) if _INITIAL.search(v)]
    out += [_LEADING_INITIAL.sub("", v) for v in list(out) if _LEADING_INITIAL.search(v)]
    return list(dict.fromkeys(v for v in out if len(v) > 1))


GENERIC_WORDS = frozenset(
    """
    a an the and of for at in on by to new old great big best first second third one two three united
    american america americas national international global world worldwide general universal standard
    north south east west northern southern eastern western central mid midwest southwest southeast northwest
    northeast pacific atlantic gulf coastal continental royal federal public state county city community
    citizens people peoples farmers merchants capital financial finance bank banc trust union mutual security
    securities insurance investment investors fund funds realty property properties real estate group
    holdings partners associated allied consolidated integrated diversified applied advanced automatic
    electronic electric digital data systems technology technologies tech health healthcare medical life
    power energy oil gas water home homes service services industrial industries resources enterprise
    enterprises products media communications entertainment express premier prime summit golden silver
    green blue red black white star sun main apartment apartments mobile minerals mineral tractor dollar
    discovery mid-america pan-american trans-american universal chemical materials steel motor motors foods
    food brands stores air airlines semiconductor software networks instruments devices hotels restaurants
    """.split()
)
"""Words that begin many a company's name and are no name alone ("American", "General", "First", "National",
"Group"): the first word of such a name is not one of its variants (`company_variants`)."""


def company_variants(name: str) -> list[str]:
    """`name_variants` of an organization's name, and its first word alone where the name (without legal
    suffixes and a leading "The") has two words or more and the first is distinctive: a capitalized word of
    three letters or more, not one of `GENERIC_WORDS` ("Lincoln National Corporation" is also "Lincoln";
    "American Express Company" is not "American"). A call or a post names a company by that word as often as
    by its full name."""
    out = name_variants(name)
    if not out:
        return out
    short = min(out, key=len)
    words = short.split()
    first = words[0].rstrip(",") if len(words) >= 2 else ""
    if (
        len(first) >= 3
        and first[0].isupper()
        and re.fullmatch(r"[A-Za-z][A-Za-z'&.-]*[A-Za-z]", first)
        and first.lower() not in GENERIC_WORDS
    ):
        out.append(first)
    return list(dict.fromkeys(out))


HONORIFICS = ("Mr.", "Mr", "Mrs.", "Mrs", "Ms.", "Ms", "Dr.", "Dr")
"""How a transcript addresses a person by surname ("Thank you, Mr. Kirk")."""
_NAME_SUFFIX = re.compile(r"^(?:jr|sr|ii|iii|iv|cpa|phd|ph\.d|md|esq)\.?$", re.IGNORECASE)


def person_variants(name: str) -> list[str]:
    """`name_variants` of a person's name, and the surname after each honorific ("Douglas A. Lindsay, Jr." is
    also "Mr. Lindsay", "Ms. Lindsay", …): the surname alone is not a variant, as it may be a word ("Wall")."""
    out = name_variants(name)
    words = [w for w in name.replace(",", " ").split() if w]
    while len(words) > 2 and _NAME_SUFFIX.match(words[-1]):
        words.pop()
    if len(words) >= 2 and len(words[-1]) > 1 and words[-1][0].isalpha():
        out += [f"{honorific} {words[-1]}" for honorific in HONORIFICS]
    return list(dict.fromkeys(out))


def variants_under(label: str, name: str) -> list[str]:
    """The variants of an identifier listed under ``label``: a person's (`person_variants`) where the label names
    people (`names_people`), else an organization's (`company_variants`)."""
    return person_variants(name) if names_people(label) else company_variants(name)


@functools.lru_cache(maxsize=2**16)
def identifier_pattern(value: str) -> re.Pattern[str]:
    """Whole-word matches of ``value``; exact case for a short all-capital string (a ticker), else any case.
    Kept (compiled patterns do not change): a check over a release asks for one per record, more than `re`'s
    own cache of 512 holds, and compiling them again took four fifths of the Protect page's view of a value."""
    exact = len(value) <= 5 and value.isupper()
    return re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)", 0 if exact else re.IGNORECASE)


_IGNORECASE = int(re.IGNORECASE)  # an int: the flag's own ``&`` goes through `enum`, slower than the search


def mentions(text: str, value: str) -> bool:
    """Whether ``text`` holds ``value`` as `identifier_pattern` matches it. A substring test comes first, as
    most texts hold none of the names looked for: a match is a substring of ``text`` as written (exact case),
    or in lower case where both are ASCII (any case: there lower-casing is what `re` ignores; outside ASCII a
    letter may match one of another length, so the pattern alone decides)."""
    pattern = identifier_pattern(value)
    if not pattern.flags & _IGNORECASE:
        if value not in text:
            return False
    elif value.isascii() and text.isascii() and value.lower() not in text.lower():
        return False
    return pattern.search(text) is not None


PERSON_LABELS = ("executive", "person", "participant", "speaker", "author", "employee", "host")
"""Words that make a label of identifiers ("Executive", "participants") one whose strings name people."""


def names_people(label: str) -> bool:
    """Whether the identifiers under ``label`` name people (any label holding a word of `PERSON_LABELS`)."""
    return any(word in label.lower() for word in PERSON_LABELS)
