"""Reads of each resource type by id, and each type's resources of one patient.

A patient, their admissions, allergies and orders live in the patient's partition
(``patients.persistence.queries``): every read and every ``?patient=`` list here is one
point read or one single-partition query there; the resource id names the patient
(:mod:`fhir_facade.ids`), so no read needs an index across partitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fhir.resources.R4B.resource import Resource

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore
from fhir_facade import ids
from fhir_facade.envelopes import FhirError
from fhir_facade.mapping import orders as order_maps
from fhir_facade.mapping import people, results, vitals
from fhir_facade.mapping.common import Names
from fhir_facade.params import ID
from patients.domain.errors import UnknownOrder, UnknownPatient
from patients.domain.results import RESULT_KINDS
from patients.persistence import observations as observation_sets
from patients.persistence import queries, reference


def not_found(resource_type: str, resource_id: str) -> FhirError:
    return FhirError(404, "not-found", f"No {resource_type} with id {resource_id[:70]}.")


def names_of(store: DocumentStore) -> Names:
    return Names(lambda type_name: reference.all_of(store, type_name))


# ------------------------------------------------------------------ the patient's partition
def patient_view(store: DocumentStore, patient_id: str) -> dict[str, Any] | None:
    try:
        return queries.patient(store, patient_id)
    except UnknownPatient:
        return None


def _orders(store: DocumentStore, patient_id: str) -> list[dict[str, Any]]:
    """Newest first; none for an unknown patient (an empty partition)."""
    try:
        return queries.orders(store, patient_id)
    except errors.InvalidRequest:
        return []


def _order(store: DocumentStore, patient_id: str, order_id: str) -> dict[str, Any] | None:
    try:
        return queries.order(store, patient_id, order_id)
    except UnknownOrder:
        return None


def encounters(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    try:
        stays = queries.admissions(store, patient_id)
    except errors.InvalidRequest:
        return []
    return [people.encounter(a, names) for a in stays]


def allergy_list(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    view = patient_view(store, patient_id)
    return [] if view is None else list(people.allergies(view, names))


def medication_requests(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    return [
        order_maps.medication_request(o, names)
        for o in _orders(store, patient_id)
        if o["kind"] == "medication"
    ]


def administration_list(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    """Every recorded dose of the patient's medication orders, newest first."""
    found = [
        a
        for o in _orders(store, patient_id)
        if o["kind"] == "medication"
        for a in order_maps.administrations(o, names)
    ]
    return sorted(found, key=lambda a: str(a.effectiveDateTime or ""), reverse=True)


def service_requests(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    return [
        order_maps.service_request(o, names)
        for o in _orders(store, patient_id)
        if o["kind"] in RESULT_KINDS
    ]


def observation_list(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    """Lab results' values, then every vital sign and NEWS2 score (the latest set first)."""
    labs = [obs for o in _resulted(store, patient_id) for obs in results.observations(o, names)]
    return labs + [obs for o in _vital_sets(store, patient_id)
                   for obs in vitals.observations(patient_id, o)]


MAX_VITAL_SETS = 500  # a search reads at most this many sets (three weeks of hourly sets)


def _vital_sets(store: DocumentStore, patient_id: str) -> list[dict[str, Any]]:
    sets: list[dict[str, Any]] = []
    token = None
    try:
        while len(sets) < MAX_VITAL_SETS:
            page, token = observation_sets.page(store, patient_id, limit=100,
                                                continuation=token)
            sets.extend(page)
            if not token:
                break
    except errors.InvalidRequest:
        return []
    return sets


def report_list(store: DocumentStore, patient_id: str, names: Names) -> list[Resource]:
    return [results.diagnostic_report(o, names) for o in _resulted(store, patient_id)]


def _resulted(store: DocumentStore, patient_id: str) -> list[dict[str, Any]]:
    done = [o for o in _orders(store, patient_id) if o["kind"] in RESULT_KINDS and o.get("results")]
    return sorted(done, key=lambda o: o["results"]["resultedAt"], reverse=True)


# ------------------------------------------------------------------ reads by id
def read(store: DocumentStore, resource_type: str, resource_id: str) -> Resource:
    """The resource, or FhirError 404 (an id not made here is simply not found)."""
    names = names_of(store)
    try:
        found = _READERS[resource_type](store, resource_id, names)
    except (
        ids.NotOurs,
        errors.NotFound,
        errors.InvalidRequest,
        UnknownPatient,
        UnknownOrder,
        IndexError,
        KeyError,
    ):
        found = None
    if found is None:
        raise not_found(resource_type, resource_id)
    return found


def _read_patient(store: DocumentStore, rid: str, names: Names) -> Resource | None:
    view = patient_view(store, rid) if ID.fullmatch(rid) else None
    return None if view is None else people.patient(view)


def _read_encounter(store: DocumentStore, rid: str, names: Names) -> Resource | None:
    pid, aid = ids.split_pair(rid)
    return people.encounter(queries.admission(store, pid, aid), names)


def _read_allergy(store: DocumentStore, rid: str, names: Names) -> Resource | None:
    if rid.endswith(people.NKA_SUFFIX):
        pid = ids.expand(rid[: -len(people.NKA_SUFFIX)])
        view = patient_view(store, pid)
        statement = view and view.get("noKnownAllergies")
        return people.no_known_allergies(pid, statement) if statement else None
    pid, aid = ids.split_pair(rid)
    view = patient_view(store, pid)
    stored = next(
        (a for a in (view or {}).get("allergies") or [] if a.get("allergyId") == aid), None
    )
    return None if stored is None else people.allergy(pid, stored, names)


def _read_order(
    kinds: tuple[str, ...],
    build: Callable[[dict[str, Any], Names], Resource],
    *,
    resulted: bool = False,
) -> Callable[[DocumentStore, str, Names], Resource | None]:
    def reader(store: DocumentStore, rid: str, names: Names) -> Resource | None:
        order = _order(store, *ids.split_pair(rid))
        if order is None or order["kind"] not in kinds or (resulted and not order.get("results")):
            return None
        return build(order, names)

    return reader


def _read_administration(store: DocumentStore, rid: str, names: Names) -> Resource | None:
    pid, administration_id = ids.split_pair(rid)
    for order in _orders(store, pid):
        for entry in order.get("administrations") or []:
            if entry.get("administrationId") == administration_id:
                return order_maps.administration(order, entry, names)
    return None


def _read_observation(store: DocumentStore, rid: str, names: Names) -> Resource | None:
    if len(rid) > 2 * ids.UUID_LEN + 4:  # a vital sign: a set's id is not a UUID
        pid, set_id, index = ids.split_vital(rid)
        found = observation_sets.one(store, pid, set_id)
        return None if found is None else vitals.observation(pid, found, index)
    pid, oid, index = ids.split_indexed(rid)
    order = _order(store, pid, oid)
    if order is None or order["kind"] != "lab" or not order.get("results"):
        return None
    if index >= len(order["results"]["values"]):
        return None
    return results.observation(order, index, names)


_READERS: dict[str, Callable[[DocumentStore, str, Names], Resource | None]] = {
    "Patient": _read_patient,
    "Encounter": _read_encounter,
    "AllergyIntolerance": _read_allergy,
    "MedicationRequest": _read_order(("medication",), order_maps.medication_request),
    "MedicationAdministration": _read_administration,
    "ServiceRequest": _read_order(RESULT_KINDS, order_maps.service_request),
    "Observation": _read_observation,
    "DiagnosticReport": _read_order(RESULT_KINDS, results.diagnostic_report, resulted=True),
}
