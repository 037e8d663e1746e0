"""Celery tasks of the patient record: thin adapters fed by the relay with ids only.

``patients.follow_up`` runs after commands whose effects reach past the patient's own
partition (the bed a discharge or transfer left). It re-reads the event by id, so the
message carries nothing but a stream key and a sequence number, and it is idempotent:
redelivery (acks late) does no harm.
"""

from __future__ import annotations

from celery import shared_task

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.store import get_store
from patients.persistence import queries
from patients.use_cases.beds import bed_left, give_bed_back


@shared_task(name="patients.follow_up", acks_late=True, ignore_result=True,
             autoretry_for=(Exception,), retry_backoff=True, max_retries=8)
def follow_up(stream_pk: str, seq: int) -> str:
    store = get_store("relay")
    event = queries.event(store, stream_pk, int(seq))
    if event is None:
        return "gone"  # expired: a late hold is taken over by the next admission anyway
    left = bed_left(event["type"], event.get("data") or {})
    if left is None:
        return "nothing to do"
    give_bed_back(left, UnitOfWork(store), actor=SYSTEM_ACTOR)
    return "bed given back"
