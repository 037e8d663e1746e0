"""Builders of event contents in the documented shapes, for projection tests."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from patients.domain import mar, observations
from patients.domain.events import ORDER_PLACED, EventType
from patients.domain.orders import Order
from patients.domain.records import Admission, AdmissionStatus, Patient
from patients.domain.results import HIGH, LOW, flags_summary
from worklists.projection.state import PatientState

T0 = "2026-01-05T08:00:00+00:00"


class History:
    """A valid event history of one patient, grown one random command at a time."""

    def __init__(self, patient_id: str = "p1") -> None:
        self.patient_id = patient_id
        self.events: list[dict[str, Any]] = []
        self.admission: str | None = None
        self.orders: dict[str, str] = {}  # active order id → kind
        self.schedules: dict[str, tuple[float, bool]] = {}  # medication → (hours, as needed)
        self.reviews: set[str] = set()  # orders with results not acknowledged
        self.n = 0

    def add(self, etype: EventType, data: dict[str, Any]) -> None:
        self.events.append({"seq": len(self.events) + 1, "type": etype, "data": data,
                            "stream": f"P_{self.patient_id}", "occurredAt": T0})

    def register(self, family: str = "Ibáñez", given: str = "Inés") -> None:
        self.add(EventType.PATIENT_REGISTERED, {"patientId": self.patient_id, "mrn": "H0000001",
                                       "givenName": given, "familyName": family,
                                       "birthDate": "1970-02-03", "sex": "female"})

    def random_command(self, rnd: random.Random) -> None:
        self.n += 1
        choices = ["rename", "allergy"]
        if self.admission is None:
            choices += ["admit", "admit"]
        else:
            choices += ["transfer", "discharge", "prescribe", "prescribe", "observe",
                        "observe", "escalate", "scale"]
            if self.orders:
                choices += ["assign", "unassign", "progress", "progress"]
            if any(k == "medication" for k in self.orders.values()):
                choices += ["dose", "dose"]
            if any(k != "medication" for k in self.orders.values()):
                choices += ["result"]
        if self.reviews:
            choices += ["acknowledge"]
        getattr(self, "_" + rnd.choice(choices))(rnd)

    def _rename(self, rnd: random.Random) -> None:
        self.add(EventType.DEMOGRAPHICS_UPDATED, {"familyName": rnd.choice(["Núñez", "Smith"])})

    def _allergy(self, rnd: random.Random) -> None:
        self.add(EventType.ALLERGY_ADDED, {"allergyId": f"al{self.n}", "substance": "x"})

    def _admit(self, rnd: random.Random) -> None:
        self.admission = f"a{self.n}"
        dept = rnd.choice(["CARD", "MED"])
        self.add(EventType.ADMISSION_STARTED, {"admissionId": self.admission, "departmentId": dept,
                                      "wardId": f"{dept}-1", "bed": f"B{self.n}",
                                      "attendingId": "7", "attendingName": "Dr Who",
                                      "reason": "r", "startedAt": T0})

    def _transfer(self, rnd: random.Random) -> None:
        dept = rnd.choice(["CARD", "MED"])
        self.add(EventType.PATIENT_TRANSFERRED, {"admissionId": self.admission, "toWard": f"{dept}-2",
                                        "toBed": None, "toDepartment": dept, "at": T0})

    def _observe(self, rnd: random.Random) -> None:
        """A set scored as the use case scores it: complete or partial, any risk, taken
        now or entered late (an earlier time)."""
        values = {"respiration_rate": rnd.choice([8, 16, 22, 26]), "spo2": rnd.choice([90, 95, 98]),
                  "on_oxygen": rnd.choice([False, True]), "systolic_bp": rnd.choice([95, 120]),
                  "pulse": rnd.choice([45, 80, 120]), "consciousness": rnd.choice("AAAV"),
                  "temperature": rnd.choice([35.0, 37.0, 39.5])}
        if rnd.random() < 0.3:
            values.pop(rnd.choice(list(values)))
        taken = datetime.fromisoformat(T0) + timedelta(minutes=rnd.choice([-30, 0, 1]) + self.n)
        news2 = observations.news2(values, taken_at=taken)
        self.last_set = f"s{self.n}"
        self.add(EventType.OBSERVATIONS_RECORDED, {
            "observationId": self.last_set, "takenAt": taken.isoformat(),
            "admissionId": self.admission, "news2": news2.as_json(), "flags": [],
            **{observations.STORED[k]: v for k, v in values.items()}})

    def _escalate(self, rnd: random.Random) -> None:
        self.add(EventType.OBSERVATIONS_ESCALATED, {
            "observationId": getattr(self, "last_set", "none"), "toldWhom": "Dr Who",
            "toldAt": T0, "response": "plan", "detail": "", "recordedBy": "8",
            "recordedByName": "N"})

    def _scale(self, rnd: random.Random) -> None:
        if rnd.random() < 0.5:
            self.add(EventType.SPO2_SCALE2_DECIDED, {"decidedAt": T0, "decidedBy": "7",
                                                     "decidedByName": "Dr", "reason": "COPD"})
        else:
            self.add(EventType.SPO2_SCALE2_ENDED, {"endedAt": T0, "endedBy": "7",
                                                   "endedByName": "Dr", "reason": "better"})

    def _discharge(self, rnd: random.Random) -> None:
        self.add(EventType.ADMISSION_ENDED, {"admissionId": self.admission, "disposition": "home",
                                    "endedAt": T0})
        self.admission = None
        self.orders.clear()

    def _prescribe(self, rnd: random.Random) -> None:
        order_id = f"o{self.n}"
        kind = rnd.choice(["medication", "medication", "imaging", "lab"])
        self.orders[order_id] = kind
        data = {"orderId": order_id, "admissionId": self.admission, "urgency":
                rnd.choice(["routine", "stat"]), "description": "thing", "departmentId": "CARD",
                "wardId": "CARD-1", "placedAt": T0, "placedBy": "7"}
        if kind == "medication":
            hours, prn = rnd.choice([0, 4, 6, 12]), rnd.random() < 0.2
            self.schedules[order_id] = (hours, prn)
            data.update({"medicationName": "Drug", "dose": "1", "unit": "g", "route": "PO",
                         "startAt": rnd.choice([None, "2026-01-05T10:00:00+00:00"]),
                         "endAt": None, "frequencyHours": hours, "asNeeded": prn})
        self.add(ORDER_PLACED[kind], data)

    def _dose(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(o for o, k in self.orders.items() if k == "medication"))
        hours, prn = self.schedules[order_id]
        start = datetime.fromisoformat(T0)
        slot = None if prn else mar.instant_text(start + timedelta(hours=hours * rnd.randint(0, 5)))
        etype = rnd.choice([EventType.MEDICATION_ADMINISTERED, EventType.MEDICATION_NOT_GIVEN])
        self.add(etype, {"orderId": order_id, "administrationId": f"ad{self.n}",
                         "status": "given" if etype == EventType.MEDICATION_ADMINISTERED
                         else "not_given", "scheduledFor": slot, "administeredAt": T0})

    def _result(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(o for o, k in self.orders.items() if k != "medication"))
        kind = self.orders.pop(order_id)
        values = [{"analyte": "HGB", "value": "9", "flag": rnd.choice([HIGH, LOW, None])}]
        values = values if kind == "lab" else []
        self.add(EventType.ORDER_COMPLETED, {"orderId": order_id, "status": "completed"})
        self.add(EventType.RESULTS_RECORDED, {
            "orderId": order_id, "placedBy": "7", "kind": kind, "description": "thing",
            "flags": flags_summary(values), "results": {
                "values": values, "report": "", "resultedAt": f"2026-01-05T09:{self.n % 60:02d}:00",
                "resultedBy": "lab", "resultedByName": "Lab Tech"}})
        self.reviews.add(order_id)

    def _acknowledge(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(self.reviews))
        self.reviews.discard(order_id)
        self.add(EventType.RESULT_ACKNOWLEDGED, {"orderId": order_id, "placedBy": "7",
                                                 "acknowledgedAt": T0, "acknowledgedBy": "dr"})

    def _assign(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(self.orders))
        self.add(EventType.ORDER_ASSIGNED, {"orderId": order_id, "assigneeId": rnd.choice(["7", "8"]),
                                   "assigneeName": "Nurse"})

    def _unassign(self, rnd: random.Random) -> None:
        self.add(EventType.ORDER_UNASSIGNED, {"orderId": rnd.choice(sorted(self.orders))})

    def _progress(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(self.orders))
        etype = rnd.choice([EventType.ORDER_READY, EventType.ORDER_STARTED,
                            EventType.ORDER_COMPLETED, EventType.ORDER_CANCELLED])
        self.add(etype, {"orderId": order_id, "reason": "r"})
        if etype in (EventType.ORDER_COMPLETED, EventType.ORDER_CANCELLED):
            del self.orders[order_id]  # completed without results: nothing to review


Record = tuple[Patient | None, list[Admission], list[Order]]


def _admissions(state: PatientState) -> list[Admission]:
    """Every admission of the state's stays, the active one with its current details, with
    the transfers between wards and the end they record."""
    stays_by_admission: dict[str, list[dict[str, Any]]] = {}
    for stay in state.stays:
        stays_by_admission.setdefault(stay["admissionId"], []).append(stay)
    admissions = []
    for admission_id, stays in stays_by_admission.items():
        a = state.admission if (state.admission or {}).get("admissionId") == admission_id else None
        transfers = [{"at": s["since"], "fromWard": before["wardId"], "fromBed": None,
                      "toWard": s["wardId"], "toBed": None, "toDepartment": "CARD", "by": "7"}
                     for before, s in zip(stays, stays[1:], strict=False)]
        admissions.append(Admission(
            admission_id=admission_id, patient_id=state.patient_id,
            department_id=a["departmentId"] if a else "CARD", ward_id=stays[-1]["wardId"],
            bed=a["bed"] if a else None, attending_id=a["attendingId"] if a else "7",
            attending_name=a["attendingName"] if a else "Dr Who", reason="r",
            started_at=stays[0]["since"], transfers=transfers,
            status=AdmissionStatus.ACTIVE if a else AdmissionStatus.ENDED,
            ended_at=None if a else stays[-1]["until"]))
    return admissions


def source_record(state: PatientState) -> Record:
    """The record a patient partition would hold for ``state`` (active parts only), as the
    domain objects ``patients.persistence.snapshots.read_snapshot`` returns."""
    patient = None
    if state.patient:
        p = state.patient
        patient = Patient(patient_id=state.patient_id, mrn=p["mrn"], given_name=p["givenName"],
                          family_name=p["familyName"],
                          birth_date=date.fromisoformat(p["birthDate"]), sex=p["sex"],
                          allergies=[{"allergyId": a, **named, "status": "active"}
                                     for a, named in state.allergies.items()],
                          no_known_allergies={"recordedAt": T0, "recordedBy": "7"}
                          if state.no_known_allergies else None)
    admissions = _admissions(state)
    medication = ("medicationName", "dose", "unit", "route", "startAt", "endAt",
                  "frequencyHours", "asNeeded")
    orders = [Order(order_id=o["orderId"], patient_id=state.patient_id,
                    admission_id=o["admissionId"], kind=o["kind"], urgency=o["urgency"],
                    description=o["description"], department_id=o["departmentId"],
                    ward_id=o["wardId"], placed_at=o["placedAt"], placed_by="7",
                    details={k: o[k] for k in medication if k in o},
                    status=o["status"], assignee_id=o["assigneeId"],
                    assignee_name=o["assigneeName"],
                    administrations=[{"scheduledFor": s} for s in o.get("recorded", ())])
              for o in state.orders.values()]
    for r in state.reviews.values():
        # the events' values are all 9 (History._result): the record keeps the same
        values = ([{"analyte": a, "value": "9", "flag": HIGH} for a in r["high"]]
                  + [{"analyte": a, "value": "9", "flag": LOW} for a in r["low"]])
        orders.append(Order(
            order_id=r["orderId"], patient_id=state.patient_id, admission_id="old",
            kind=r["kind"], urgency="routine", description=r["description"],
            department_id="CARD", ward_id="CARD-1", placed_at=T0, placed_by=r["placedBy"],
            details={"results": {"values": values, "resultedAt": r["resultedAt"],
                                 "resultedByName": r["resultedByName"]}},
            status="completed"))
    return patient, admissions, orders


def source_args(state: PatientState) -> tuple[Any, ...]:
    """``from_source``'s arguments after the sequence for ``state``'s record: the record's
    observation summary is the one its commands kept (the same follow functions)."""
    return (*source_record(state), None, (), state.observations)
