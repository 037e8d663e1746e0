"""Patient, Encounter (an admission) and AllergyIntolerance."""

from __future__ import annotations

from typing import Any

from fhir.resources.R4B.allergyintolerance import AllergyIntolerance
from fhir.resources.R4B.encounter import Encounter
from fhir.resources.R4B.patient import Patient

from fhir_facade import codes, ids
from fhir_facade.mapping.common import (
    Json,
    Names,
    coding,
    local_concept,
    patient_ref,
    prune,
    staff,
    text_or_none,
    when,
)
from patients.domain.merges import LockState
from patients.domain.records import DISPOSITION_LABELS, AdmissionStatus, read_allergy

ENCOUNTER_STATUS = {AdmissionStatus.ACTIVE: "in-progress", AdmissionStatus.ENDED: "finished"}
# Allergen kinds → AllergyIntolerance.category ("other" allergens have none).
ALLERGY_CATEGORY = {
    "drug_class": "medication",
    "ingredient": "medication",
    "food": "food",
    "environment": "environment",
}
# Why an allergy was removed → its clinical status (entered-in-error: verification instead).
REMOVED_CLINICAL = {"resolved": "resolved", "other": "inactive"}
NKA_SUFFIX = "-nka"
NKA_CODE = ("716186003", "No known allergy")


def _links(view: dict[str, Any]) -> list[Json] | None:
    """A record merged into another is ``replaced-by`` it; a survivor ``replaces`` each
    record merged into it (docs/fhir.md)."""
    lock = view.get("mergedInto") or {}
    links = [{"other": patient_ref(lock["survivorId"]), "type": "replaced-by"}
             ] if lock.get("state") == LockState.MERGED else []
    links += [{"other": patient_ref(m["patientId"]), "type": "replaces"}
              for m in view.get("mergedFrom") or []]
    return links or None


def patient(view: dict[str, Any]) -> Patient:
    given = view.get("givenName") or ""
    lock = view.get("mergedInto") or {}
    old = [{"use": "old", "type": {"coding": [coding(codes.V2_0203, "MR", "Medical record "
                                                     "number")]},
            "system": codes.MRN_SYSTEM, "value": m["mrn"]}
           for m in view.get("mergedFrom") or [] if m.get("mrn")]
    return Patient(
        **prune(
            {
                "id": view["patientId"],
                "meta": {"versionId": str(view["version"])} if view.get("version") else None,
                "identifier": [
                    {
                        "use": "usual",
                        "type": {"coding": [coding(codes.V2_0203, "MR", "Medical record number")]},
                        "system": codes.MRN_SYSTEM,
                        "value": view["mrn"],
                    },
                    *old,  # the MRNs of the records merged into this one
                ],
                "active": lock.get("state") != LockState.MERGED,
                "link": _links(view),
                "name": [
                    {
                        "use": "official",
                        "family": view.get("familyName") or None,
                        "given": [given] if given else None,
                        "text": text_or_none(given, view.get("familyName"), sep=" "),
                    }
                ],
                "gender": view.get("sex") or "unknown",
                "birthDate": view.get("birthDate"),
            }
        )
    )


def _locations(admission: dict[str, Any], names: Names) -> list[Json]:
    """Ward and bed over the stay: one period per place, the current one last."""
    moves = admission.get("transfers") or []
    first = moves[0] if moves else {}
    places = [
        (
            first.get("fromWard", admission["wardId"]),
            first.get("fromBed", admission.get("bed")),
            admission["startedAt"],
        )
    ]
    places += [(m["toWard"], m.get("toBed"), m["at"]) for m in moves]
    ended = admission["status"] != AdmissionStatus.ACTIVE
    entries: list[Json] = []
    for i, (ward, bed, start) in enumerate(places):
        last = i == len(places) - 1
        end = (admission.get("endedAt") if ended else None) if last else places[i + 1][2]
        status = "completed" if (ended or not last) else "active"
        period = {"start": when(start), "end": when(end)}
        entries.append(
            {
                "location": {
                    "identifier": {"system": codes.local_system("Ward"), "value": ward},
                    "display": names.name("Ward", ward),
                },
                "status": status,
                "period": period,
                "physicalType": {"coding": [coding(codes.LOCATION_TYPE, "wa", "Ward")]},
            }
        )
        if bed:
            entries.append(
                {
                    "location": {
                        "identifier": {
                            "system": codes.local_system("Bed"),
                            "value": f"{ward}/{bed}",
                        },
                        "display": f"Bed {bed}, {names.name('Ward', ward)}",
                    },
                    "status": status,
                    "period": period,
                    "physicalType": {"coding": [coding(codes.LOCATION_TYPE, "bd", "Bed")]},
                }
            )
    return entries


