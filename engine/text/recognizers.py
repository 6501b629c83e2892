"""Recognizers for the identifiers that have a format, each found by a pattern and confirmed by a validator.

A pattern proposes candidates; a validator from a maintained library decides: phone numbers through
``phonenumbers`` (the Python port of Google's libphonenumber), card numbers through the Luhn check and the
issuers' number ranges, IBANs and US social security numbers through ``python-stdnum``, IP addresses through
the standard library's ``ipaddress``. A candidate that fails its validator is not an identifier of that kind
(a sixteen-digit number failing Luhn is not a card). Each accepted span carries a confidence in [0, 1]: how
sure the format alone makes us, raised by `CONTEXT_BOOST` when a word that announces that kind of identifier
("call", "ssn", "iban", ...) stands within `CONTEXT_CHARS` characters before it. Redaction keeps a span when
its confidence reaches its type's threshold (`DEFAULT_THRESHOLDS`).

Without a validator from a library: dates (a calendar check), street addresses (a tested pattern set), speaker
labels at the start of a line, URLs, e-mail addresses, @handles and #hashtags (patterns).

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
    "PHONE": tuple(
        "call phone tel telephone mobile cell number no text whatsapp fax ring reach contact dial ph".split()
    ),
    "CREDIT_CARD": tuple("card credit debit visa mastercard amex cc charged cvv".split()),
    "US_SSN": tuple("ssn social security ss# ss".split()),
    "IBAN": tuple("iban account bank transfer wire sepa".split()),
    "IP_ADDRESS": tuple("ip address server host router ipv4 ipv6 from".split()),
}


def _context_words(label: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in CONTEXT[label]) + r")(?!\w)", re.IGNORECASE)


_CONTEXT_RX = {label: _context_words(label) for label in CONTEXT}


def with_context(text: str, start: int, label: str, base: float) -> float:
    """``base``, raised by `CONTEXT_BOOST` (up to 1) when a context word of ``label`` precedes ``start``."""
    before = text[max(0, start - CONTEXT_CHARS) : start]
    # rounded: 0.6 + 0.3 is 0.8999999999999999 in floating point, below a threshold of 0.9 a steward sets
    return round(min(1.0, base + CONTEXT_BOOST), 6) if _CONTEXT_RX[label].search(before) else base


# ---- phone numbers -----------------------------------------------------------------------------------------

PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "AU")
PHONE_POSSIBLE_REGIONS = ("US", "GB")
"""Numbering plans a number written without a country code is tried in (one with a code is read as written):
whether it is a valid number in any of `PHONE_REGIONS`, whether it only has a possible length in one of
`PHONE_POSSIBLE_REGIONS` (each plan tried costs a pass over the text)."""
PHONE_MIN_DIGITS = 7
_DIGIT_RUN = re.compile(r"\d(?:[\s().+/-]{0,3}\d){6,}")
PHONE_VALID, PHONE_FORMATTED, PHONE_POSSIBLE = 0.7, 0.6, 0.35
_PHONE_FORMAT = re.compile(r"^(?:\+\d{1,3}[\s.-]?|1[\s.-])?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}$|^\+\d")


def find_phones(text: str) -> Iterator[Found]:
    """Phone numbers: valid in one of `PHONE_REGIONS`' plans (confidence `PHONE_VALID`); else of a possible
    length and written as North American numbers are, ``(555) 123-4567``, ``555-123-4567``, or with a country
    code (`PHONE_FORMATTED`); else of a possible length with at least `PHONE_MIN_DIGITS` digits and some
    separator (`PHONE_POSSIBLE`: "467 3395" needs a word such as "call" before it to be kept at the default
    threshold). A bare run of digits that is no valid number is a date, an order or a flight number."""
    if _DIGIT_RUN.search(text) is None:  # no seven digits close together: no phone number to look for
        return
    import phonenumbers
    from phonenumbers import Leniency, PhoneNumberMatcher

    best: dict[tuple[int, int], float] = {}
    passes = [(region, Leniency.VALID) for region in PHONE_REGIONS]
    passes += [(region, Leniency.POSSIBLE) for region in PHONE_POSSIBLE_REGIONS]
    for region, leniency in passes:
        for match in PhoneNumberMatcher(text, region, leniency=leniency):
            raw = match.raw_string
            if sum(c.isdigit() for c in raw) < PHONE_MIN_DIGITS:
                continue
            if leniency == Leniency.VALID:
                base = PHONE_VALID
            elif raw.isdigit() and not phonenumbers.is_valid_number(match.number):
                continue
            else:
                base = PHONE_FORMATTED if _PHONE_FORMAT.match(raw) else PHONE_POSSIBLE
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


_DIGIT = re.compile(r"\d")


def find_cards(text: str) -> Iterator[Found]:
    """Card numbers: 13–19 digits, in groups separated by one space or hyphen or none, passing the Luhn check;
    `CARD_KNOWN_ISSUER` when the number starts as Visa, Mastercard, American Express, Discover, Diners, JCB,
    UnionPay or Maestro numbers do, else `CARD_OTHER`."""
    if _DIGIT.search(text) is None:  # most texts: no digit, nothing to look for (the same for IBANs and SSNs)
        return
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

    if _DIGIT.search(text) is None:
        return
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

    if _DIGIT.search(text) is None:
        return
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
    if _DIGIT.search(text) is None and ":" not in text:  # neither form can be there
        return
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
# Street suffixes: USPS Publication 28's primary street suffix names (Appendix C1) and their usual
# abbreviations, written here once.
_STREET_TYPES = "|".join(
    sorted(
        set(
            """alley avenue bayou beach bend bluff bottom boulevard branch bridge brook burg bypass camp canyon cape
            causeway center circle cliff club common corner course court cove creek crescent crest crossing
            crossroad curve dale dam divide drive estate estates expressway extension fall falls ferry field fields
            flat flats ford forest forge fork forks fort freeway garden gardens gateway glen green grove harbor
            haven heights highway hill hills hollow inlet island isle junction key knoll knolls lake lakes landing
            lane light lights loaf lock locks lodge loop mall manor meadow meadows mews mill mills mission motorway
            mount mountain neck orchard oval overpass park parkway pass passage path pike pine pines place plain
            plains plaza point points port prairie radial ramp ranch rapids rest ridge river road route row run
            shoal shoals shore shores skyway spring springs spur square station stravenue stream street summit
            terrace throughway trace track trafficway trail tunnel turnpike underpass union valley via viaduct
            view views village ville vista walk wall way ways well wells close gate wharf
            aly ave av blvd br brg byp cir ct cv cres crst dr expy ext fwy gdns hts hwy holw jct ln lndg mnr mdws
            mtn pkwy pl pln plz pt rd rdg rte sq st sta ter trl tpke vw vlg wy""".split()
        ),
        key=len,
        reverse=True,
    )
)
_STREET = re.compile(
    r"(?<![\w-])\d{1,6}[A-Za-z]?,?(?: [NSEW]\.?| North| South| East| West)?"
    r"(?: (?:[A-Z][A-Za-z'-]+|\d{1,3}(?:st|nd|rd|th))){1,3} (?i:" + _STREET_TYPES + r")\b\.?"
    r"(?: (?:N|S|E|W|NE|NW|SE|SW)\b)?(?:,? (?i:apt\.?|apartment|suite|ste\.?|unit|flat|#) ?\w{1,6})?"
)
# Continental forms: "Budigstraße 47/40", "Stumpfstr. 28", "53, rue Da Costa", "10, boulevard de Letellier".
_STREET_DE = re.compile(
    r"(?<![\w-])[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|weg|allee|platz|gasse|damm|ufer|chaussee)"
    r" \d{1,4}[a-z]?(?:\s?[/-]\s?\d{1,4}[a-z]?)?(?!\w)"
)
_STREET_FR = re.compile(
    r"(?<![\w-])\d{1,4}(?: ?(?:bis|ter))?,? (?i:rue|avenue|boulevard|bd|allée|allee|chemin|place|impasse|quai"
    r"|route|cours|voie|passage|square) (?:(?:de la|de l'|du|des|de|la|le|l'|d')\s?)?[A-ZÉÈ][\w'-]+"
    r"(?: (?:de |du |des |la |le )?[A-ZÉÈ][\w'-]+){0,3}"
)
# What may follow a street: ", Williamsview, RM6M 4QH", ", Springfield, IL 62704", ", 01510 Sainte Roger".
_LOCALITY = re.compile(
    r",? (?:(?:[A-Z][\w'-]+ ){0,3}[A-Z][\w'-]+,? (?:[A-Z]{2} )?(?:\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})"
    r"|\d{5} (?:[A-Z][\w'-]+)(?: [A-Z][\w'-]+){0,2}|[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})(?!\w)"
)
_NOT_STREET_NAMES = frozenset("on the of and to in at for my our your a an is was".split())
"""Words that make a title-cased phrase ("3 Hours On The Way") no street name."""
CERTAIN, STREET_ADDRESS = 0.9, 0.6


# ---- dates ------------------------------------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?:[0-3]?\d)(?:st|nd|rd|th)?"
_NUMERIC_DATE = re.compile(r"(?<![\d/.-])(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})(?![\d/-]|\.\d)")
_NAMED_DATE = re.compile(
    rf"(?<!\w)(?:(?P<m1>{_MONTH})\.? (?P<d1>{_DAY})(?:,? (?P<y1>\d{{4}}))?"
    rf"|(?P<d2>{_DAY}) (?:of )?(?P<m2>{_MONTH})\.?(?:,? (?P<y2>\d{{4}}))?)(?!\w)",
    re.IGNORECASE,
)
DATE_NUMERIC, DATE_NAMED = 0.7, 0.6


def _real_date(year: int, month: int, day: int) -> bool:
    import datetime

    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def find_dates(text: str) -> Iterator[Found]:
    """Calendar dates that exist: numeric (2019-12-25, 25/12/2019, 12.25.19, in year-month-day, month-day-year
    or day-month-year order) at `DATE_NUMERIC`, and with a month's name ("May 19", "july 26th", "26th of July
    2020") at `DATE_NAMED`; "may 5" in lower case, possibly the verb, is left to the entity recognizer."""
    for m in _NUMERIC_DATE.finditer(text):
        a, b, c = (int(g) for g in m.group(1, 3, 4))
        if len(m.group(1)) == 4:
            orders = [(a, b, c)]
        elif len(m.group(4)) in (2, 4) and len(m.group(1)) <= 2:
            year = c if c >= 100 else 2000 + c
            orders = [(year, a, b), (year, b, a)]
        else:
            continue
        if any(_real_date(*o) for o in orders):
            yield m.start(), m.end(), DATE_NUMERIC
    for m in _NAMED_DATE.finditer(text):
        month_word = m.group("m1") or m.group("m2")
        if month_word == "may":
            continue
        day = int(re.match(r"\d+", m.group("d1") or m.group("d2")).group())  # type: ignore[union-attr]
        year = int(m.group("y1") or m.group("y2") or 2000)
        if _real_date(year, _MONTHS[month_word[:3].lower()], day):
            yield m.start(), m.end(), DATE_NAMED


