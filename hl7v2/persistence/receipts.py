"""Which messages were received: one document per sender and MSH-10, so a resend is
answered AA without recording twice.

The receipt is claimed (created) before the results are recorded and marked ``recorded``
after; a create is atomic, so two copies of one message arriving at once cannot both record
(the second finds the claim and is answered AR "being recorded", a system problem: the
engine resends). A message not recorded (AE, AR) gives its claim back, so the engine's
resend is processed anew. A recorded control id sent again with other content (a digest of
its segments after MSH is kept) is reported as reused, never taken for a resend. A claim left by a listener that crashed while recording is taken over once older than
``IN_FLIGHT_SECONDS``. Receipts live in ``M_HL7IN_<digest>`` (a unique-key partition, no
patient data) and expire after ``KEEP_DAYS``.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import keys

RECEIPT_ID = "receipt"
IN_FLIGHT_SECONDS = 60  # how long a claim is presumed still being recorded
KEEP_DAYS = 90  # far beyond any engine's resend window


class Claim(StrEnum):
    NEW = "new"  # ours to record
    TAKEN_OVER = "taken-over"  # ours, after a listener that crashed mid-way: maybe recorded
    RECORDED = "recorded"  # a duplicate: answered AA again, nothing recorded
    BUSY = "busy"  # another connection is recording it right now
    REUSED = "reused"  # recorded before with other content: the control id was reused


@dataclass(frozen=True)
class Receipt:
    claim: Claim
    doc: Document | None = None


def receipt_pk(sender: str, control_id: str) -> str:
    """The partition of one sender's control id (hashed: MSH-10 may hold any character)."""
    digest = hashlib.sha256(f"{sender}\x1f{control_id}".encode()).hexdigest()[:40]
    return keys.unique("HL7IN", digest)


def _doc(sender: str, control_id: str, state: str, **extra: str) -> Document:
    return wrap(doc_id=RECEIPT_ID, pk=receipt_pk(sender, control_id), doc_type="Hl7Receipt",
                contents={"controlId": control_id, "sender": sender, "state": state,
                          "at": datetime.now(UTC).isoformat(), **extra},
                ttl=KEEP_DAYS * 86400)


def claim(store: DocumentStore, sender: str, control_id: str, content: str = "") -> Receipt:
    """Claim ``control_id`` of ``sender`` for recording, or say why not. ``content``: a
    digest of what the message says (kept with the receipt): a recorded control id sent
    again with other content is :attr:`Claim.REUSED`, not a duplicate."""
    try:
        return Receipt(Claim.NEW, store.create(_doc(sender, control_id, "recording",
                                                    content=content)))
    except errors.Conflict:
        pass
    try:
        current = store.read(receipt_pk(sender, control_id), RECEIPT_ID)
    except errors.NotFound:  # given back between our create and read: the resend will do
        return Receipt(Claim.BUSY)
    if current["docContents"]["state"] == "recorded":
        kept = current["docContents"].get("content") or ""
        if content and kept and kept != content:
            return Receipt(Claim.REUSED, current)
        return Receipt(Claim.RECORDED, current)
    if time.time() - current["_ts"] < IN_FLIGHT_SECONDS:
        return Receipt(Claim.BUSY, current)
    try:
        doc = store.replace(_doc(sender, control_id, "recording", content=content),
                            if_match=current["_etag"])
    except (errors.PreconditionFailed, errors.NotFound):
        return Receipt(Claim.BUSY)
    return Receipt(Claim.TAKEN_OVER, doc)


def recorded(store: DocumentStore, receipt: Receipt, order_id: str) -> None:
    """Mark the claimed receipt recorded: from now on the control id is a duplicate."""
    assert receipt.doc is not None
    contents = receipt.doc["docContents"]
    store.replace(_doc(contents["sender"], contents["controlId"], "recorded",
                       orderId=order_id, content=contents.get("content") or ""),
                  if_match=receipt.doc["_etag"])


def give_back(store: DocumentStore, receipt: Receipt) -> None:
    """Forget the claim (the message was not recorded); a claim no longer ours is kept."""
    assert receipt.doc is not None
    try:
        store.delete(receipt.doc["partitionKey"], RECEIPT_ID, if_match=receipt.doc["_etag"])
    except (errors.NotFound, errors.PreconditionFailed):
        pass
