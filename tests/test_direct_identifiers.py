"""Direct identifiers suppressed before the swap (Greve & Sablica, Section 3.1)."""

from __future__ import annotations

import pytest

from engine.protect.swap.identifiers import suppress_identifiers
from engine.text.names import identifier_pattern, mentions, name_variants, person_variants

IDENTIFIERS = {
    "Company Name": ["Automatic Data Processing, Inc.", "ADP"],
    "Executive": ["Carlos Rodriguez", "Jan Siegmund"],
}


def test_names_and_their_variants_tickers_executives_and_urls_are_replaced():
    text = (
        "Welcome to the Automatic Data Processing, Inc. call. At ADP, Carlos Rodriguez and Jan Siegmund speak; "
        "automatic data processing grew, ADP's clients too. See https://investors.adp.com/results. ADPX is not us."
    )
    out, replaced = suppress_identifiers(text, IDENTIFIERS)
    assert out == (
        "Welcome to the [Company Name] call. At [Company Name], [Executive 1] and [Executive 2] speak; "
        "[Company Name] grew, [Company Name]'s clients too. See [URL]. ADPX is not us."
    )
    assert ("[Executive 2]", "Jan Siegmund") in replaced and len(replaced) == 7


def test_short_capital_identifiers_match_only_in_capitals():
    out, _ = suppress_identifiers("ON said on Monday that ON grew.", {"Company Name": ["ON"]})
    assert out == "[Company Name] said on Monday that [Company Name] grew."


def test_variants_drop_legal_suffixes_and_a_leading_the():
    assert name_variants("The Coca-Cola Company") == [
        "The Coca-Cola Company",
        "The Coca-Cola",
        "Coca-Cola Company",
        "Coca-Cola",
    ]
    assert name_variants("Acme Holdings Corp.") == ["Acme Holdings Corp.", "Acme Holdings", "Acme"]


def test_middle_initials_are_optional():
    assert name_variants("Douglas A. Lindsay") == ["Douglas A. Lindsay", "Douglas Lindsay"]
    assert name_variants("C. Kelly Wall") == ["C. Kelly Wall", "Kelly Wall"]  # goes by the second name
    assert name_variants("J. M. Smucker Company")[-1] == "J. M. Smucker"  # initials of a company stay
    text, found = suppress_identifiers("Douglas Lindsay, our CEO.", {"Executive": ["Douglas A. Lindsay"]})
    assert text == "[Executive 1], our CEO." and found == [("[Executive 1]", "Douglas Lindsay")]


def test_a_person_is_also_suppressed_by_honorific_and_surname():
    """Transcripts address executives by surname ("Thank you, Mr. Kirk"); the surname alone stays a word."""
    assert person_variants("C. Kelly Wall")[:4] == ["C. Kelly Wall", "Kelly Wall", "Mr. Wall", "Mr Wall"]
    assert "Ms. Lindsay" in person_variants("Douglas A. Lindsay, Jr.") and person_variants("Madonna") == ["Madonna"]
    text, found = suppress_identifiers(
        "Thank you, Mr. Wall. Ms Wall agreed; the wall stands.", {"Executive": ["C. Kelly Wall"]}
    )
    assert text == "Thank you, [Executive 1]. [Executive 1] agreed; the wall stands."
    assert found == [("[Executive 1]", "Mr. Wall"), ("[Executive 1]", "Ms Wall")]
    company, _ = suppress_identifiers("Mr. Computer spoke.", {"Company Name": ["Apple Computer"]})
    assert company == "Mr. Computer spoke."  # a company's name has no honorific form


def test_a_one_letter_ticker_is_not_matched_where_it_is_an_article_or_q_and_a():
    """Agilent's ticker is "A": matched, it took "Q&A", "M&A" and every sentence-starting article."""
    text = "A developing market. After the Q&A and M&A remarks, Agilent Technologies, Inc. thanks you."
    out, replaced = suppress_identifiers(text, {"Company Name": ["Agilent Technologies, Inc.", "A"]})
    assert out == "A developing market. After the Q&A and M&A remarks, [Company Name] thanks you."
    assert name_variants("A") == [] and replaced == [("[Company Name]", "Agilent Technologies, Inc.")]


def test_columns_that_spell_out_the_protected_value_are_found_as_whole_words():
    import pandas as pd

    from engine.protect.swap.identifiers import spelling_out

    frame = pd.DataFrame(
        {
            "ticker": ["ADP", "ON", "A", "CSCO"],
            "path": ["x/20170201_ADP/t.txt", "x/20170202_ON/t.txt", "x/A/t.txt", "x/20170203_CSCO/t.txt"],
            "word": ["ADPX", "on", "A", "CSCO-ish"],  # ADPX is not ADP; "on" is not ON; one letter never counts
            "date": ["2017-02-01", "2017-02-02", "2017-02-03", "2017-02-04"],
        }
    )
    assert spelling_out(frame, "ticker", ["path", "word", "date"]) == {"path": 3}


def test_a_company_is_also_named_by_its_distinctive_first_word_but_not_by_a_generic_one():
    """Issue 48: "Lincoln National Corporation" goes by "Lincoln" in its calls; "American", "General", "First" or
    "National" alone is no company's name, and a person's first name alone is no variant of the person."""
    from engine.text.names import company_variants, variants_under

    assert company_variants("Lincoln National Corporation") == [
        "Lincoln National Corporation",
        "Lincoln National",
        "Lincoln",
    ]
    assert company_variants("Agilent Technologies, Inc.")[-1] == "Agilent"
    for generic in ("American Express Company", "General Mills, Inc.", "First Solar, Inc.", "National Fuel Gas"):
        assert generic.split()[0] not in company_variants(generic), generic
    assert company_variants("Apple Inc.") == ["Apple Inc.", "Apple"]  # one word: the name itself
    assert "J." not in company_variants("J. M. Smucker Company")
    assert "Douglas" not in variants_under("Executive", "Douglas A. Lindsay")  # a person: no first name alone
    text, found = suppress_identifiers(
        "Lincoln grew its annuities; Lincoln National thanks you. A national bank did not.",
        {"Company Name": ["Lincoln National Corporation", "LNC"]},
    )
    assert text == "[Company Name] grew its annuities; [Company Name] thanks you. A national bank did not."
    assert found == [("[Company Name]", "Lincoln"), ("[Company Name]", "Lincoln National")]


@pytest.mark.parametrize(
    "text, value",
    [
        ("Thanks @JetBlue for nothing", "@jetblue"),  # any case
        ("jetblue, again", "JetBlue"),
        ("Flew JetBlueAir today", "JetBlue"),  # not a whole word
        ("AAL is up, aal is not a ticker", "AAL"),  # a ticker: exact case
        ("aal only", "AAL"),
        ("Straße Müller sagt", "müller"),  # outside ASCII the pattern alone decides
        ("Ingrid İnce spoke", "iNCE"),
        ("the Kelvin sign \u212a is no k", "K"),
        ("", "Ann"),
    ],
)
def test_a_mention_is_what_the_identifier_pattern_finds(text, value):
    """The substring test before the pattern never changes its answer (case, whole words, tickers, non-ASCII)."""
    assert mentions(text, value) == (identifier_pattern(value).search(text) is not None)