# ---- speaker labels ---------------------------------------------------------------------------------------

_SPEAKER = re.compile(r"(?m)^[ \t]*([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){1,3}):(?=\s)")
_NOT_SPEAKERS = frozenset(
    "operator unidentified unknown analyst speaker session remarks question answer presentation conference call "
    "participants company executives disclaimer note customer agent support service team".split()
)
SPEAKER = 0.8


def find_speakers(text: str) -> Iterator[Found]:
    """Names labelling a turn at the start of a line, ``Anjali Aggarwal: thank you`` (two to four capitalized
    words and a colon), unless a word says it is a role ("Operator", "Unidentified Analyst")."""
    for m in _SPEAKER.finditer(text):
        if not _NOT_SPEAKERS.intersection(w.lower() for w in m.group(1).split()):
            yield m.start(1), m.end(1), SPEAKER


def _matches(rx: re.Pattern[str], confidence: float, needs: str = "") -> Callable[[str], Iterator[Found]]:
    """Every match of ``rx`` at ``confidence``; a text without ``needs`` (a character every match holds) is
    passed over at once."""

    def find(text: str) -> Iterator[Found]:
        if needs and needs not in text:
            return
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
    """Street addresses, a tested pattern set rather than a parser: a house number, one to three capitalized
    words or an ordinal (none of them a word such as "On" or "The"), a USPS street suffix ("Street", "Ave",
    "Hollow", ...) and an optional apartment or suite; German "…straße 12/3" and French "12, rue …" forms;
    each with the town and postcode that follow it (US ZIP, UK postcode, French code postal)."""
    for rx in (_STREET, _STREET_DE, _STREET_FR):
        for m in rx.finditer(text):
            if rx is _STREET and _NOT_STREET_NAMES.intersection(w.lower() for w in m.group().split()[1:-1]):
                continue
            locality = _LOCALITY.match(text, m.end())
            yield m.start(), locality.end() if locality else m.end(), STREET_ADDRESS