def encounter(admission: dict[str, Any], names: Names) -> Encounter:
    pid = admission["patientId"]
    disposition = admission.get("disposition")
    department = admission.get("departmentId")
    return Encounter(
        **prune(
            {
                "id": ids.pair(pid, admission["admissionId"]),
                "meta": {"versionId": str(admission["version"])}
                if admission.get("version")
                else None,
                "status": ENCOUNTER_STATUS.get(admission["status"], "unknown"),
                "class": coding(codes.V3_ACT_CODE, "IMP", "inpatient encounter"),
                "subject": patient_ref(pid),
                "participant": [
                    {
                        "type": [{"coding": [coding(codes.V3_PARTICIPATION, "ATND", "attender")]}],
                        "individual": staff(
                            admission.get("attendingId"), admission.get("attendingName")
                        ),
                    }
                ]
                if admission.get("attendingId") or admission.get("attendingName")
                else None,
                "period": {
                    "start": when(admission["startedAt"]),
                    "end": when(admission.get("endedAt")),
                },
                "reasonCode": [{"text": admission["reason"]}] if admission.get("reason") else None,
                "hospitalization": {
                    "dischargeDisposition": {
                        "coding": [
                            coding(codes.DISCHARGE_DISPOSITION, codes.DISPOSITIONS[disposition])
                        ]
                        if disposition in codes.DISPOSITIONS
                        else None,
                        "text": DISPOSITION_LABELS.get(disposition, disposition),
                    }
                }
                if disposition
                else None,
                "location": _locations(admission, names),
                "serviceProvider": {
                    "identifier": {"system": codes.local_system("Department"), "value": department},
                    "display": names.name("Department", department),
                }
                if department
                else None,
            }
        )
    )


def _clinical(allergy: dict[str, Any]) -> tuple[str | None, str | None]:
    """(clinical status, verification status) of an allergy as kept."""
    if allergy["status"] == "active":
        return "active", None
    reason = allergy.get("removalReason")
    if reason == "entered-in-error":
        return None, "entered-in-error"  # ait-2: no clinical status then
    return REMOVED_CLINICAL.get(reason or "", "inactive"), None


def allergy(patient_id: str, stored: dict[str, Any], names: Names) -> AllergyIntolerance:
    a = read_allergy(stored)
    clinical, verification = _clinical(a)
    code = a.get("allergenCode")
    kind = names.entry("Allergen", code).get("kind")
    removed = None
    if a["status"] != "active":
        removed = text_or_none(
            f"Removed ({a.get('removalReason') or 'no reason given'})", a.get("removalDetail")
        )
    return AllergyIntolerance(
        **prune(
            {
                "id": ids.pair(patient_id, a["allergyId"]),
                "clinicalStatus": {"coding": [coding(codes.ALLERGY_CLINICAL, clinical)]}
                if clinical
                else None,
                "verificationStatus": {"coding": [coding(codes.ALLERGY_VERIFICATION, verification)]}
                if verification
                else None,
                "category": [ALLERGY_CATEGORY[kind]] if kind in ALLERGY_CATEGORY else None,
                "criticality": a.get("criticality"),
                "code": local_concept(names, "Allergen", code, a.get("substance")),
                "patient": patient_ref(patient_id),
                "recordedDate": when(a.get("recordedAt")),
                "recorder": staff(a.get("recordedBy"), a.get("recordedBy")),
                "reaction": [
                    {
                        "manifestation": [{"text": a.get("reaction") or "Not described"}],
                        "severity": a.get("severity"),
                    }
                ]
                if a.get("reaction") or a.get("severity")
                else None,
                "note": [{"text": removed}] if removed else None,
            }
        )
    )


def no_known_allergies_id(patient_id: str) -> str:
    return ids.compact(patient_id) + NKA_SUFFIX


def no_known_allergies(patient_id: str, statement: dict[str, Any]) -> AllergyIntolerance:
    """The recorded "no known allergies" (asked, none), as SNOMED CT's No known allergy."""
    return AllergyIntolerance(
        **prune(
            {
                "id": no_known_allergies_id(patient_id),
                "clinicalStatus": {"coding": [coding(codes.ALLERGY_CLINICAL, "active")]},
                "verificationStatus": {"coding": [coding(codes.ALLERGY_VERIFICATION, "confirmed")]},
                "code": {"coding": [coding(codes.SNOMED, *NKA_CODE)], "text": "No known allergies"},
                "patient": patient_ref(patient_id),
                "recordedDate": when(statement.get("recordedAt")),
                "recorder": staff(statement.get("recordedBy"), statement.get("recordedBy")),
            }
        )
    )


def allergies(view: dict[str, Any], names: Names) -> list[AllergyIntolerance]:
    """Every allergy on the record (removed ones too, with their status), then the
    "no known allergies" statement when one is in force."""
    pid = view["patientId"]
    found = [allergy(pid, a, names) for a in view.get("allergies") or [] if a.get("allergyId")]
    if view.get("noKnownAllergies"):
        found.append(no_known_allergies(pid, view["noKnownAllergies"]))
    return found
