"""What spaCy's entity recognizer finds that is no identifier: an allow list, and dates that point nowhere.

The small English model labels "IBAN", "SSN", "OMG" and "COVID-19" as organizations and "yesterday", "this
morning" or "2 hours" as dates and times. None of them narrows down a person, an organization or a day, and
replacing them costs the text its meaning ("Good [TIME]"). An entity is no identifier when every word of it is
in `ALLOWED_WORDS` (any case), or when it is a date or time with neither a digit, nor a month's or weekday's
name, nor a capitalized word (a holiday, "Christmas") in it, or a duration ("2 hours", "6hrs", "a week").
"""

from __future__ import annotations

import re

ALLOWED_WORDS = frozenset(
    """
    iban ssn ip ipv4 ipv6 dob id pin atm url wifi wi-fi faq ceo cfo coo cto q&a usd eur gbp vat gdpr
    omg lol lmao rofl smh tbh imo imho btw dm dms rt pls plz ok okay thx ty ngl idk fyi asap tl;dr
    company please thanks eps ebitda gaap non-gaap capex opex g&a sg&a r&d yoy q1 q2 q3 q4 fy
    covid covid-19 covid19 coronavirus flu
    good morning afternoon evening night tonight today tomorrow yesterday
    """.split()
)
"""Words that are never an identifier on their own: kinds of identifier and common acronyms, chat
abbreviations, accounting terms of earnings calls ("the Company", "EPS"), disease names, greetings and times of
day."""

_MONTH_OR_DAY = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\b", re.IGNORECASE
)
_DURATION = re.compile(
    r"^(?:about |around |over |almost |nearly |a |an |\d+(?:[.,]\d+)?\s?|few |several |couple of )*"
    r"(?:hrs?|hours?|mins?|minutes?|secs?|seconds?|days?|nights?|weeks?|months?|years?|yrs?|decades?)$",
    re.IGNORECASE,
)


_RELATIVE = frozenset("this last next the a an that every each one some early late mid".split())


def is_identifier(span: str, label: str) -> bool:
    """Whether an entity of ``label`` reading ``span`` is an identifier worth replacing (see the module)."""
    words = [w for w in (w.strip(".,!?:;\"'()") for w in span.split()) if w]
    if words and all(w.lower() in ALLOWED_WORDS for w in words):
        return False
    if label not in ("DATE", "TIME"):
        return True
    if _DURATION.match(span.strip()):
        return False
    first_is_name = bool(words) and words[0][:1].isupper() and words[0].lower() not in _RELATIVE
    return (
        any(c.isdigit() for c in span)
        or _MONTH_OR_DAY.search(span) is not None
        or first_is_name
        or any(w[:1].isupper() for w in words[1:])
    )
