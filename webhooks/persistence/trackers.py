"""Delivery trackers: per subscription and patient, how far deliveries got, and who is on it.

``V_WebhookTrack_<patientId>/sub-<subscriptionId>``, camelCase:

- ``delivered``: the last sequence done (delivered, skipped or dead-lettered);
- ``wanted``: the highest sequence a task asked for while another held the claim;
- ``claim`` / ``claimUntil``: the task delivering now (a token) and until when the claim
  holds (a killed worker's claim simply expires);
- ``failing``: the sequence being retried, its attempts, when the next one is due, since
  when it fails (``since``: the retry budget counts from it) and whether the stream is
  ``held`` there (the budget spent: nothing later goes until the message is replayed).

Every write is guarded by the etag read, so two tasks never both think they own the claim.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import DocumentStore
from hisadmin.core import keys

DOC_TYPE = "WebhookTracker"
# The kinds of receiver the drain delivers to, as the tracker's id starts: a webhook
# subscription (``sub-<id>``) or an HL7 destination (``hl7-<id>``), side by side in the
# patient's tracker partition.
SUBSCRIPTION = "sub"
HL7_DESTINATION = "hl7"


class TrackerChanged(Exception):
    """Someone wrote the tracker since it was read: read it again."""


@dataclass(frozen=True)
class Tracker:
    subscription_id: str
    patient_id: str
    delivered: int = 0
    wanted: int = 0
    claim: str | None = None
    claim_until: float = 0.0
    failing_seq: int | None = None
    failing_attempts: int = 0
    retry_at: float = 0.0
    failing_since: float = 0.0  # when the failing sequence first failed
    held: bool = False  # the retry budget spent: the stream waits here until replayed
    etag: str | None = None  # None: not stored yet
    started: bool = False  # False until the first delivery decided where to start
    kind: str = SUBSCRIPTION  # which kind of receiver ``subscription_id`` names

    def claimed_by_other(self, token: str, now: float) -> bool:
        return self.claim is not None and self.claim != token and self.claim_until > now

    def backing_off(self, now: float) -> bool:
        return self.failing_seq is not None and (self.held or self.retry_at > now)

    def but(self, **changes: Any) -> Tracker:
        return replace(self, **changes)


def tracker_pk(patient_id: str) -> str:
    return keys.view("WebhookTrack", patient_id)


def tracker_id(subscription_id: str, kind: str = SUBSCRIPTION) -> str:
    return f"{kind}-{subscription_id}"


def read(store: DocumentStore, subscription_id: str, patient_id: str, *,
         kind: str = SUBSCRIPTION) -> Tracker:
    doc = store.try_read(tracker_pk(patient_id), tracker_id(subscription_id, kind))
    if doc is None:
        return Tracker(subscription_id, patient_id, kind=kind)
    c = doc["docContents"]
    failing = c.get("failing") or {}
    return Tracker(
        subscription_id,
        patient_id,
        delivered=int(c["delivered"]),
        wanted=int(c.get("wanted", 0)),
        claim=c.get("claim"),
        claim_until=float(c.get("claimUntil", 0)),
        failing_seq=failing.get("seq"),
        failing_attempts=int(failing.get("attempts", 0)),
        retry_at=float(failing.get("retryAt", 0)),
        failing_since=float(failing.get("since", 0)),
        held=bool(failing.get("held", False)),
        etag=doc["_etag"],
        started=True,
        kind=kind,
    )


def save(store: DocumentStore, tracker: Tracker) -> Tracker:
    """Write ``tracker`` over the version it was read at; :class:`TrackerChanged` if it moved."""
    failing = (
        None
        if tracker.failing_seq is None
        else {
            "seq": tracker.failing_seq,
            "attempts": tracker.failing_attempts,
            "retryAt": tracker.retry_at,
            "since": tracker.failing_since,
            "held": tracker.held,
        }
    )
    doc = wrap(
        doc_id=tracker_id(tracker.subscription_id, tracker.kind),
        pk=tracker_pk(tracker.patient_id),
        doc_type=DOC_TYPE,
        contents={
            "subscription": tracker.subscription_id,
            "delivered": tracker.delivered,
            "wanted": tracker.wanted,
            "claim": tracker.claim,
            "claimUntil": tracker.claim_until,
            "failing": failing,
        },
    )
    try:
        saved = (
            store.create(doc) if tracker.etag is None else store.replace(doc, if_match=tracker.etag)
        )
    except (errors.Conflict, errors.PreconditionFailed, errors.NotFound):
        raise TrackerChanged from None
    return tracker.but(etag=saved["_etag"], started=True)