RECOGNIZERS: dict[str, Callable[[str], Iterator[Found]]] = {
    "URL": _matches(URL_PATTERN, CERTAIN),
    "EMAIL": _matches(_EMAIL, CERTAIN, needs="@"),
    "PHONE": find_phones,
    "HANDLE": _matches(_HANDLE, CERTAIN, needs="@"),
    "HASHTAG": find_hashtags,
    "CREDIT_CARD": find_cards,
    "IBAN": find_ibans,
    "US_SSN": find_ssns,
    "IP_ADDRESS": find_ips,
    "STREET_ADDRESS": find_streets,
    "DATE": find_dates,
    "PERSON": find_speakers,
}
"""The format recognizers, by the label they give; each yields (start, end, confidence)."""

DEFAULT_THRESHOLDS: dict[str, float] = {label: 0.5 for label in RECOGNIZERS}
"""The confidence a span of each label needs to be replaced, unless the steward sets another."""


RULES_VERSION = 3  # 2: a recurring name inside a longer span of a higher tier is found (engine.text.recurrence);
# 3: a confidence raised by context words is rounded (0.6 + 0.3 reaches a threshold of 0.9)
"""Raised whenever a recognizer's pattern, confidence or context words change (fit-cache keys)."""


def recognizers_version() -> str:
    """What decides the recognizers' spans, for fit-cache keys: our rules and the validators' versions."""
    from importlib.metadata import version

    return f"rules {RULES_VERSION}, phonenumbers {version('phonenumbers')}, python-stdnum {version('python-stdnum')}"


def recognize(text: str) -> list[tuple[int, int, str, float]]:
    """(start, end, label, confidence) of every candidate every recognizer accepts in ``text``, overlapping
    ones included (`engine.text.entities.resolve_overlaps` chooses)."""
    return [(s, e, label, c) for label, find in RECOGNIZERS.items() for s, e, c in find(text)]
