"""Direct identifiers of the protected metadata suppressed before any swap (Greve & Sablica, Section 3.1): the
company's name and its variants, its ticker, the executives named in the call, and web addresses, replaced by
"[Company Name]", "[Executive 1]", … and "[URL]".

The steward gives, per document, the strings that identify it under a label (e.g. {"Company Name": ["Automatic
Data Processing, Inc.", "ADP"], "Executive": ["Carlos Rodriguez"]}); they can come from the data's own columns.
Each name also matches without a legal suffix (Inc., Corporation, plc, …) and without a leading "The". Matches
are whole words; a short all-capital string (a ticker or an acronym, up to five letters) matches only in
capitals, so the ticker "ON" does not take the word "on"; any other string matches in any case. Longer strings
are replaced first. Labels whose strings should be told apart (executives) are numbered in the order given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from engine.text.names import identifier_pattern, name_variants
from engine.text.recognizers import URL_PATTERN

NUMBERED = ("Executive",)
"""Labels whose strings are numbered ("[Executive 1]", "[Executive 2]"): each executive stays one person."""
_URL = URL_PATTERN


def _url_end(text: str, match: re.Match[str]) -> int:
    """A web address ends before the punctuation that ends its sentence."""
    end = match.end()
    while end > match.start() + 1 and text[end - 1] in ".,;:!?)":
        end -= 1
    return end


def suppress_identifiers(text: str, identifiers: Mapping[str, Sequence[str]]) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with every direct identifier replaced (module docstring); also the (label, original) of each
    replacement, in order of appearance."""
    targets: list[tuple[str, str]] = []
    for label, values in identifiers.items():
        for k, value in enumerate(values, start=1):
            tag = f"[{label} {k}]" if label in NUMBERED else f"[{label}]"
            targets += [(variant, tag) for variant in name_variants(value)]
    targets.sort(key=lambda t: -len(t[0]))
    found: list[tuple[int, int, str]] = [(m.start(), _url_end(text, m), "[URL]") for m in _URL.finditer(text)]
    for value, tag in targets:
        for m in identifier_pattern(value).finditer(text):
            if not any(m.start() < end and start < m.end() for start, end, _ in found):
                found.append((m.start(), m.end(), tag))
    found.sort()
    pieces, replaced, last = [], [], 0
    for start, end, tag in found:
        pieces += [text[last:start], tag]
        replaced.append((tag, text[start:end]))
        last = end
    return "".join(pieces) + text[last:], replaced
