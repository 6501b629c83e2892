"""A gold-annotated synthetic PII set for the detection benchmark (`benchmarks/bench_detection.py`).

Short user-generated texts (airline complaints, rental reviews, forum help requests, customer-service chats,
tweets) with one to three identifiers each, filled in by Faker (a well-kept fake-data library) in five locales,
every identifier recorded as [start, end, label] with exact character offsets. Runs in the benchmark's own
environment (Faker is no dependency of textsdc):

    benchmarks/.venv-detection/bin/python benchmarks/detection/pii_synthetic.py N SEED OUT.jsonl

Deterministic for a given Faker version: one random.Random(seed) chooses templates and formats, each locale's
Faker instance is seeded from it, and dates have fixed bounds (nothing depends on today). Faker's German and
Indian phone formats are implausible (``+49(0) 016613186``), so phone numbers follow our own per-locale
patterns most of the time; its en_US and en_IN IBANs are British, so IBANs come from seven European locales.
The template text holds no unlabelled names, places or companies; numbers such as "seat 14C", "port 443" and
"3/5" are left in as bait for false positives.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import re
import sys

from faker import Faker

LABELS = (
    "PERSON",
    "PHONE",
    "EMAIL",
    "CREDIT_CARD",
    "US_SSN",
    "IBAN",
    "IP_ADDRESS",
    "STREET_ADDRESS",
    "URL",
    "DATE",
    "LOCATION",
    "ORGANIZATION",
)

# Locales used for names / phones / addresses / cities / companies.
MAIN_LOCALES = ("en_US", "en_GB", "de_DE", "en_IN", "fr_FR")
# Extra locales used only for IBANs.  (Faker's en_US and en_IN bank providers
# fall back to GB IBANs, so they are not useful for IBAN variety.)
IBAN_LOCALES = ("de_DE", "fr_FR", "en_GB", "nl_NL", "es_ES", "it_IT", "pl_PL")
ALL_LOCALES = tuple(dict.fromkeys(MAIN_LOCALES + IBAN_LOCALES))

# ---------------------------------------------------------------------------
# Templates.  Placeholders: {LABEL}, {LABEL:kind}, {LABEL#n} (second slot of
# the same label).  Literal text deliberately contains no unlabeled names,
# places, companies, dates or other identifiers.  Some contain typos / slang
# on purpose; some have context words ("call me at", "ssn", "IBAN", "IP"),
# others have none.
# ---------------------------------------------------------------------------
TEMPLATES = (
    # --- airline complaints ---
    "worst airline ever. gate agent {PERSON} was so rude to me and nobody picks up at {PHONE}",
    "Lost my bag on the flight from {LOCATION} on {DATE}. still waiting... call me at {PHONE} if u find it",
    "been on hold 2 hours!! booking is under {PERSON}, email {EMAIL}, pls someone respond",
    "my flight to {LOCATION} got delayed 6hrs and {ORGANIZATION} refuses to refund. charged my card {CREDIT_CARD} twice!!",
    "Dear customer relations, I was charged twice on {DATE} for the same ticket. The card number was {CREDIT_CARD}.",
    "cancelled flight, rebooked to {LOCATION}, no hotel voucher. you can reach me on {PHONE} or {EMAIL}",
    "the flight attendant {PERSON} on the {DATE} red-eye deserves a raise honestly",
    "flew out of {LOCATION} yesterday and my luggage ended up in {LOCATION#2}. how is that even possible",
    "refund still not recieved for the booking on {DATE}. send it to {IBAN} like i asked 3 times already",
    "Complaint: seat 14C was broken, crew ignored me. Name {PERSON}, phone {PHONE}.",
    # --- rental reviews ---
    "Stayed at the apartment on {STREET_ADDRESS} for a week, host {PERSON} was super helpful!! 5 stars",
    "DO NOT RENT from {PERSON}. the place at {STREET_ADDRESS} had mold everywhere and they kept the deposit",
    "nice little flat in {LOCATION}, checkin was easy, host left his number {PHONE} for emergencies",
    "The cabin was great but the wifi kept dropping, router page said {IP_ADDRESS} was unreachable lol",
    "host asked us to pay the cleaning fee off-platform to {IBAN}... pretty sure thats a scam, reported",
    "we stayed {DATE} and loved it. {PERSON} even left us cookies. adress is {STREET_ADDRESS} if ur looking",
    "booked through {URL}, the photos were nothing like the real place. avoid.",
    "Great location close to the beach in {LOCATION}. Owner {PERSON} responds fast on {PHONE}",
    "3/5. apartment ok, noisy street. managed by {ORGANIZATION}, they never answered {EMAIL}",
    "rented a car from {ORGANIZATION} in {LOCATION} and they charged {CREDIT_CARD} for damage i didnt do",
    # --- forum help requests ---
    "Can't SSH into my server at {IP_ADDRESS} after the update, anyone seen this before?",
    "[help] getting connection refused from {IP_ADDRESS} on port 443, config below",
    "my router keeps assigning {IP_ADDRESS:v4} to two devices, how do i fix",
    "Anyone know if {URL} is legit? they want my ssn {US_SSN} to 'verify' lol",
    "how do I change the email on my account? old one is {EMAIL} and i cant login",
    "site {URL} throws 500 since {DATE}, logs show requests from IP {IP_ADDRESS}",
    "posting for my dad {PERSON}, his laptop got a popup saying call {PHONE} for tech support, is it a scam?",
    "ipv6 question: why does my box show {IP_ADDRESS:v6} and also a link-local one?",
    "Selling my old bike, pick up in {LOCATION}. text {PHONE}, no lowballers",
    "Lost wallet near {STREET_ADDRESS} yesterday, has ID for {PERSON}. pls dm",
    "Q: bank says IBAN {IBAN} is invalid but i copied it exactly?? what am i doing wrong",
    "got an email from {EMAIL} asking for my card number, is that phishing",
    # --- customer-service chats ---
    "agent: can I have the name on the account? me: {PERSON}",
    "Customer: hi, i need to update my address to {STREET_ADDRESS}. Agent: sure, can you confirm your date of birth? Customer: {DATE:dob}",
    "me: my card {CREDIT_CARD} got declined again. bot: I'm sorry to hear that!",
    "Hi, I'm {PERSON}, my ssn is {US_SSN} and I need a copy of my tax form",
    "chat transcript lol -> agent: phone number on file? me: {PHONE}. agent: that doesnt match",
    "please send the invoice to {EMAIL} and the payment to IBAN {IBAN}, thanks",
    "Support: what is the IP you're connecting from? Me: {IP_ADDRESS}",
    "can u cancel the order placed on {DATE}? its under {EMAIL}",
    "ive been trying to reach {ORGANIZATION} support for days. ticket opened by {PERSON}, no reply",
    "verified my identity w/ SSN {US_SSN} and they STILL locked the account",
    "rep asked for the last 4 but i gave the whole thing {CREDIT_CARD} oops",
    "customer {PERSON} called from {PHONE} re: missing package to {STREET_ADDRESS}",
    "SSN: {US_SSN} DOB: {DATE:dob} name: {PERSON}",
    "transfer didnt arrive. sent from {IBAN} on {DATE}, reference was my name {PERSON}",
    # --- tweets / social, mostly without context words ---
    "{PERSON} u still owe me 20 bucks",
    "happy bday {PERSON}!!! see u in {LOCATION} next month",
    "{PHONE} call me after 6",
    "moving to {LOCATION} in the fall, anyone hiring? {EMAIL}",
    "just got hired at {ORGANIZATION} \U0001f389 start on {DATE}",
    "{ORGANIZATION} is the worst employer in {LOCATION}, not even kidding",
    "party at {STREET_ADDRESS} saturday, bring snacks",
    "check out my new blog {URL}",
    "{EMAIL} dm me there instead",
    "omg ran into {PERSON} and {PERSON#2} at the mall",
    "who else got the scam text from {PHONE} saying their package is stuck",
    "{URL} <- this is the one i was talking about",
    "met {PERSON} from {ORGANIZATION} at the conference, super nice",
    "{DATE} was the best day of my life ngl",
    "wtf someone posted {US_SSN} in the group chat, delete that",
    "new phone who dis, save this {PHONE}",
    "ok so {CREDIT_CARD} is what they posted in the leak?? definately cancelling mine",
    "recieved a package adressed to {PERSON} at {STREET_ADDRESS}, not me tho",
)

_PLACEHOLDER = re.compile(r"\{([A-Z_]+)(?::([a-z0-9]+))?(?:#\d+)?\}")

# ---------------------------------------------------------------------------
# Phone formats: numerify patterns ('#' = 0-9, '%' = 1-9) per locale.  Faker's
# own phone_number() is also used for en_US (extension stripped), en_GB and
# fr_FR; for de_DE and en_IN Faker's output includes implausible strings such
# as '0018955597' / '+49(0) 016613186', so only curated patterns are used.
# ---------------------------------------------------------------------------
PHONE_PATTERNS = {
    "en_US": (
        "(%##) %##-####",
        "%##.%##.####",
        "%##-%##-####",
        "+1 %## %## ####",
        "+1-%##-%##-####",
        "1-%##-%##-####",
        "%##%######",
        "%## ####",
        "%##-####",
    ),
    "en_GB": (
        "07### ### ###",
        "07### ######",
        "+44 7### ######",
        "+44 20 #### ####",
        "020 #### ####",
        "+44 (0)20 #### ####",
        "01632 960###",
        "0161 ### ####",
    ),
    "de_DE": (
        "+49 30 ########",
        "030 #######",
        "0151 ########",
        "+49 151 ########",
        "+49 (0)89 #######",
        "089 / ######",
        "0176-########",
        "+4917%########",
    ),
    "en_IN": (
        "+91 9#### #####",
        "+91-9#########",
        "09#########",
        "9#### #####",
        "+91 22 #### ####",
        "011-########",
        "+91 8#########",
        "7#########",
    ),
    "fr_FR": (
        "06 ## ## ## ##",
        "+33 6 ## ## ## ##",
        "07.##.##.##.##",
        "01 ## ## ## ##",
        "+33 (0)1 ## ## ## ##",
        "06########",
    ),
}

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _ordinal(d: int) -> str:
    if 11 <= d % 100 <= 13:
        return f"{d}th"
    return f"{d}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th') }"


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _iban_ok(iban: str) -> bool:
    s = iban.replace(" ", "")
    s = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in s)) % 97 == 1


class _ValueMaker:
    """Produces surface strings for each label from seeded Faker instances."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.fk = {}
        for loc in ALL_LOCALES:  # fixed order -> fixed seeds
            f = Faker(loc)
            f.seed_instance(rng.getrandbits(64))
            self.fk[loc] = f

    def _loc(self, choices=MAIN_LOCALES) -> Faker:
        return self.fk[self.rng.choice(choices)]

    # -- individual labels -------------------------------------------------
    def PERSON(self, kind):
        f = self._loc()
        r = self.rng.random()
        if r < 0.6:
            v = f"{f.first_name()} {f.last_name()}"  # avoids titles/suffixes of name()
        elif r < 0.85:
            v = f.first_name()
        else:
            v = f"{f.first_name()} {f.last_name()[0]}."
        if self.rng.random() < 0.2:
            v = v.lower()
        return v

    def PHONE(self, kind):
        loc = self.rng.choice(MAIN_LOCALES)
        f = self.fk[loc]
        if loc in ("en_US", "en_GB", "fr_FR") and self.rng.random() < 0.35:
            v = f.phone_number()
            v = re.split(r"\s*x\d+$", v)[0]  # drop en_US extensions 'x1234'
        else:
            v = f.numerify(self.rng.choice(PHONE_PATTERNS[loc]))
        return v

    def EMAIL(self, kind):
        f = self._loc()
        r = self.rng.random()
        if r < 0.5:
            return f.email()
        if r < 0.8:
            return f.free_email()
        return f.company_email()

    def CREDIT_CARD(self, kind):
        f = self.fk["en_US"]
        num = f.credit_card_number()
        assert num.isdigit() and _luhn_ok(num), num
        r = self.rng.random()
        if r < 0.5 or len(num) < 13:
            return num
        sep = " " if r < 0.85 else "-"
        if len(num) in (14, 15):  # amex 4-6-5, diners 4-6-4
            groups = [num[:4], num[4:10], num[10:]]
        else:
            groups = [num[i : i + 4] for i in range(0, len(num), 4)]
        return sep.join(groups)

    def US_SSN(self, kind):
        v = self.fk["en_US"].ssn()
        r = self.rng.random()
        if r < 0.15:
            v = v.replace("-", "")
        elif r < 0.25:
            v = v.replace("-", " ")
        return v

    def IBAN(self, kind):
        f = self.fk[self.rng.choice(IBAN_LOCALES)]
        v = f.iban()
        assert _iban_ok(v), v
        if self.rng.random() < 0.4:  # printed form, groups of 4
            v = " ".join(v[i : i + 4] for i in range(0, len(v), 4))
        return v

    def IP_ADDRESS(self, kind):
        f = self.fk["en_US"]
        if kind is None:
            kind = "v6" if self.rng.random() < 0.3 else "v4"
        if kind == "v6":
            return f.ipv6()
        return f.ipv4_private() if self.rng.random() < 0.3 else f.ipv4_public()

    def STREET_ADDRESS(self, kind):
        f = self._loc()
        v = f.address() if self.rng.random() < 0.3 else f.street_address()
        # Faker addresses (and some en_GB / en_IN street addresses) contain '\n'
        v = ", ".join(re.sub(r"\s+", " ", p).strip() for p in v.splitlines() if p.strip())
        if self.rng.random() < 0.1:
            v = v.lower()
        return v

    def URL(self, kind):
        f = self.fk[self.rng.choice(("en_US", "en_GB", "de_DE", "fr_FR"))]
        r = self.rng.random()
        if r < 0.4:
            return f.url()
        if r < 0.75:
            return f.uri()
        return f"www.{f.domain_name()}/{f.slug()}"

    def DATE(self, kind):
        f = self.fk["en_US"]
        if kind == "dob":
            lo, hi = _dt.date(1950, 1, 1), _dt.date(2005, 12, 31)
        else:  # fixed bounds: no "today"
            lo, hi = _dt.date(2015, 1, 1), _dt.date(2024, 12, 31)
        d = f.date_between_dates(lo, hi)
        m = _MONTHS[d.month - 1]
        fmt = self.rng.randrange(10)
        return (
            f"{d.month:02d}/{d.day:02d}/{d.year}",
            f"{d.day:02d}/{d.month:02d}/{d.year}",
            f"{d.day:02d}.{d.month:02d}.{d.year}",
            d.isoformat(),
            f"{m} {d.day}, {d.year}",
            f"{d.day} {m} {d.year}",
            f"{m[:3]} {d.day}",
            f"{m.lower()} {_ordinal(d.day)}",
            f"{d.month}/{d.day}/{d.year % 100:02d}",
            f"{_ordinal(d.day)} of {m}",
        )[fmt]

    def LOCATION(self, kind):
        if self.rng.random() < 0.3:
            f = self.fk["en_US"]
            v = f.country()
            while "(" in v:  # skip 'Holy See (Vatican City State)' etc.
                v = f.country()
        else:
            v = self._loc().city().strip()  # en_IN has 'Khora ' (trailing space)
        if self.rng.random() < 0.15:
            v = v.lower()
        return v

    def ORGANIZATION(self, kind):
        f = self._loc(("en_US", "en_GB", "de_DE", "fr_FR", "en_IN"))
        v = f.company()
        if self.rng.random() < 0.1:
            v = v.lower()
        return v


