"""Likely duplicate registrations: which two patients may be one person, and why.

A pair is likely when both have the same national identifier (when both records hold one),
or the same birth date and (known) sex and names that are alike once case, accents, apostrophes and
hyphens are set aside: the same, given and family names swapped, one name part of the other
(a double-barrelled family name, a middle name), or close in spelling (Jaro-Winkler, the
measure record linkage uses for names, from rapidfuzz). Each pair says why in words, for
records staff who decide. Plain Python: no Django, no store.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from itertools import combinations

from rapidfuzz.distance import JaroWinkler

from patients.domain.errors import DomainError
from patients.domain.records import SEX_LABELS

SIMILAR = 0.88  # Jaro-Winkler similarity from which two folded names are "alike"
# Letters NFKD does not take apart, spelt as an English keyboard would type them.
_LETTERS = str.maketrans({"ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O",
                          "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D",
                          "þ": "th", "Þ": "TH", "ı": "i"})
_APOSTROPHES = re.compile(r"[’'ʼ`´‘]")
_SEPARATORS = re.compile(r"[^0-9A-Z]+")


class PairNotListed(DomainError):
    """The two patients are not (or no longer) listed as a possible duplicate (404)."""

    http_status = 404
    title = "Not a listed pair"
    problem_type = "pair-not-listed"


@dataclass(frozen=True)
class Person:
    """What the comparison needs of a registered patient."""

    patient_id: str
    family_name: str
    given_name: str
    birth_date: date
    sex: str
    national_id: str | None = None


@dataclass(frozen=True)
class LikelyPair:
    """Two patients who may be one person (``first`` < ``second`` by id) and why."""

    first: str
    second: str
    reasons: tuple[str, ...]

    @property
    def pair_id(self) -> str:
        return pair_id(self.first, self.second)


def pair_id(a: str, b: str) -> str:
    """One id for the pair whichever way round it is named."""
    first, second = sorted((a, b))
    return f"{first}.{second}"


def name_tokens(text: str) -> tuple[str, ...]:
    """A name's parts as compared: upper case, accents and apostrophes dropped, hyphens
    and spaces separating ("O'Brien-Núñez" → ("OBRIEN", "NUNEZ"))."""
    decomposed = unicodedata.normalize("NFKD", (text or "").translate(_LETTERS))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    plain = _APOSTROPHES.sub("", plain).upper()
    return tuple(t for t in _SEPARATORS.split(plain) if t)


def _alike(a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    """How two names (as tokens) are alike: "same", "part" (every part of one is in the
    other), "close" (spelt within :data:`SIMILAR`), or None."""
    if not a or not b:
        return None
    if a == b or "".join(a) == "".join(b):
        return "same"
    if set(a) <= set(b) or set(b) <= set(a):
        return "part"
    if JaroWinkler.normalized_similarity(" ".join(a), " ".join(b)) >= SIMILAR:
        return "close"
    return None


def _name(p: Person) -> str:
    return f"{p.family_name.upper()}, {p.given_name}"


def names_alike(a: Person, b: Person) -> str | None:
    """Why the two names may be one person's, in words; None when they are not alike."""
    fa, ga = name_tokens(a.family_name), name_tokens(a.given_name)
    fb, gb = name_tokens(b.family_name), name_tokens(b.given_name)
    family, given = _alike(fa, fb), _alike(ga, gb)
    if family == given == "same":
        if (a.family_name, a.given_name) == (b.family_name, b.given_name):
            return "Same name"
        return "Same name apart from case, accents or punctuation"
    if family and given:
        kinds = {family, given}
        if "close" in kinds:
            return f"Similar names: {_name(a)} and {_name(b)}"
        return f"One name is part of the other: {_name(a)} and {_name(b)}"
    if _alike(fa, gb) and _alike(ga, fb):
        return f"Given and family names swapped: {_name(a)} and {_name(b)}"
    return None


def _national(p: Person) -> str:
    return "".join(name_tokens(p.national_id or ""))


def match(a: Person, b: Person) -> tuple[str, ...]:
    """Why ``a`` and ``b`` may be one person, in words (empty: no reason to think so)."""
    reasons: list[str] = []
    if _national(a) and _national(a) == _national(b):
        reasons.append("Same national identifier")
    # An unknown sex (an unconscious arrival's) says nothing about being one person.
    if a.birth_date == b.birth_date and a.sex == b.sex and a.sex != "unknown":
        alike = names_alike(a, b)
        if alike is not None:
            sex = SEX_LABELS.get(a.sex, a.sex).lower()
            reasons.append(f"Same birth date ({a.birth_date.day} "
                           f"{a.birth_date:%B %Y}) and sex ({sex})")
            reasons.append(alike)
    return tuple(reasons)


def likely_pairs(people: Iterable[Person]) -> list[LikelyPair]:
    """Every likely pair among ``people`` (each pair once, ordered by id), with why."""
    found = []
    for a, b in combinations(sorted(people, key=lambda p: p.patient_id), 2):
        if a.patient_id == b.patient_id:
            continue
        reasons = match(a, b)
        if reasons:
            found.append(LikelyPair(a.patient_id, b.patient_id, reasons))
    return found
