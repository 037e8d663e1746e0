"""View rows of one patient state, pure: which row goes in which view bucket.

Buckets keep every view partition bounded (see docs/worklists.md): the census by
department, active orders by ordering department, "my orders" by assignee, name search by
the first two letters of the folded name, scheduled medications by ward, results to review
by ordering clinician, "my patients" by ward (the nurse's beds are joined when read),
observations due by ward, patients at risk by department.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from patients.domain import mar
from patients.domain import observation_summary as observed
from patients.domain.records import allergy_names, allergy_status
from patients.domain.shifts import assignments_from_json, assignments_to_json
from worklists.projection.census import census_rows
from worklists.projection.state import PatientState, Row, RowKey

ADMITTED = "Admitted"
ORDERS = "Orders"
MY_ORDERS = "MyOrders"
NAMES = "Names"
MEDS_DUE = "MedsDue"
REVIEWS = "Reviews"
BIRTHS = "Births"
MY_PATIENTS = "MyPatients"
OBS_DUE = "ObsDue"
AT_RISK = "AtRisk"
SHIFT_BEDS = "ShiftBeds"  # a ward's assignments per shift, from the ward's stream
# What a "My patients" row keeps of each "Medications due" row of the patient: the course
# and the dose times answered, so the reader works out the next dose and the late ones on
# the clock (worklists.projection.due), as Medications due does.
DOSE_FIELDS = ("orderId", "description", "placedAt", "startAt", "endAt", "frequencyHours",
               "schedule", "recorded", "nextDueAt")
OPEN_HANDOVERS_SHOWN = 4  # the newest open notes: a reader needs this shift's and the last
NAME_BUCKET_LEN = 2  # a name search needs this many letters: one partition answers it
_NOT_KEY = re.compile(r"[^A-Z0-9]")


def fold(text: str) -> str:
    """Case- and accent-insensitive search form ("Ibáñez" → "IBANEZ")."""
    decomposed = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c))
                    .upper().split())


def name_bucket(folded: str) -> str:
    """The Names partition of a folded name or name prefix (``_`` pads short ones)."""
    return _NOT_KEY.sub("_", folded[:NAME_BUCKET_LEN]).ljust(NAME_BUCKET_LEN, "_")


def _person(state: PatientState) -> tuple[dict[str, Any], dict[str, Any]]:
    p = state.patient or {}
    family, given = p.get("familyName") or "", p.get("givenName") or ""
    contents = {"patientId": state.patient_id, "mrn": p.get("mrn"),
                "name": f"{family.upper()}, {given}", "birthDate": p.get("birthDate"),
                "sex": p.get("sex") or "unknown"}
    query = {"QueryName": fold(f"{family} {given}"), "QueryMrn": p.get("mrn"),
             "QueryBirth": p.get("birthDate"), "QuerySex": contents["sex"]}
    return contents, query


def _location(adm: dict[str, Any] | None) -> dict[str, Any]:
    if adm is None:
        return {"wardId": None, "bed": None, "QueryBed": ""}
    return {"wardId": adm["wardId"], "bed": adm.get("bed"),
            "QueryBed": f"{adm['wardId']} {adm.get('bed') or ''}".strip()}


def admitted_row(state: PatientState, person: dict, pq: dict) -> Row | None:
    adm = state.admission
    if adm is None:
        return None
    loc = _location(adm)
    contents = {**person, "departmentId": adm["departmentId"], "wardId": loc["wardId"],
                "bed": loc["bed"], "admissionId": adm["admissionId"],
                "admittedAt": adm["startedAt"], "attendingName": adm.get("attendingName") or ""}
    query = {**pq, "QueryWard": adm["wardId"], "QueryBed": loc["QueryBed"],
             "QueryAdmittedAt": adm["startedAt"],
             "QueryAttending": fold(adm.get("attendingName") or "")}
    return Row(ADMITTED, adm["departmentId"], state.patient_id, contents, query)


def order_rows(state: PatientState, person: dict, pq: dict) -> list[Row]:
    adm = state.admission
    if adm is None:
        return []  # no admission, no active orders: ending one ends its orders
    loc = _location(adm)
    rows = []
    for order_id, o in sorted(state.orders.items()):
        department = o.get("departmentId") or adm["departmentId"]
        contents = {**person, "orderId": order_id, "departmentId": department,
                    "wardId": loc["wardId"], "bed": loc["bed"], "kind": o.get("kind"),
                    "status": o.get("status"), "urgency": o.get("urgency") or "routine",
                    "description": o.get("description") or "",
                    "assigneeId": o.get("assigneeId"), "assigneeName": o.get("assigneeName"),
                    "placedAt": o.get("placedAt")}
        query = {**pq, "QueryWard": loc["wardId"], "QueryBed": loc["QueryBed"],
                 "QueryKind": contents["kind"], "QueryStatus": contents["status"],
                 "QueryUrgency": contents["urgency"], "QueryPlacedAt": contents["placedAt"],
                 "QueryAssignee": contents["assigneeId"] or "",
                 "QueryAssigneeName": fold(contents["assigneeName"] or ""),
                 "QueryDepartment": department}
        rows.append(Row(ORDERS, department, order_id, contents, query))
        if contents["assigneeId"]:
            rows.append(Row(MY_ORDERS, str(contents["assigneeId"]), order_id, contents, query))
    return rows


class UnreadableCourse(ValueError):
    """A scheduled medication order whose start or end cannot be read: its dose times, and
    so its "Medications due" row, cannot be worked out (the projection fails, the stream is
    held until the order is repaired)."""


def next_dose_time(order: dict[str, Any]) -> str | None:
    """The first dose time of a scheduled order not yet answered (given or not given), or
    None when every dose time of its course is. Independent of the clock, so the row is a
    pure function of the state: readers take the rows whose time is at most "now + an
    hour" and work out each dose time's status on the day themselves."""
    if order.get("asNeeded") or order.get("frequencyHours") is None:
        return None
    unreadable = mar.data_errors(order)
    if unreadable:
        # Not guessed and not left out: a ward's list without a scheduled drug is worse
        # than a patient whose rows are marked not current until the order is repaired.
        raise UnreadableCourse(f"order {order.get('orderId')}: "
                               + "; ".join(f"{e['field']}: {e['message']}" for e in unreadable))
    recorded = {mar.slot_key(mar.parse_instant(r)) for r in order.get("recorded") or ()}
    moment = mar.first_open_slot({**order, "kind": "medication"},
                                 order["frequencyHours"] or 0, recorded)
    return mar.instant_text(moment) if moment is not None else None


