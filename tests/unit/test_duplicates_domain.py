"""Likely duplicate pairs: names as people write them, and the reasons given in words."""

from __future__ import annotations

from datetime import date

import pytest

from patients.domain.duplicates import (
    LikelyPair,
    Person,
    likely_pairs,
    match,
    name_tokens,
    pair_id,
)

BORN = date(1980, 5, 1)


def person(pid: str, family: str, given: str, *, born: date = BORN, sex: str = "female",
           national_id: str | None = None) -> Person:
    return Person(pid, family, given, born, sex, national_id)


@pytest.mark.parametrize(("text", "tokens"), [
    ("García", ("GARCIA",)),
    ("O'Brien", ("OBRIEN",)),
    ("O’Brien", ("OBRIEN",)),  # a typographic apostrophe, as phones type it
    ("Müller-Lüdenscheidt", ("MULLER", "LUDENSCHEIDT")),
    ("Straße", ("STRASSE",)),
    ("  Søren  Ærø ", ("SOREN", "AERO")),
    ("Łukasz", ("LUKASZ",)),
    ("Ńguyễn", ("NGUYEN",)),
    ("ＡＮＡ", ("ANA",)),  # full-width letters
    ("", ()),
])
def test_it_folds_names_as_compared(text: str, tokens: tuple[str, ...]) -> None:
    assert name_tokens(text) == tokens


LIKELY = [
    # (first family, first given, second family, second given, the name reason)
    ("García", "Ana", "GARCIA", "ana", "Same name apart from case, accents or punctuation"),
    ("García", "Ana", "García", "Ana", "Same name"),
    ("Strauß", "Jürgen", "Strauss", "Jurgen",
     "Same name apart from case, accents or punctuation"),
    ("O'Brien", "Siobhán", "OBrien", "Siobhan",
     "Same name apart from case, accents or punctuation"),
    ("Smith-Jones", "Mary", "Smith Jones", "Mary",
     "Same name apart from case, accents or punctuation"),
    ("García López", "Ana", "García", "Ana",
     "One name is part of the other: GARCÍA LÓPEZ, Ana and GARCÍA, Ana"),
    ("Müller", "Anna", "Mueller", "Anna", "Similar names: MÜLLER, Anna and MUELLER, Anna"),
    ("Smith", "Katherine", "Smyth", "Catherine",
     "Similar names: SMITH, Katherine and SMYTH, Catherine"),
    ("Nguyen", "Thi Mai", "Nguyen", "Mai",
     "One name is part of the other: NGUYEN, Thi Mai and NGUYEN, Mai"),
    ("Wei", "Zhang", "Zhang", "Wei", "Given and family names swapped: WEI, Zhang and ZHANG, Wei"),
    ("Kowalska", "Łucja", "Lucja", "Kowalska",
     "Given and family names swapped: KOWALSKA, Łucja and LUCJA, Kowalska"),
]


@pytest.mark.parametrize(("fa", "ga", "fb", "gb", "why"), LIKELY)
def test_it_pairs_alike_names_of_one_birth_date_and_sex(fa: str, ga: str, fb: str, gb: str,
                                                         why: str) -> None:
    reasons = match(person("a", fa, ga), person("b", fb, gb))
    assert reasons == ("Same birth date (1 May 1980) and sex (female)", why)


UNLIKELY = [
    ("García", "Ana", "Fernández", "Ana"),  # another family
    ("García", "Ana", "García", "Beatriz"),  # a sister born the same day: asked to look
    ("Lee", "Ann", "Li", "Anh"),  # short names differing in a letter each are not alike
    ("Unknown", "Unknown", "García", "Ana"),  # an unconscious arrival: nothing to compare
]


@pytest.mark.parametrize(("fa", "ga", "fb", "gb"), UNLIKELY)
def test_it_does_not_pair_unlike_names(fa: str, ga: str, fb: str, gb: str) -> None:
    assert match(person("a", fa, ga), person("b", fb, gb)) == ()


def test_it_needs_the_same_birth_date_and_sex_for_names() -> None:
    ana = person("a", "García", "Ana")
    assert match(ana, person("b", "García", "Ana", born=date(1980, 5, 2))) == ()
    assert match(ana, person("b", "García", "Ana", sex="male")) == ()
    assert match(ana, person("b", "García", "Ana", sex="unknown")) == ()
    unknown = person("u", "Unknown", "Unknown", sex="unknown")  # two unconscious arrivals
    assert match(unknown, person("v", "Unknown", "Unknown", sex="unknown")) == ()


def test_it_pairs_the_same_national_identifier_whatever_the_names() -> None:
    a = person("a", "García", "Ana", national_id="12 345 678-Z")
    b = person("b", "Unknown", "Unknown", born=date(2000, 1, 1), sex="unknown",
               national_id="12345678z")
    assert match(a, b) == ("Same national identifier",)
    assert match(a, person("c", "García", "Ana", national_id="87654321X"))[0].startswith(
        "Same birth date")  # another identifier does not hide alike names
    assert match(person("a", "X", "Y", national_id=""), person("b", "Z", "W",
                                                              national_id="")) == ()


def test_it_lists_each_pair_once_ordered_by_id() -> None:
    people = [person("c", "GARCIA", "ana"), person("a", "García", "Ana"),
              person("b", "García", "Beatriz"), person("d", "Gárcia", "Ana")]
    pairs = likely_pairs(people)
    assert [(p.first, p.second) for p in pairs] == [("a", "c"), ("a", "d"), ("c", "d")]
    assert all(isinstance(p, LikelyPair) and p.reasons for p in pairs)
    assert pairs[0].pair_id == pair_id("c", "a") == "a.c"
    assert likely_pairs([person("a", "García", "Ana")]) == []
