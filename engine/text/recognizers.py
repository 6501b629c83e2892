"""Recognizers for the identifiers that have a format, each found by a pattern and confirmed by a validator.

A pattern proposes candidates; a validator from a maintained library decides: phone numbers through
``phonenumbers`` (the Python port of Google's libphonenumber), card numbers through the Luhn check and the
issuers' number ranges, IBANs and US social security numbers through ``python-stdnum``, IP addresses through
the standard library's ``ipaddress``. A candidate that fails its validator is not an identifier of that kind
(a sixteen-digit number failing Luhn is not a card). Each accepted span carries a confidence in [0, 1]: how
sure the format alone makes us, raised by `CONTEXT_BOOST` when a word that announces that kind of identifier
("call", "ssn", "iban", ...) stands within `CONTEXT_CHARS` characters before it. Redaction keeps a span when
its confidence reaches its type's threshold (`DEFAULT_THRESHOLDS`).

The confidences are ours, set by what each validator proves: a number valid in a national numbering plan is
more likely a phone than one that only has a phone number's length. They are not calibrated probabilities.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

Found = tuple[int, int, float]  # start, end, confidence

CONTEXT_CHARS = 40
CONTEXT_BOOST = 0.3

# Words announcing a kind of identifier, matched whole and in any case in the characters before a candidate.
CONTEXT: dict[str, tuple[str, ...]] = {
    "PHONE": (
        "call",
        "phone",
        "tel",
        "telephone",
        "mobile",
        "cell",
        "number",
        "no",
        "text",
        "whatsapp",
        "fax",
        "ring",
        "reach",
        "contact",
        "dial",
        "ph",
    ),
    "CREDIT_CARD": ("card", "credit", "debit", "visa", "mastercard", "amex", "cc", "charged", "cvv"),
    "US_SSN": ("ssn", "social", "security", "ss#", "ss"),
    "IBAN": ("iban", "account", "bank", "transfer", "wire", "sepa"),
    "IP_ADDRESS": ("ip", "address", "server", "host", "router", "ipv4", "ipv6", "from"),
}


def _context_words(label: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in CONTEXT[label]) + r")(?!\w)", re.IGNORECASE)


_CONTEXT_RX = {label: _context_words(label) for label in CONTEXT}


def with_context(text: str, start: int, label: str, base: float) -> float:
    """``base``, raised by `CONTEXT_BOOST` (up to 1) when a context word of ``label`` precedes ``start``."""
    before = text[max(0, start - CONTEXT_CHARS) : start]
    return min(1.0, base + CONTEXT_BOOST) if _CONTEXT_RX[label].search(before) else base


# ---- phone numbers -----------------------------------------------------------------------------------------

PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU")
"""Numbering plans a number written without a country code is tried in (one with a code is read as written)."""
PHONE_MIN_DIGITS = 7
PHONE_VALID, PHONE_FORMATTED, PHONE_POSSIBLE = 0.7, 0.6, 0.35
_PHONE_FORMAT = re.compile(r"^(?:\+\d{1,3}[\s.-]?|1[\s.-])?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}$|^\+\d")


def find_phones(text: str) -> Iterator[Found]:
    """Phone numbers: valid in one of `PHONE_REGIONS`' plans (confidence `PHONE_VALID`); else of a possible
    length and written as North American numbers are, ``(555) 123-4567``, ``555-123-4567``, or with a country
    code (`PHONE_FORMATTED`); else of a possible length with at least `PHONE_MIN_DIGITS` digits and some
    separator (`PHONE_POSSIBLE`: "467 3395" needs a word such as "call" before it to be kept at the default
    threshold). A bare run of digits that is no valid number is a date, an order or a flight number."""
    if not any(c.isdigit() for c in text):
        return
    import phonenumbers
    from phonenumbers import Leniency, PhoneNumberMatcher

    best: dict[tuple[int, int], float] = {}
    for region in PHONE_REGIONS:
        for leniency, base in ((Leniency.VALID, PHONE_VALID), (Leniency.POSSIBLE, PHONE_POSSIBLE)):
            for match in PhoneNumberMatcher(text, region, leniency=leniency):
                digits = sum(c.isdigit() for c in match.raw_string)
                if digits < PHONE_MIN_DIGITS:
                    continue
                if base == PHONE_POSSIBLE:
                    if match.raw_string.isdigit() and not phonenumbers.is_valid_number(match.number):
                        continue
                    if _PHONE_FORMAT.match(match.raw_string):
                        base = PHONE_FORMATTED
                key = (match.start, match.end)
                best[key] = max(best.get(key, 0.0), base)
    for (start, end), base in best.items():
        yield start, end, with_context(text, start, "PHONE", base)


# ---- card numbers ------------------------------------------------------------------------------------------

_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_ISSUERS = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|64[4-9]|65|62|5[06-9]|6[0-9])")
CARD_KNOWN_ISSUER, CARD_OTHER = 0.7, 0.4


def luhn_valid(digits: str) -> bool:
    """The Luhn check every payment card number satisfies (ISO/IEC 7812-1)."""
    from stdnum import luhn

    return luhn.is_valid(digits)


def find_cards(text: str) -> Iterator[Found]:
    """Card numbers: 13–19 digits, in groups separated by one space or hyphen or none, passing the Luhn check;
    `CARD_KNOWN_ISSUER` when the number starts as Visa, Mastercard, American Express, Discover, Diners, JCB,
    UnionPay or Maestro numbers do, else `CARD_OTHER`."""
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            base = CARD_KNOWN_ISSUER if _ISSUERS.match(digits) else CARD_OTHER
            yield m.start(), m.end(), with_context(text, m.start(), "CREDIT_CARD", base)


# ---- IBANs -------------------------------------------------------------------------------------------------

_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![a-z0-9])")
IBAN_VALID = 0.9


def find_ibans(text: str) -> Iterator[Found]:
    """International bank account numbers, written whole or in groups of four: the longest prefix of a
    candidate that `stdnum.iban` accepts (the country's length and format, and the ISO 7064 mod 97-10 check)."""
    from stdnum import iban

    for m in _IBAN.finditer(text):
        candidate = m.group()
        groups = candidate.split(" ")
        for k in range(len(groups), 0, -1):
            value = " ".join(groups[:k])
            if iban.is_valid(value):
                yield m.start(), m.start() + len(value), with_context(text, m.start(), "IBAN", IBAN_VALID)
                break


# ---- US social security numbers ----------------------------------------------------------------------------

_SSN_GROUPED = re.compile(r"(?<![\d-])\d{3}([- ])\d{2}\1\d{4}(?![\d-])")
_SSN_BARE = re.compile(r"(?<![\d-])\d{9}(?![\d-])")
SSN_GROUPED, SSN_BARE = 0.5, 0.2


def find_ssns(text: str) -> Iterator[Found]:
    """US social security numbers that `stdnum.us.ssn` accepts (no 000, 666 or 9xx area, no 00 group, no 0000
    serial, none of the numbers published as examples): ``123-45-6789`` or ``123 45 6789`` at `SSN_GROUPED`,
    nine bare digits at `SSN_BARE` (kept only after a word such as "ssn" at a threshold above it)."""
    from stdnum.us import ssn

    for rx, base in ((_SSN_GROUPED, SSN_GROUPED), (_SSN_BARE, SSN_BARE)):
        for m in rx.finditer(text):
            if ssn.is_valid(re.sub(r"\D", "", m.group())):
                yield m.start(), m.end(), with_context(text, m.start(), "US_SSN", base)


# ---- IP addresses ------------------------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]|\.\d)")
_IPV6 = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])")
IP_V4, IP_V6 = 0.6, 0.7