def medication_rows(state: PatientState, person: dict, pq: dict) -> list[Row]:
    """One row per scheduled medication order with a dose time still open, in its ward."""
    adm = state.admission
    if adm is None:
        return []
    loc = _location(adm)
    rows = []
    for order_id, o in sorted(state.orders.items()):
        if o.get("kind") != "medication":
            continue
        due = next_dose_time(o)
        if due is None:
            continue
        contents = {**person, "orderId": order_id, "admissionId": o.get("admissionId"),
                    "wardId": loc["wardId"], "bed": loc["bed"],
                    "departmentId": adm["departmentId"], "kind": "medication",
                    "status": o.get("status"), "description": o.get("description") or "",
                    "urgency": o.get("urgency") or "routine", "placedAt": o.get("placedAt"),
                    **{n: o.get(n) for n in ("medicationName", "dose", "unit", "route",
                                             "startAt", "endAt", "frequencyHours",
                                             "schedule")},
                    "recorded": list(o.get("recorded") or ()), "nextDueAt": due}
        query = {**pq, "QueryBed": loc["QueryBed"], "QueryNextDue": due}
        rows.append(Row(MEDS_DUE, str(loc["wardId"]), order_id, contents, query))
    return rows


def my_patients_row(state: PatientState, person: dict, pq: dict, meds: list[Row]
                    ) -> Row | None:
    """The patient in their bed, for the nurse the bed is assigned to: in the ward's
    bucket, keyed by patient and indexed by bed (``QueryBed``: the bed alone), with the
    allergies' names and who took over the recent handover notes (shift → name). The
    shift's assignments (:data:`SHIFT_BEDS`) are joined when read
    (:mod:`worklists.read.my_patients`)."""
    adm = state.admission
    if adm is None or not adm.get("bed"):
        return None  # no bed, nobody's assignment
    allergies = [{"allergyId": k, **v} for k, v in sorted(state.allergies.items())]
    status = allergy_status(allergies,
                            {"recorded": True} if state.no_known_allergies else None)
    notes = sorted(state.handovers.values(), key=lambda h: str(h.get("shift")),
                   reverse=True)[:OPEN_HANDOVERS_SHOWN]
    contents = {"patientId": state.patient_id, "wardId": adm["wardId"], "bed": adm["bed"],
                "name": person["name"], "allergy": str(status),
                "allergyNames": list(allergy_names(allergies)),
                "taken": {t["shift"]: t["by"] for t in state.taken.values()},
                "doses": [{n: m.contents.get(n) for n in DOSE_FIELDS} for m in meds],
                "unreadResults": len(state.reviews), "handovers": notes,
                "news2": _news2_badge(state)}
    query = {"QueryName": pq["QueryName"], "QueryBed": adm["bed"]}
    return Row(MY_PATIENTS, str(adm["wardId"]), state.patient_id, contents, query)


