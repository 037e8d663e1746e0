"""Order checks: allergy history, allergy, dose and duplicate, run before an order is placed;
the check vocabulary the administration guards share; hard dose limits; override reasons.

Pure: the caller hands in the reference entries (medication, units, frequency), the
patient's allergies and allergy status and the admission's active orders;
:func:`check_order` returns every check that failed, as :class:`Conflict` values in a fixed
order (allergy status, allergy, dose, duplicate), at most one per check type. Whether a
conflict refuses the order is the use case's call: each one needs its own override reason
that :func:`reason_problem` accepts (:func:`unresolved`). A dose above a medication's hard
limit (:func:`hard_limits`) is no conflict: nobody may override it (:class:`DoseHardLimit`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from decimal import Decimal
from typing import Any

from patients.domain.errors import DomainError, InvalidInput
from patients.domain.orders import STATUS_LABELS, Order
from patients.domain.records import AllergyStatus
from patients.domain.units import convert, doses_per_day

ALLERGY_STATUS_UNKNOWN = "allergy-status-unknown"
ALLERGY_CONFLICT = "allergy-conflict"
DOSE_LIMIT = "dose-limit"
DUPLICATE_ORDER = "duplicate-order"
# The guards at the bedside, checked when a dose given is recorded (patients.domain.guards).
EARLY_DOSE = "early-dose"
DOSE_INTERVAL = "dose-interval"
DAILY_DOSE = "daily-dose"
# A dose recorded as not given before its time: the shift that should give it never sees it.
EARLY_NOT_GIVEN = "early-not-given"
# The PRN interval before it became dose-interval: a reason sent under it still counts.
PRN_INTERVAL = "prn-interval"
ORDER_CHECKS = (ALLERGY_STATUS_UNKNOWN, ALLERGY_CONFLICT, DOSE_LIMIT, DUPLICATE_ORDER)
DOSE_GUARDS = (EARLY_DOSE, DOSE_INTERVAL, DAILY_DOSE, EARLY_NOT_GIVEN)
# Every check type, in the order a refusal reports them (the first names the problem type).
CHECK_TYPES = (*ORDER_CHECKS, *DOSE_GUARDS, PRN_INTERVAL)
ALIASES = {PRN_INTERVAL: DOSE_INTERVAL}
CHECK_LABELS = {ALLERGY_STATUS_UNKNOWN: "Allergies not yet asked", ALLERGY_CONFLICT: "Allergy",
                DOSE_LIMIT: "Dose limit", DUPLICATE_ORDER: "Duplicate order",
                EARLY_DOSE: "Early dose", DOSE_INTERVAL: "Dose interval",
                DAILY_DOSE: "Daily dose", EARLY_NOT_GIVEN: "Not given ahead of time",
                PRN_INTERVAL: "PRN interval"}
# The problem type of a dose above a hard limit (not a check: it cannot be overridden).
DOSE_HARD_LIMIT = "dose-hard-limit"
HARD_LIMIT_FACTOR = Decimal(2)  # a hard limit not given is twice the maximum
# What an override reason needs to count: a reason, not a keystroke.
REASON_MIN_CHARACTERS = 10
REASON_MIN_WORDS = 2
REASON_MAX_CHARACTERS = 500

Entry = Mapping[str, Any]


@dataclass(frozen=True)
class Conflict:
    type: str  # one of CHECK_TYPES
    detail: str
    # Why the reason given for it did not count (:func:`reason_problem`); "" when none given.
    reason_refused: str = ""

    def as_dict(self) -> dict[str, str]:
        said = {"type": self.type, "detail": self.detail}
        if self.reason_refused:
            said["reason_refused"] = self.reason_refused
        return said


class DoseHardLimit(DomainError):
    """A dose, or a day's total, above the medication's hard limit: refused at prescribing
    and at the bedside alike, with no override (422, ``/api/v1/problems/dose-hard-limit``)."""

    http_status = 422
    title = "Dose above the hard limit"
    field = "dose"
    problem_type = DOSE_HARD_LIMIT


# ------------------------------------------------------------------ allergy status
def allergy_status_conflict(status: str | None) -> Conflict | None:
    """A medication ordered while nobody has asked about allergies (status unknown)."""
    if status != AllergyStatus.UNKNOWN:
        return None
    return Conflict(ALLERGY_STATUS_UNKNOWN, (
        "Allergies not yet asked: no allergy and no \"no known allergies\" is recorded, so "
        "this medication cannot be checked against them. Record the allergies first, or give "
        "a reason (an unconscious patient, an emergency)."))


# ------------------------------------------------------------------ allergy
def _words(text: str) -> list[str]:
    """Case- and accent-insensitive words; a trailing plural ``s`` does not count."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text or "")
                    if not unicodedata.combining(c)).casefold()
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w
            for w in re.split(r"[^0-9a-z]+", plain) if w]