def find_ips(text: str) -> Iterator[Found]:
    """IPv4 addresses in dotted-quad form and IPv6 addresses that `ipaddress` parses (no part above 255, no
    leading zeros); an IPv6 candidate needs at least two groups of hex digits (so "10:30:45" is a time)."""
    for m in _IPV4.finditer(text):
        try:
            ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        yield m.start(), m.end(), with_context(text, m.start(), "IP_ADDRESS", IP_V4)
    for m in _IPV6.finditer(text):
        value = m.group()
        if sum(1 for g in value.split(":") if g) < 2 or not re.search(r"[A-Fa-f]|::", value):
            continue
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            continue
        yield m.start(), m.end(), with_context(text, m.start(), "IP_ADDRESS", IP_V6)


# ---- patterns without a validator --------------------------------------------------------------------------

URL_PATTERN = re.compile(r"(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_HANDLE = re.compile(r"(?<![\w@])@\w{1,50}")
_HASHTAG = re.compile(r"(?<![\w#&])#\w*[^\W\d]\w*")
_GLUED_HASHTAG = re.compile(r"#\w*[^\W\d]\w*")
_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|ter|parkway|"
    "pkwy|circle|cir|square|sq|highway|hwy|trail|trl|crescent|close|row|plaza|alley|loop|path|pike|run"
)
_STREET = re.compile(
    r"(?<![\w-])\d{1,6}[A-Za-z]?(?: [NSEW]\.?| North| South| East| West)?"
    r"(?: (?:[A-Z][A-Za-z'-]+|\d{1,3}(?:st|nd|rd|th))){1,3} (?i:" + _STREET_TYPES + r")\b\.?"
    r"(?:,? (?i:apt\.?|suite|ste\.?|unit|#) ?\w{1,6})?"
)
_NOT_STREET_NAMES = frozenset("on the of and to in at for my our your a an is was".split())
"""Words that make a title-cased phrase ("3 Hours On The Way") no street name."""
CERTAIN, STREET_ADDRESS = 0.9, 0.6