def _news2_badge(state: PatientState) -> dict[str, Any] | None:
    """What a bed's NEWS2 badge says: the latest score of this stay, its risk, when the next
    set is due and whether a score that needs it was escalated (None: no score yet)."""
    scored = _scored(state)
    if scored is None:
        return None
    return {"score": scored["score"], "risk": scored["risk"], "nextDueAt": scored["nextDueAt"],
            "notEscalated": observed.needs_escalation(scored)}


def _scored(state: PatientState) -> dict[str, Any] | None:
    """The latest scored set of this admission (one of an earlier stay does not count)."""
    adm, summary = state.admission, state.observations or {}
    scored = summary.get("scored")
    if adm is None or not scored or scored.get("admissionId") != adm["admissionId"]:
        return None
    return scored


def observation_rows(state: PatientState, person: dict, pq: dict) -> list[Row]:
    """Observations due: every admitted patient in their ward's bucket, by the next set's
    due time (the latest scored set's; the admission's start before the first). Patients
    at risk: a scored set of low-medium, medium or high risk, in the department's bucket,
    with the previous score (the trend) and whether anyone has been told."""
    adm = state.admission
    if adm is None:
        return []
    loc = _location(adm)
    summary = state.observations or {}
    scored = _scored(state)
    where = {"wardId": loc["wardId"], "bed": loc["bed"], "departmentId": adm["departmentId"]}
    due = scored["nextDueAt"] if scored else adm["startedAt"]
    contents = {**person, **where, "nextDueAt": due, "admittedAt": adm["startedAt"],
                "score": scored["score"] if scored else None,
                "risk": scored["risk"] if scored else None,
                "takenAt": scored["takenAt"] if scored else None,
                "lastTakenAt": summary.get("lastTakenAt"),
                "lastComplete": summary.get("lastComplete"),
                "scale2": bool(summary.get("scale2"))}
    rows = [Row(OBS_DUE, str(loc["wardId"]), state.patient_id, contents,
                {**pq, "QueryBed": loc["QueryBed"], "QueryNextDue": due})]
    if observed.at_risk(scored):
        escalation = scored.get("escalation")
        previous = summary.get("previousScore")
        risk = {**contents, "observationId": scored["observationId"],
                "previousScore": previous,
                "trend": None if previous is None else scored["score"] - previous,
                "singleThree": bool(scored.get("singleThree")),
                "escalated": escalation is not None, "escalation": escalation}
        rows.append(Row(AT_RISK, str(adm["departmentId"]), state.patient_id, risk,
                        {**pq, "QueryWard": loc["wardId"], "QueryBed": loc["QueryBed"],
                         "QueryScore": scored["score"], "QueryTakenAt": scored["takenAt"]}))
    return rows


