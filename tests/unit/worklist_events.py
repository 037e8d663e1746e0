"""Builders of event contents in the documented shapes, for projection tests."""

from __future__ import annotations

import random
from typing import Any

from cosmos_backend.envelope import wrap
from worklists.projection.rules import PatientState

T0 = "2026-01-05T08:00:00+00:00"


class History:
    """A valid event history of one patient, grown one random command at a time."""

    def __init__(self, patient_id: str = "p1") -> None:
        self.patient_id = patient_id
        self.events: list[dict[str, Any]] = []
        self.admission: str | None = None
        self.orders: dict[str, str] = {}  # active order id → status
        self.n = 0

    def add(self, etype: str, data: dict[str, Any]) -> None:
        self.events.append({"seq": len(self.events) + 1, "type": etype, "data": data,
                            "stream": f"P_{self.patient_id}", "occurredAt": T0})

    def register(self, family: str = "Ibáñez", given: str = "Inés") -> None:
        self.add("PatientRegistered", {"patientId": self.patient_id, "mrn": "H0000001",
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
        self.add("PatientDemographicsUpdated", {"familyName": rnd.choice(["Núñez", "Smith"])})

    def _allergy(self, rnd: random.Random) -> None:
        self.add("AllergyAdded", {"allergyId": f"al{self.n}", "substance": "x"})

    def _admit(self, rnd: random.Random) -> None:
        self.admission = f"a{self.n}"
        dept = rnd.choice(["CARD", "MED"])
        self.add("AdmissionStarted", {"admissionId": self.admission, "departmentId": dept,
                                      "wardId": f"{dept}-1", "bed": f"B{self.n}",
                                      "attendingId": "7", "attendingName": "Dr Who",
                                      "reason": "r", "startedAt": T0})

    def _transfer(self, rnd: random.Random) -> None:
        dept = rnd.choice(["CARD", "MED"])
        self.add("PatientTransferred", {"admissionId": self.admission, "toWard": f"{dept}-2",
                                        "toBed": None, "toDepartment": dept})

    def _discharge(self, rnd: random.Random) -> None:
        self.add("AdmissionEnded", {"admissionId": self.admission, "disposition": "home",
                                    "endedAt": T0})
        self.admission = None
        self.orders.clear()

    def _prescribe(self, rnd: random.Random) -> None:
        order_id = f"o{self.n}"
        self.orders[order_id] = "created"
        self.add(rnd.choice(["MedicationPrescribed", "ImagingExamRequested"]), {
            "orderId": order_id, "admissionId": self.admission, "urgency":
            rnd.choice(["routine", "stat"]), "description": "thing", "departmentId": "CARD",
            "wardId": "CARD-1", "placedAt": T0, "placedBy": "7"})

    def _assign(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(self.orders))
        self.add("OrderAssigned", {"orderId": order_id, "assigneeId": rnd.choice(["7", "8"]),
                                   "assigneeName": "Nurse"})

    def _unassign(self, rnd: random.Random) -> None:
        self.add("OrderUnassigned", {"orderId": rnd.choice(sorted(self.orders))})

    def _progress(self, rnd: random.Random) -> None:
        order_id = rnd.choice(sorted(self.orders))
        etype = rnd.choice(["OrderReady", "OrderStarted", "OrderCompleted", "OrderCancelled"])
        self.add(etype, {"orderId": order_id, "reason": "r"})
        if etype in ("OrderCompleted", "OrderCancelled"):
            del self.orders[order_id]


def source_docs(state: PatientState) -> list[dict[str, Any]]:
    """The documents a patient partition would hold for ``state`` (active ones only)."""
    pk = f"P_{state.patient_id}"
    docs = []
    if state.patient:
        docs.append(wrap(doc_id="patient", pk=pk, doc_type="Patient",
                         contents={"patientId": state.patient_id, **state.patient}))
    if state.admission:
        docs.append(wrap(doc_id=f"adm-{state.admission['admissionId']}", pk=pk,
                         doc_type="Admission", contents={**state.admission, "status": "active"}))
    for order in state.orders.values():
        sub = {"medication": "MedicationPrescription", "imaging": "ImagingExam"}[order["kind"]]
        docs.append(wrap(doc_id=f"ord-{order['orderId']}", pk=pk, doc_type="Order",
                         sub_type=sub, contents=order))
    return docs