def _matches(rx: re.Pattern[str], confidence: float) -> Callable[[str], Iterator[Found]]:
    def find(text: str) -> Iterator[Found]:
        for m in rx.finditer(text):
            yield m.start(), m.end(), confidence

    find.__doc__ = f"Every match of {rx.pattern!r}, at confidence {confidence}."
    return find


def find_hashtags(text: str) -> Iterator[Found]:
    """#hashtags with at least one letter ("#15" is a number, not a tag); hashtags glued to the one before
    them (``#neptune#waivethefee``) are hashtags too."""
    for m in _HASHTAG.finditer(text):
        yield m.start(), m.end(), CERTAIN
        end = m.end()
        while (glued := _GLUED_HASHTAG.match(text, end)) is not None:
            yield glued.start(), glued.end(), CERTAIN
            end = glued.end()


def find_streets(text: str) -> Iterator[Found]:
    """Street addresses: a house number, one to three capitalized words or an ordinal (none of them a word
    such as "On" or "The"), a street type ("Street", "Ave", "Blvd", ...), and an optional apartment or suite;
    a tested pattern set, not a parser."""
    for m in _STREET.finditer(text):
        if not _NOT_STREET_NAMES.intersection(w.lower() for w in m.group().split()[1:-1]):
            yield m.start(), m.end(), STREET_ADDRESS


RECOGNIZERS: dict[str, Callable[[str], Iterator[Found]]] = {
    "URL": _matches(URL_PATTERN, CERTAIN),
    "EMAIL": _matches(_EMAIL, CERTAIN),
    "PHONE": find_phones,
    "HANDLE": _matches(_HANDLE, CERTAIN),
    "HASHTAG": find_hashtags,
    "CREDIT_CARD": find_cards,
    "IBAN": find_ibans,
    "US_SSN": find_ssns,
    "IP_ADDRESS": find_ips,
    "STREET_ADDRESS": find_streets,
}
"""The format recognizers, by the label they give; each yields (start, end, confidence)."""

DEFAULT_THRESHOLDS: dict[str, float] = {label: 0.5 for label in RECOGNIZERS}
"""The confidence a span of each label needs to be replaced, unless the steward sets another."""


RULES_VERSION = 1
"""Raised whenever a recognizer's pattern, confidence or context words change (fit-cache keys)."""


def recognizers_version() -> str:
    """What decides the recognizers' spans, for fit-cache keys: our rules and the validators' versions."""
    from importlib.metadata import version

    return f"rules {RULES_VERSION}, phonenumbers {version('phonenumbers')}, python-stdnum {version('python-stdnum')}"


def recognize(text: str) -> list[tuple[int, int, str, float]]:
    """(start, end, label, confidence) of every candidate every recognizer accepts in ``text``, overlapping
    ones included (`engine.text.entities.resolve_overlaps` chooses)."""
    return [(s, e, label, c) for label, find in RECOGNIZERS.items() for s, e, c in find(text)]
