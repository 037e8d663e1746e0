"""Write clinical records the way the patients app does, for worklist tests.

Registration and admission go through the patients use cases; orders (no use case yet) are
written as documented in docs/data-model.md: the order document and its event in one batch.
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

from cosmos_backend.outbox import append_events
from cosmos_backend.store import DocumentStore, iter_feed
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.domain.events import ORDER_PLACED
from patients.domain.orders import Order
from patients.persistence.documents import order_from_doc, order_to_doc
from worklists.delivery import tasks
from worklists.delivery.relay import consumer_publisher
from worklists.persistence.feed import events_in


def register(store: DocumentStore, family: str, given: str = "Ann",
             born: date = date(1960, 5, 1), sex: str = "female") -> str:
    patient = use_cases.register_patient(use_cases.RegisterPatient(
        given_name=given, family_name=family, birth_date=born, sex=sex), UnitOfWork(store),
        actor=SYSTEM_ACTOR)
    return patient.patient_id


def admit(store: DocumentStore, patient_id: str, department: str = "CARD",
          ward: str = "CARD-A", bed: str = "") -> str:
    admission = use_cases.admit_patient(use_cases.AdmitPatient(
        patient_id=patient_id, department_id=department, ward_id=ward, reason="obs", bed=bed),
        UnitOfWork(store), actor=SYSTEM_ACTOR)
    return admission.admission_id


def discharge(store: DocumentStore, patient_id: str) -> None:
    use_cases.discharge_patient(use_cases.DischargePatient(patient_id=patient_id,
                                                         disposition="home"),
                               UnitOfWork(store), actor=SYSTEM_ACTOR)


def place_order(store: DocumentStore, patient_id: str, admission_id: str, *,
                department: str = "CARD", urgency: str = "routine",
                description: str = "Chest X-ray") -> str:
    order_id = str(uuid.uuid4())
    now = datetime.now(UTC).isoformat()
    contents = {"orderId": order_id, "patientId": patient_id, "admissionId": admission_id,
                "kind": "imaging", "status": "created", "urgency": urgency,
                "description": description, "departmentId": department, "wardId": None,
                "assigneeId": None, "assigneeName": None, "placedAt": now, "placedBy": "7",
                "modality": "CR", "bodyPart": "chest", "version": 1}
    uow = UnitOfWork(store)
    uow.add(order_to_doc(Order.from_record(contents)))
    append_events(uow, keys.patient(patient_id), [(ORDER_PLACED["imaging"], contents)],
                  actor=SYSTEM_ACTOR.as_dict())
    uow.commit()
    return order_id


def update_order(store: DocumentStore, patient_id: str, order_id: str, event: str,
                 **changes: object) -> None:
    uow = UnitOfWork(store)
    doc = uow.get(keys.patient(patient_id), f"ord-{order_id}")
    doc["docContents"].update(changes)
    uow.update(order_to_doc(order_from_doc(doc)))  # the store's mapping: marks an open order
    append_events(uow, keys.patient(patient_id), [(event, {"orderId": order_id, **changes})],
                  actor=SYSTEM_ACTOR.as_dict())
    uow.commit()


def relay_page(store: DocumentStore, after: dict[str, str | None]) -> list[list]:
    """The projections' page message (``[[stream, [seq, …]], …]``), as the relay's
    publisher makes it, for everything written since ``after`` (feed range → continuation,
    moved on)."""
    found = []
    for rng in store.feed_ranges():
        for page in iter_feed(store, rng, after.get(rng)):
            found += events_in(page.items)
            after[rng] = page.continuation
    sent: list[tuple[str, list]] = []
    consumer_publisher(lambda task, args, **_: sent.append((task, args)))(found)
    return [stream for task, args in sent if task == tasks.PAGE_TASK for stream in args[0]]
