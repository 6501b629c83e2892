"""The format recognizers: each on valid and invalid inputs, context words, thresholds."""

import pytest

from engine.errors import ConfigError
from engine.text.allow import is_identifier
from engine.text.entities import TIERS, find_identifiers, pattern_spans, resolve_overlaps, thresholds_for
from engine.text.recognizers import CONTEXT_BOOST, find_cards, luhn_valid, recognize


def kept(text: str, **thresholds: float) -> list[tuple[str, str]]:
    """(matched text, label) of what redaction would replace in ``text`` at these thresholds."""
    limits = thresholds or None
    return [(text[s:e], label) for s, e, label in resolve_overlaps(pattern_spans(text, limits))]


@pytest.mark.parametrize(
    "text, found",
    [
        ("call me 07700 900 123 tonight", "07700 900 123"),  # UK mobile, valid in GB's plan
        ("reach us on +44 20 7946 0958", "+44 20 7946 0958"),
        ("(555) 123-4567 is the desk", "(555) 123-4567"),  # North American format, 555 is no real area code
        ("call 1-800-864-8331 please", "1-800-864-8331"),
        ("call me at 467 3395", "467 3395"),  # a local number: kept because "call" announces it
        ("ring (37) 788-063 after six", "(37) 788-063"),
    ],
)
def test_phone_numbers_in_many_formats(text, found):
    assert (found, "PHONE") in kept(text)


@pytest.mark.parametrize(
    "text",
    ["flight 1234 delayed 3 hours", "order 20180312 arrived", "paid $1,234,567 today", "UA 5678 at 9:45", "467 3395"],
)
def test_numbers_that_are_no_phone_numbers_are_left(text):
    assert [label for _, label in kept(text)] == []


def test_card_numbers_need_the_luhn_check():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert kept("card 4111 1111 1111 1111 exp 09/27") == [("4111 1111 1111 1111", "CREDIT_CARD")]
    assert kept("paid with 5500-0000-0000-0004 ok") == [("5500-0000-0000-0004", "CREDIT_CARD")]
    # valid-looking, fails Luhn: not a card (and not a phone number either)
    assert kept("card 4111 1111 1111 1112 exp") == []
    assert list(find_cards("4111111111111112")) == []


def test_a_luhn_valid_number_of_no_known_issuer_needs_a_context_word():
    number = "7992739871300"  # 13 digits, Luhn-valid, no issuer starts with 7
    assert luhn_valid(number)
    assert kept(f"ref {number}") == []
    assert kept(f"my card {number}") == [(number, "CREDIT_CARD")]


def test_ibans_are_checked_by_their_country_length_and_mod_97():
    assert kept("iban DE89 3704 0044 0532 0130 00 THANKS") == [("DE89 3704 0044 0532 0130 00", "IBAN")]
    assert kept("send to GB82WEST12345698765432.") == [("GB82WEST12345698765432", "IBAN")]
    assert kept("send to GB82WEST12345698765433.") == []  # one digit changed: the check fails


def test_social_security_numbers_are_validated_and_bare_ones_need_context():
    assert kept("my ssn is 123-45-6789") == [("123-45-6789", "US_SSN")]
    assert kept("number 123 45 6789 here", PHONE=1.0) == [("123 45 6789", "US_SSN")]
    # 666 and 9xx areas, group 00 and serial 0000 are never issued
    for invalid in ("666-45-6789", "912-45-6789", "123-00-6789", "123-45-0000"):
        assert all(label != "US_SSN" for _, label in kept(f"ssn {invalid}")), invalid
    assert kept("id 123456789 ok") == []
    assert kept("my ssn 123456789 ok") == [("123456789", "US_SSN")]


def test_ip_addresses_v4_and_v6_are_parsed():
    text = "from 192.168.1.20 and 999.1.1.1 and 2001:db8::8a2e:370:7334 at 10:30:45"
    assert kept(text) == [("192.168.1.20", "IP_ADDRESS"), ("2001:db8::8a2e:370:7334", "IP_ADDRESS")]
    assert kept("version 01.02.03.04") == []  # leading zeros: no address


def test_street_addresses_and_title_case_phrases():
    assert kept("I live at 123 Main Street, Apt 4B now") == [("123 Main Street, Apt 4B", "STREET_ADDRESS")]
    assert kept("left at 42 W 34th St.") == [("42 W 34th St.", "STREET_ADDRESS")]
    assert kept("waited 3 Hours On The Way home") == []
    assert kept("During 2016 CapEx is up") == []  # not a German "…ring 2016" nor an island ("Is")