def review_rows(state: PatientState, person: dict, pq: dict) -> list[Row]:
    """Results not yet acknowledged, for the clinician who ordered them."""
    adm = state.admission
    loc = _location(adm)
    rows = []
    for order_id, r in sorted(state.reviews.items()):
        if not r.get("placedBy"):
            continue  # no ordering clinician on record: nobody's list to put it on
        contents = {**person, **{n: r.get(n) for n in (
            "orderId", "kind", "description", "resultedAt", "resultedByName", "abnormal",
            "high", "low", "abnormalValues", "resultStatus")}, "wardId": loc["wardId"],
            "bed": loc["bed"]}
        query = {**pq, "QueryBed": loc["QueryBed"], "QueryResultedAt": r.get("resultedAt"),
                 "QueryAbnormal": 1 if r.get("abnormal") else 0, "QueryKind": r.get("kind")}
        rows.append(Row(REVIEWS, str(r["placedBy"]), order_id, contents, query))
    return rows


def name_row(state: PatientState, person: dict, pq: dict) -> Row:
    adm = state.admission
    where = None if adm is None else {"departmentId": adm["departmentId"],
                                      "wardId": adm["wardId"], "bed": adm.get("bed")}
    given = fold((state.patient or {}).get("givenName") or "")
    return Row(NAMES, name_bucket(pq["QueryName"]), state.patient_id,
               {**person, "admission": where}, {**pq, "QueryGiven": given})


def birth_row(state: PatientState, person: dict, pq: dict) -> Row | None:
    """Every patient by year of birth: a birth-date search (FHIR ``Patient?birthdate=``)
    reads the years its range spans, one partition each."""
    year = str(person.get("birthDate") or "")[:4]
    if not (len(year) == 4 and year.isdigit()):
        return None
    return Row(BIRTHS, year, state.patient_id, person, pq)


def shift_row(ward_id: str, shift: str, assignments: Mapping[str, Any]) -> Row:
    """A shift's nurses by bed in the ward's bucket, keyed by shift (``2026-11-25-day``):
    what a ``NursesAssigned`` event of the ward's stream says (the whole shift after it),
    or the shift's assignments as the ward keeps them; ``beds``: bed → {nurseId,
    nurseName}."""
    beds = assignments_to_json(assignments_from_json(assignments))
    # read by its key alone (the shift on now): no indexed field, none to keep up
    return Row(SHIFT_BEDS, ward_id, shift, {"wardId": ward_id, "shift": shift, "beds": beds},
               {})


def rows_for(state: PatientState) -> dict[RowKey, Row]:
    """Every view row this patient should have, keyed by (view, bucket, row id)."""
    if state.patient is None:
        return {}  # nothing to show before registration (or a patient we cannot read)
    person, pq = _person(state)
    rows: list[Row] = [name_row(state, person, pq)]
    born = birth_row(state, person, pq)
    if born is not None:
        rows.append(born)
    admitted = admitted_row(state, person, pq)
    if admitted is not None:
        rows.append(admitted)
    rows.extend(order_rows(state, person, pq))
    meds = medication_rows(state, person, pq)
    rows.extend(meds)
    mine = my_patients_row(state, person, pq, meds)
    if mine is not None:
        rows.append(mine)
    rows.extend(review_rows(state, person, pq))
    rows.extend(observation_rows(state, person, pq))
    rows.extend(census_rows(state))
    return {row.key: row for row in rows}
