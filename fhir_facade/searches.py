"""Searches of each type: which parameters it takes, where it reads, how it pages.

- ``?patient=`` (every type but Patient; ``subject`` too where FHIR has it) lists the
  patient's resources of the type from their partition (:mod:`.reads`), filtered by status,
  paged by ``_offset``;
- ``Patient?_id=`` / ``?identifier=`` is a point read (the MRN's holder, then the patient);
- ``Patient?name=`` (or ``family`` and ``given``) reads the worklists' Names view, one
  bucket per reading of the name (``worklists.read``), paged by the view's continuation
  (``_cursor``), then each patient found by a point read: the view lags the record by the
  projection's delay, the resources never do;
- ``birthdate`` narrows one of those; alone it reads the Births view, one partition per
  year of the range it names (at most ten years; an open range is 400 ``too-costly``, as
  is a Patient search without a parameter).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from fhir.resources.R4B.resource import Resource

from cosmos_backend import errors
from cosmos_backend.store import Cond, DocumentStore, Query
from fhir_facade import codes, reads
from fhir_facade.envelopes import Page
from fhir_facade.mapping import people
from fhir_facade.mapping.common import Names
from fhir_facade.params import (
    DateBound,
    InstantBound,
    Search,
    bad,
    parse_date,
    parse_instant,
    parse_reference,
    parse_token,
)
from hisadmin.core.inputs import hospital_time_zone
from patients.domain.records import fold
from patients.persistence import queries
from worklists.read import queries as worklists

MAX_MERGED = 200  # a name with several readings: rows read per reading, at most

Lister = Callable[[DocumentStore, str, Names], list[Resource]]


def _status(resource: Resource) -> str | None:
    return getattr(resource, "status", None)


def _clinical_status(resource: Resource) -> str | None:
    status = getattr(resource, "clinicalStatus", None)
    return status.coding[0].code if status is not None and status.coding else None


def _category_codes(resource: Resource) -> set[str]:
    return {
        c.code
        for concept in getattr(resource, "category", None) or []
        for c in concept.coding or []
    }


@dataclass(frozen=True)
class PatientType:
    """A type searched by ``patient``: where its resources come from, its status codes."""

    lister: Lister
    statuses: tuple[str, ...]
    status_param: str = "status"
    status_of: Callable[[Resource], str | None] = _status
    subject: bool = True  # FHIR gives the type a ``subject`` parameter as well
    categories: tuple[str, ...] = ()
    coded: bool = False  # ``code`` (a token on the resource's code) and ``date`` (its time)

    def params(self) -> tuple[str, ...]:
        own = ("patient", self.status_param, "status")
        return (
            own
            + (("subject",) if self.subject else ())
            + (("category",) if self.categories else ())
            + (("code", "date") if self.coded else ())
        )


# Each type's status codes in FHIR R4: a search for another code is a 400.
STATUSES = {
    "Encounter": "planned arrived triaged in-progress onleave finished cancelled "
    "entered-in-error unknown",
    "AllergyIntolerance": "active inactive resolved",  # its clinical status
    "MedicationRequest": "active on-hold cancelled completed entered-in-error stopped draft "
    "unknown",
    "MedicationAdministration": "in-progress not-done on-hold completed entered-in-error "
    "stopped unknown",
    "ServiceRequest": "draft active on-hold revoked completed entered-in-error unknown",
    "Observation": "registered preliminary final amended corrected cancelled entered-in-error "
    "unknown",
    "DiagnosticReport": "registered partial preliminary final amended corrected appended "
    "cancelled entered-in-error unknown",
}
PATIENT_TYPES: dict[str, PatientType] = {
    "Encounter": PatientType(reads.encounters, tuple(STATUSES["Encounter"].split())),
    # AllergyIntolerance has no status in FHIR; ``status`` is taken as its clinical status.
    "AllergyIntolerance": PatientType(
        reads.allergy_list,
        tuple(STATUSES["AllergyIntolerance"].split()),
        "clinical-status",
        _clinical_status,
        subject=False,
    ),
    "MedicationRequest": PatientType(
        reads.medication_requests, tuple(STATUSES["MedicationRequest"].split())
    ),
    "MedicationAdministration": PatientType(
        reads.administration_list, tuple(STATUSES["MedicationAdministration"].split())
    ),
    "ServiceRequest": PatientType(
        reads.service_requests,
        tuple(STATUSES["ServiceRequest"].split()),
        categories=tuple(code for code, _ in codes.SERVICE_CATEGORIES.values())
        + ("laboratory", "imaging"),
    ),
    "Observation": PatientType(reads.observation_list, tuple(STATUSES["Observation"].split()),
                               categories=("laboratory", "vital-signs", "survey"), coded=True),
    "DiagnosticReport": PatientType(reads.report_list, tuple(STATUSES["DiagnosticReport"].split())),
}
PATIENT_PARAMS = ("_id", "identifier", "name", "family", "given", "birthdate")
# ``category=laboratory`` / ``imaging``: the words for the SNOMED CT codes.
CATEGORY_WORDS = {
    "laboratory": codes.SERVICE_CATEGORIES["lab"][0],
    "imaging": codes.SERVICE_CATEGORIES["imaging"][0],
}


def params_of(resource_type: str) -> tuple[str, ...]:
    if resource_type == "Patient":
        return PATIENT_PARAMS
    return PATIENT_TYPES[resource_type].params()


def search(store: DocumentStore, resource_type: str, asked: Search) -> Page:
    if resource_type == "Patient":
        return _search_patients(store, asked)
    return _search_by_patient(store, PATIENT_TYPES[resource_type], asked)


def _offset_page(found: list[Resource], asked: Search) -> Page:
    start, size = asked.offset, asked.count
    shown = found[start : start + size]
    more = start + size < len(found) and size > 0
    return Page(
        shown,
        len(found),
        next_query=asked.query(_count=size, _offset=start + size) if more else None,
        previous_query=asked.query(_count=size, _offset=max(0, start - size))
        if start > 0
        else None,
    )


def _search_by_patient(store: DocumentStore, kind: PatientType, asked: Search) -> Page:
    given = [(n, v) for n in ("patient", "subject") for v in asked.all(n)]
    if not given:
        raise bad(
            "Search by patient: give patient=<Patient id> (one partition answers it).", "too-costly"
        )
    patient_ids = {parse_reference(name, value) for name, value in given}
    if len(patient_ids) > 1:
        raise bad("Give one patient per search.")
    wanted = kind.statuses
    chosen = [asked.choices(p, wanted) for p in {kind.status_param, "status"}]
    statuses = [c for c in chosen if c is not None]
    categories = None
    if kind.categories:
        categories = asked.choices("category", kind.categories)
    found = kind.lister(store, patient_ids.pop(), reads.names_of(store))
    for allowed in statuses:
        found = [r for r in found if kind.status_of(r) in allowed]
    if categories is not None:
        codes_wanted = {c for c in categories} | {CATEGORY_WORDS.get(c, c) for c in categories}
        found = [r for r in found if _category_codes(r) & codes_wanted]
    if kind.coded:
        found = _by_code_and_date(found, asked)
    return _offset_page(found, asked)


# ------------------------------------------------------------------ code and date
_CODE = re.compile(r"[^\s,|]{1,64}")
_SYSTEM = re.compile(r"[^\s,|]{0,200}")
Token = tuple[str | None, str]


def _tokens(asked: Search) -> list[set[Token]]:
    """Each ``code`` value's tokens (commas: any of them; repeats: all of them); a 400 for
    one that is not ``code``, ``system|code`` or ``|code``."""
    out = []
    for value in asked.all("code"):
        tokens: set[Token] = set()
        for item in value.split(","):
            system, code = parse_token(item.strip())
            if not _CODE.fullmatch(code) or (system is not None
                                              and not _SYSTEM.fullmatch(system)):
                raise bad(f"code must be a code, system|code or |code (e.g. "
                          f"http://loinc.org|8867-4), not {item.strip()[:60]!r}.")
            tokens.add((system, code))
        out.append(tokens)
    return out


def _has_code(resource: Resource, tokens: set[Token]) -> bool:
    concept = getattr(resource, "code", None)
    codings = [(c.system or "", c.code) for c in (concept.coding or [])] if concept else []
    return any(code == c and (system is None or system == s)
               for system, code in tokens for s, c in codings)


def _effective(resource: Resource) -> datetime | None:
    value = getattr(resource, "effectiveDateTime", None)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=hospital_time_zone())
    return None


def _by_code_and_date(found: list[Resource], asked: Search) -> list[Resource]:
    """``code`` (LOINC, SNOMED CT or a lab's own code; ``system|code`` too) and ``date``
    (prefixes eq, ge, gt, le, lt; a day, minute, second or instant; without an offset the
    hospital's time) on Observation.code and effectiveDateTime."""
    for tokens in _tokens(asked):
        found = [r for r in found if _has_code(r, tokens)]
    bounds: list[InstantBound] = [parse_instant("date", v, hospital_time_zone())
                                  for v in asked.all("date")]
    for bound in bounds:
        found = [r for r in found if (at := _effective(r)) is not None and bound.matches(at)]
    return found


# ------------------------------------------------------------------ Patient
def _birth_bounds(asked: Search) -> list[DateBound]:
    return [parse_date("birthdate", v) for v in asked.all("birthdate")]


def _name_text(asked: Search) -> str | None:
    name, family, given = asked.one("name"), asked.one("family"), asked.one("given")
    if name and (family or given):
        raise bad("Search by name, or by family (and given), not both.")
    if given and not family:
        raise bad("given narrows a family search: give family too.", "too-costly")
    if family:
        if "," in family:
            raise bad("family is one family name.")
        return f"{family}, {given or ''}"
    return name


def _matches_name(view: dict[str, Any], readings: list[worklists.Worklist]) -> bool:
    full = " ".join(fold(f"{view.get('familyName', '')} {view.get('givenName', '')}").split())
    given = " ".join(fold(view.get("givenName") or "").split())
    return any(
        w.prefix is not None
        and full.startswith(w.prefix[1])
        and (not w.given_prefix or given.startswith(w.given_prefix))
        for w in readings
    )


def _readings(text: str) -> list[worklists.Worklist]:
    try:
        return worklists.name_searches(text)
    except worklists.SearchTooShort as exc:
        raise bad(str(exc)) from None


def _search_patients(store: DocumentStore, asked: Search) -> Page:
    bounds = _birth_bounds(asked)
    text = _name_text(asked)
    readings = _readings(text) if text else []
    pid, identifier = asked.one("_id"), asked.one("identifier")
    if pid is not None or identifier is not None:
        view = _by_id_or_mrn(store, pid, identifier)
        keep = (
            view is not None
            and all(b.matches(view.get("birthDate")) for b in bounds)
            and (not readings or _matches_name(view, readings))
        )
        return _offset_page([people.patient(view)] if keep and view else [], asked)
    if readings:
        return _search_names(store, readings, bounds, asked)
    if bounds:
        return _search_births(store, bounds, asked)
    raise bad("Search patients by identifier, name (or family and given) or _id.", "too-costly")


def _by_id_or_mrn(
    store: DocumentStore, pid: str | None, identifier: str | None
) -> dict[str, Any] | None:
    found: dict[str, Any] | None = None
    if identifier is not None:
        system, value = parse_token(identifier.strip())
        if system not in (None, "", codes.MRN_SYSTEM) or not value.strip():
            return None  # another system's identifier: none of ours
        try:
            found = queries.by_mrn(store, value)
        except errors.InvalidRequest:
            return None
        if found is None:
            return None
    if pid is not None:
        pid = parse_reference("_id", pid)
        if found is not None:
            return found if found["patientId"] == pid else None
        return reads.patient_view(store, pid)
    return found


@dataclass(frozen=True)
class _Narrowed(worklists.Worklist):
    """A Names reading narrowed by birth date comparisons (residual filters in a bucket)."""

    extra: tuple[Cond, ...] = ()

    def query(self) -> Query:
        base = super().query()
        return Query(where=base.where + self.extra, order_by=base.order_by)


def _narrow(reading: worklists.Worklist, bounds: list[DateBound]) -> worklists.Worklist:
    extra = tuple(Cond("QueryBirth", op, value) for b in bounds for op, value in b.conditions())
    fields = {name: getattr(reading, name) for name in reading.__dataclass_fields__}
    return _Narrowed(**fields, extra=extra)


def _birth_range(bounds: list[DateBound]) -> tuple[str, str]:
    """The one closed range of ISO dates ``bounds`` select together, or a 400: ``birthdate``
    alone must say a first and a last day (``eq`` does both) within ten years."""
    lows, highs = [], []
    for b in bounds:
        if b.prefix in ("eq", "ge"):
            lows.append(b.start)
        if b.prefix in ("eq", "le"):
            highs.append(b.end)
        if b.prefix == "gt":
            lows.append((date.fromisoformat(b.end) + timedelta(days=1)).isoformat())
        if b.prefix == "lt":
            highs.append((date.fromisoformat(b.start) - timedelta(days=1)).isoformat())
    if not lows or not highs:
        raise bad("birthdate alone needs a first and a last day (eq, or ge with le) within "
                  f"{worklists.MAX_BIRTH_YEARS} years; or search by name or identifier.",
                  "too-costly")
    return max(lows), min(highs)


def _search_births(store: DocumentStore, bounds: list[DateBound], asked: Search) -> Page:
    """Patients by birth date alone: one partition of the Births view per year spanned,
    merged by name."""
    first, last = _birth_range(bounds)
    if first > last:
        return Page([], 0)
    try:
        years = worklists.born_between(first, last)
        result = worklists.run_across(store, years, page_size=max(1, asked.count),
                                      continuation=asked.cursor, total=True)
    except worklists.SearchTooShort as exc:
        raise bad(str(exc), "too-costly") from None
    except errors.InvalidRequest as exc:  # a cursor that is not one of ours
        raise bad(f"Not a valid page cursor ({exc}).") from None
    rows = result.rows if asked.count else []
    return Page(
        _patients_of(store, rows),
        result.total or 0,
        next_query=asked.query(_count=asked.count, _cursor=result.continuation)
        if result.continuation and asked.count
        else None,
    )


def _patients_of(store: DocumentStore, rows: list[dict[str, Any]]) -> list[Resource]:
    """Each row's patient as recorded now (a point read each; a row the view still holds
    for a patient since gone is skipped)."""
    found = []
    for row in rows:
        view = reads.patient_view(store, row["patientId"])
        if view is not None:
            found.append(people.patient(view))
    return found


def _search_names(
    store: DocumentStore, readings: list[worklists.Worklist], bounds: list[DateBound], asked: Search
) -> Page:
    narrowed = [_narrow(r, bounds) for r in readings]
    try:
        if len(narrowed) == 1:
            result = worklists.run(
                store,
                narrowed[0],
                page_size=max(1, asked.count),
                continuation=asked.cursor,
                total=True,
            )
            rows = result.rows if asked.count else []
            return Page(
                _patients_of(store, rows),
                result.total or 0,
                next_query=asked.query(_count=asked.count, _cursor=result.continuation)
                if result.continuation and asked.count
                else None,
            )
        merged: dict[str, dict[str, Any]] = {}
        for reading in narrowed:
            result = worklists.run(store, reading, page_size=MAX_MERGED)
            if result.continuation:
                raise bad(
                    f"More than {MAX_MERGED} patients match this name; give more of it.",
                    "too-costly",
                )
            merged.update({row["patientId"]: row for row in result.rows})
    except errors.InvalidRequest as exc:  # a cursor that is not one of ours
        raise bad(f"Not a valid page cursor ({exc}).") from None
    rows = sorted(merged.values(), key=lambda r: (fold(r.get("name") or ""), r["patientId"]))
    start, size = asked.offset, asked.count
    return Page(
        _patients_of(store, rows[start : start + size]),
        len(rows),
        next_query=asked.query(_count=size, _offset=start + size)
        if start + size < len(rows) and size
        else None,
        previous_query=asked.query(_count=size, _offset=max(0, start - size)) if start else None,
    )
