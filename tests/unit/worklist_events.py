"""Builders of event contents in the documented shapes, for projection tests."""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from patients.domain.events import ORDER_PLACED, EventType
from patients.domain.orders import Order
from patients.domain.records import Admission, Patient
from worklists.projection.state import PatientState

T0 = "2026-01-05T08:00:00+00:00"


class History:
    """A valid event history of one patient, grown one random command at a time."""

    def __init__(self, patient_id: str = "p1") -> None:
        self.patient_id = patient_id
        self.events: list[dict[str, Any]] = []
        self.admission: str | None = None
        self.orders: dict[str, str] = {}  # active order id → status
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
            choices += ["transfer", "discharge", "prescribe", "prescribe"]
            if self.orders:
                choices += ["assign", "unassign", "progress", "progress"]
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
                                        "toBed": None, "toDepartment": dept})

    def _discharge(self, rnd: random.Random) -> None:
        self.add(EventType.ADMISSION_ENDED, {"admissionId": self.admission, "disposition": "home",
                                    "endedAt": T0})
        self.admission = None
        self.orders.clear()

    def _prescribe(self, rnd: random.Random) -> None:
        order_id = f"o{self.n}"
        self.orders[order_id] = "created"
        self.add(rnd.choice([ORDER_PLACED["medication"], ORDER_PLACED["imaging"]]), {
            "orderId": order_id, "admissionId": self.admission, "urgency":
            rnd.choice(["routine", "stat"]), "description": "thing", "departmentId": "CARD",
            "wardId": "CARD-1", "placedAt": T0, "placedBy": "7"})

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
            del self.orders[order_id]


Record = tuple[Patient | None, list[Admission], list[Order]]


def source_record(state: PatientState) -> Record:
    """The record a patient partition would hold for ``state`` (active parts only), as the
    domain objects ``patients.persistence.snapshots.read_snapshot`` returns."""
    patient = None
    if state.patient:
        p = state.patient
        patient = Patient(patient_id=state.patient_id, mrn=p["mrn"], given_name=p["givenName"],
                          family_name=p["familyName"],
                          birth_date=date.fromisoformat(p["birthDate"]), sex=p["sex"])
    admissions = []
    if state.admission:
        a = state.admission
        admissions.append(Admission(
            admission_id=a["admissionId"], patient_id=state.patient_id,
            department_id=a["departmentId"], ward_id=a["wardId"], bed=a["bed"],
            attending_id=a["attendingId"], attending_name=a["attendingName"], reason="r",
            started_at=a["startedAt"]))
    orders = [Order(order_id=o["orderId"], patient_id=state.patient_id,
                    admission_id=o["admissionId"], kind=o["kind"], urgency=o["urgency"],
                    description=o["description"], department_id=o["departmentId"],
                    ward_id=o["wardId"], placed_at=o["placedAt"], placed_by="7", details={},
                    status=o["status"], assignee_id=o["assigneeId"],
                    assignee_name=o["assigneeName"])
              for o in state.orders.values()]
    return patient, admissions, orders