def _render(template: str, vm: _ValueMaker) -> tuple[dict, list[str]]:
    parts, spans, values, pos = [], [], [], 0
    length = 0
    for m in _PLACEHOLDER.finditer(template):
        lit = template[pos : m.start()]
        parts.append(lit)
        length += len(lit)
        label, kind = m.group(1), m.group(2)
        value = getattr(vm, label)(kind)
        assert value and value == value.strip() and "\n" not in value, (label, value)
        spans.append([length, length + len(value), label])
        parts.append(value)
        values.append(value)
        length += len(value)
        pos = m.end()
    parts.append(template[pos:])
    text = "".join(parts)
    return {"text": text, "spans": spans}, values


def _self_check(rec: dict, values: list[str]) -> None:
    """Offsets must slice back exactly to the inserted values."""
    text, spans = rec["text"], rec["spans"]
    assert "\n" not in text
    assert 1 <= len(spans) <= 3 and len(spans) == len(values)
    prev_end = 0
    for i, (s, e, label) in enumerate(spans):
        assert label in LABELS
        assert prev_end <= s < e <= len(text), rec
        assert text[s:e] == values[i], (text[s:e], values[i])
        prev_end = e


def generate(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    vm = _ValueMaker(rng)
    out = []
    for _ in range(n):
        tpl = rng.choice(TEMPLATES)
        rec, values = _render(tpl, vm)
        _self_check(rec, values)
        out.append(rec)
    return out


def write_jsonl(records: list[dict], path: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: python generate.py N SEED OUT.jsonl", file=sys.stderr)
        return 2
    n, seed, out = int(argv[1]), int(argv[2]), argv[3]
    write_jsonl(generate(n, seed), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