def test_hashtags_that_are_numbers_are_no_identifiers():
    assert kept("#15 and #1 in line #fail") == [("#fail", "HASHTAG")]


def test_context_words_raise_confidence_and_thresholds_decide():
    (plain,) = [c for s, e, label, c in recognize("467 3395") if label == "PHONE"]
    (announced,) = [c for s, e, label, c in recognize("call 467 3395") if label == "PHONE"]
    assert announced == pytest.approx(plain + CONTEXT_BOOST)
    assert kept("467 3395", PHONE=plain) == [("467 3395", "PHONE")]  # a threshold at its confidence keeps it
    assert kept("(555) 123-4567", PHONE=0.95) == []


def test_the_most_confident_of_two_readings_of_one_span_wins():
    text = "my ssn is 123-45-6789"
    assert {label for s, e, label, c in recognize(text)} == {"US_SSN", "PHONE"}  # also a possible phone number
    assert kept(text, PHONE=0.3) == [("123-45-6789", "US_SSN")]  # both kept by their thresholds; SSN is surer


def test_thresholds_are_checked():
    assert thresholds_for({"PHONE": 0.3})["PHONE"] == 0.3
    with pytest.raises(ConfigError, match="no identifier type 'FOO'; the types are .*PHONE"):
        thresholds_for({"FOO": 0.3})
    with pytest.raises(ConfigError, match="between 0 and 1"):
        thresholds_for({"PHONE": 1.5})


@pytest.mark.parametrize(
    "text, address",
    [
        (
            "adress is 9 Anderson Ridge, South Sallyville, WA0 4NQ if ur looking",
            "9 Anderson Ridge, South Sallyville, WA0 4NQ",
        ),
        (
            "1600 Pennsylvania Avenue NW, Washington, DC 20500 is white",
            "1600 Pennsylvania Avenue NW, Washington, DC 20500",
        ),
        ("update my address to Budigstraße 47/40. thanks", "Budigstraße 47/40"),
        (
            "on 10, boulevard de Letellier, 01510 Sainte Roger for a week",
            "10, boulevard de Letellier, 01510 Sainte Roger",
        ),
    ],
)
def test_street_addresses_with_their_town_and_postcode(text, address):
    assert kept(text) == [(address, "STREET_ADDRESS")]


def test_dates_that_exist_in_numeric_and_named_forms():
    text = "on 25/12/2019, 2019-12-25, 31.02.2020, 3/5 and 7/4/21; May 19, 2020, may 5, july 26th, Feb 30"
    found = [text[s:e] for s, e, label, c in recognize(text) if label == "DATE"]
    # 31 February does not exist; 3/5 has no year; "may 5" may be the verb; 30 February does not exist
    assert found == ["25/12/2019", "2019-12-25", "7/4/21", "May 19, 2020", "july 26th"]
    assert TIERS["DATE"] == 4  # a date found by a pattern is replaced at the level spaCy's dates are


def test_a_speaker_label_is_a_person_and_a_role_is_not():
    text = "Anjali Aggarwal: thank you.\nOperator: next question\nUnidentified Analyst: hi"
    assert [(text[s:e], label) for s, e, label, c in recognize(text) if label == "PERSON"] == [
        ("Anjali Aggarwal", "PERSON")
    ]


@pytest.mark.parametrize(
    "span, label, expected",
    [
        ("IBAN", "ORG", False),
        ("COVID-19", "ORG", False),
        ("OMG", "ORG", False),
        ("Delta", "ORG", True),
        ("yesterday", "DATE", False),
        ("this morning", "TIME", False),
        ("2 hours", "TIME", False),
        ("6hrs", "TIME", False),
        ("last year", "DATE", False),
        ("Monday", "DATE", True),
        ("July 4th", "DATE", True),
        ("2017", "DATE", True),
        ("Christmas", "DATE", True),
        ("9:45", "TIME", True),
    ],
)
def test_entities_that_are_no_identifiers(span, label, expected):
    assert is_identifier(span, label) is expected


def test_the_allow_list_applies_to_spacys_entities():
    spans = find_identifiers(["Good morning! My IBAN was rejected yesterday, Anna Schmidt said on Monday."])
    found = dict(zip(spans["original"], spans["label"]))
    assert "Anna Schmidt" in found and found.get("Monday") == "DATE"
    assert not {"morning", "IBAN", "yesterday"} & set(found)