def names_in_text(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (its words, in a row, as whole words)."""
    hay, needle = _words(text), _words(name)
    if not needle:
        return False
    return any(hay[i:i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


def _active(allergy: Entry) -> bool:
    return allergy.get("status", "active") == "active"


def _allergy_words(allergy: Entry) -> str:
    reaction = (allergy.get("reaction") or "").strip()
    severity = (allergy.get("severity") or "").strip()
    said = ", ".join(x for x in (reaction or "reaction not recorded", severity) if x)
    return f"{allergy.get('substance') or allergy.get('allergenCode')} ({said})"


def allergy_conflict(medication: Entry, allergies: Iterable[Entry],
                     allergen_names: Mapping[str, str] | None = None) -> Conflict | None:
    """Active allergies the medication meets: a coded allergen among its ingredients or
    classes, or a free-text (not checkable) allergy naming the drug, an ingredient or a class.
    """
    names = allergen_names or {}
    ingredients = list(medication.get("ingredients") or [])
    classes = list(medication.get("classes") or [])
    codes = set(ingredients) | set(classes)
    drug = medication.get("name") or medication.get("code") or ""
    found: list[str] = []
    for allergy in allergies:
        if not _active(allergy):
            continue
        code = allergy.get("allergenCode")
        if allergy.get("checkable") and code:
            if code in codes:
                how = "contains" if code in ingredients else "belongs to"
                found.append(f"{_allergy_words(allergy)}: {drug} {how} "
                             f"{names.get(code, allergy.get('substance') or code)}")
            continue
        text = allergy.get("substance") or ""
        named = [n for n in (drug, *(names.get(c, c) for c in (*ingredients, *classes)))
                 if n and names_in_text(text, n)]
        if named:
            found.append(f"{_allergy_words(allergy)}, recorded as free text, names {named[0]}")
    if not found:
        return None
    return Conflict(ALLERGY_CONFLICT, f"Allergy recorded: {'; '.join(found)}.")


# ------------------------------------------------------------------ dose
def _amount(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def dose_conflict(medication: Entry, dose: Decimal, unit: Entry, dose_unit: Entry | None,
                  frequency: Entry | None) -> Conflict | None:
    """A dose above the medication's single or daily maximum, in its dose unit.

    A unit of another dimension than the dose unit raises ``UnitMismatch`` (422): that is a
    wrong order, not a warning one can override.
    """
    if dose_unit is None:
        return None  # a medication without a coded dose unit has no limits to check
    amount = convert(dose, unit, dose_unit)
    code = dose_unit.get("code", "")
    drug = medication.get("name") or medication.get("code")
    given = f"{_amount(dose)} {unit.get('code', '')}"
    same = unit.get("code") == code
    found: list[str] = []
    single = medication.get("maxSingleDose")
    if single is not None and amount > Decimal(str(single)):
        found.append(f"a single dose of {given}{'' if same else f' ({_amount(amount)} {code})'}"
                     f" is above the maximum single dose of {_amount(Decimal(str(single)))} "
                     f"{code} for {drug}")
    daily = medication.get("maxDailyDose")
    if daily is not None and frequency is not None:
        per_day = doses_per_day(frequency)
        total = amount * per_day
        if total > Decimal(str(daily)):
            found.append(f"{_amount(amount)} {code} × {_amount(per_day)} a day "
                         f"({frequency.get('code', '')}) = {_amount(total)} {code} is above the "
                         f"maximum daily dose of {_amount(Decimal(str(daily)))} {code} for {drug}")
    if not found:
        return None
    text = "; ".join(found)
    return Conflict(DOSE_LIMIT, text[0].upper() + text[1:] + ".")


def _limit(value: Any) -> Decimal | None:
    return None if value is None or isinstance(value, bool) else Decimal(str(value))


def hard_limits(medication: Entry) -> tuple[Decimal | None, Decimal | None]:
    """The medication's hard single and daily limits in its dose unit: ``hardMaxSingleDose``
    and ``hardMaxDailyDose``, each twice the matching maximum when not given (None when
    there is neither)."""
    single, daily = _limit(medication.get("maxSingleDose")), _limit(
        medication.get("maxDailyDose"))
    hard_single = _limit(medication.get("hardMaxSingleDose"))
    hard_daily = _limit(medication.get("hardMaxDailyDose"))
    if hard_single is None and single is not None:
        hard_single = single * HARD_LIMIT_FACTOR
    if hard_daily is None and daily is not None:
        hard_daily = daily * HARD_LIMIT_FACTOR
    return hard_single, hard_daily


def above_hard_limit(medication: Entry, amount: Decimal, daily_total: Decimal | None, *,
                     code: str, daily_words: str) -> str | None:
    """Why ``amount`` (a single dose) or ``daily_total`` (in 24 hours, this dose included),
    both in the dose unit ``code``, passes a hard limit; None when neither does.
    ``daily_words`` says how the total was reached."""
    hard_single, hard_daily = hard_limits(medication)
    drug = medication.get("name") or medication.get("code")
    if hard_single is not None and amount > hard_single:
        return (f"A single dose of {_amount(amount)} {code} is above the hard limit of "
                f"{_amount(hard_single)} {code} for {drug}; it cannot be overridden. Check "
                "the dose and its unit.")
    if hard_daily is not None and daily_total is not None and daily_total > hard_daily:
        return (f"{daily_words} = {_amount(daily_total)} {code} is above the hard daily limit "
                f"of {_amount(hard_daily)} {code} for {drug}; it cannot be overridden.")
    return None


def prescribing_hard_limit(medication: Entry, dose: Decimal, unit: Entry,
                           dose_unit: Entry | None, frequency: Entry | None) -> str | None:
    """Why an ordered dose passes a hard limit: the dose above ``hardMaxSingleDose``, or
    dose × doses per day of the frequency above ``hardMaxDailyDose``; None when it does not
    (or the medication has no dose unit to compare in)."""
    if dose_unit is None:
        return None
    amount = convert(dose, unit, dose_unit)
    code = dose_unit.get("code", "")
    per_day = doses_per_day(frequency) if frequency is not None else None
    total = amount * per_day if per_day is not None else None
    words = (f"{_amount(amount)} {code} × {_amount(per_day)} a day "
             f"({(frequency or {}).get('code', '')})" if per_day is not None else "")
    return above_hard_limit(medication, amount, total, code=code, daily_words=words)


# ------------------------------------------------------------------ duplicate
def _same(kind: str, details: Entry, order: Order) -> bool:
    if order.kind != kind:
        return False
    other = order.details
    if kind == "medication":
        return bool(details.get("medicationCode")) and \
            other.get("medicationCode") == details.get("medicationCode")
    if kind == "lab":
        return bool(details.get("testCode")) and other.get("testCode") == details.get("testCode")
    if kind == "imaging":
        return bool(details.get("modality")) and (other.get("modality"), other.get("bodyPart")) \
            == (details.get("modality"), details.get("bodyPart"))
    return False


def _status(code: str) -> str:
    return STATUS_LABELS.get(code) or code.replace("_", " ").capitalize()


def _placed(placed_at: str, tz: tzinfo) -> str:
    """When an order was placed as the ward reads it: local, to the minute ("Wed 25 Nov,
    14:10"); a stored value no reader can parse is left as it is."""
    try:
        moment = datetime.fromisoformat(placed_at)
    except (TypeError, ValueError):
        return str(placed_at)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(tz).strftime("%a %d %b, %H:%M")


def duplicate_conflict(kind: str, details: Entry, active_orders: Iterable[Order],
                       tz: tzinfo = UTC) -> Conflict | None:
    """Active orders of the admission for the same medication, lab test, or imaging modality
    and body part, each with its status in words and when it was placed (in ``tz``)."""
    same = [o for o in active_orders if o.active and _same(kind, details, o)]
    if not same:
        return None
    listed = "; ".join(f"{o.description} ({_status(str(o.status))}, placed "
                       f"{_placed(o.placed_at, tz)})" for o in same)
    return Conflict(DUPLICATE_ORDER, f"Already ordered on this admission: {listed}.")


# ------------------------------------------------------------------ all of them
def check_order(kind: str, details: Entry, *, allergies: Sequence[Entry] = (),
                active_orders: Sequence[Order] = (), medication: Entry | None = None,
                dose: Decimal | None = None, unit: Entry | None = None,
                dose_unit: Entry | None = None, frequency: Entry | None = None,
                allergen_names: Mapping[str, str] | None = None,
                allergy_status: str | None = None, tz: tzinfo = UTC) -> list[Conflict]:
    """Every check the order fails: allergy status (a medication only), allergy, dose,
    then duplicate (times said in ``tz``)."""
    found: list[Conflict | None] = []
    if kind == "medication" and medication is not None:
        found.append(allergy_status_conflict(allergy_status))
        found.append(allergy_conflict(medication, allergies, allergen_names))
        if dose is not None and unit is not None:
            found.append(dose_conflict(medication, dose, unit, dose_unit, frequency))
    found.append(duplicate_conflict(kind, details, active_orders, tz))
    return [c for c in found if c is not None]


def clean_overrides(overrides: Mapping[str, str] | None) -> dict[str, str]:
    """Overrides by check type (``allergy_conflict`` is read as ``allergy-conflict``,
    ``prn-interval`` as ``dose-interval``), reasons trimmed; an unknown check type is
    invalid input."""
    cleaned: dict[str, str] = {}
    for key, reason in (overrides or {}).items():
        check = str(key).strip().replace("_", "-")
        if check not in CHECK_TYPES:
            raise InvalidInput(f"Unknown check {key!r} in overrides; the checks are "
                               f"{', '.join(CHECK_TYPES)}.", field="overrides")
        reason = " ".join(str(reason or "").split())
        if len(reason) > REASON_MAX_CHARACTERS:
            raise InvalidInput(f"An override reason is {REASON_MAX_CHARACTERS} characters at "
                               "most.", field="overrides")
        check = ALIASES.get(check, check)
        if reason or check not in cleaned:
            cleaned[check] = reason
    return cleaned


def reason_problem(reason: str | None) -> str | None:
    """Why ``reason`` does not count as an override reason (None when it does): it needs at
    least :data:`REASON_MIN_CHARACTERS` characters and :data:`REASON_MIN_WORDS` words with a
    letter or digit in each, so "x" or "ok" never waves a warning through."""
    text = " ".join((reason or "").split())
    if not text:
        return "No reason given."
    words = [w for w in text.split() if any(c.isalnum() for c in w)]
    if len(text) < REASON_MIN_CHARACTERS or len(words) < REASON_MIN_WORDS:
        return (f"A reason needs at least {REASON_MIN_CHARACTERS} characters and "
                f"{REASON_MIN_WORDS} words; say why.")
    return None


def unresolved(conflicts: Iterable[Conflict], overrides: Mapping[str, str]) -> list[Conflict]:
    """The conflicts without a reason in ``overrides`` that counts (each needs its own)."""
    return [c for c in conflicts if reason_problem(overrides.get(c.type)) is not None]


def answered(conflicts: Iterable[Conflict], overrides: Mapping[str, str]) -> list[Conflict]:
    """``conflicts`` as a refusal reports them: each one whose reason was given but does not
    count says why (``reason_refused``)."""
    said = []
    for c in conflicts:
        given = (overrides.get(c.type) or "").strip()
        problem = reason_problem(given) if given else None
        said.append(Conflict(c.type, c.detail, problem or ""))
    return said
