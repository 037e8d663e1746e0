"""HL7 destinations and the message log, each one small partition read whole.

``V_Hl7Destinations``: one document per destination (camelCase). ``V_Hl7Log``: one entry
per event and destination, id the message control id (MSH-10), written when the message is
handed out and updated at every attempt: its status is ``pending`` (owed, not yet
attempted: waiting behind the patient's earlier messages or for a worker), ``sending`` (an
attempt under way), ``accepted`` (AA), ``retrying`` (AE, AR
or no answer; the reason kept, never the message), ``dead`` (retries spent: the dead
letter, replayable) and expires after 90 days. The entry names the patient's MRN so an
admin can find a patient's messages; the message itself is never kept. The destinations'
and entries' repository: nothing else of ADT out reads their documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import StaleWrite
from hisadmin.core import keys
from hl7v2.outbound.destinations import Destination, UnknownDestination
from patients.domain.events import EventType

DESTINATIONS_PK = keys.view("Hl7Destinations")
DESTINATION_DOC = "Hl7Destination"
LOG_PK = keys.view("Hl7Log")
LOG_DOC = "Hl7LogEntry"
RETENTION = 90 * 24 * 3600  # seconds
STATUSES = ("pending", "sending", "accepted", "retrying", "dead")
OPEN_STATUSES = ("pending", "sending", "retrying", "dead")  # counted by /healthz


def _destination(doc: Document) -> Destination:
    c = doc["docContents"]
    return Destination(
        id=doc["id"], name=c["name"], host=c["host"], port=int(c["port"]),
        events=frozenset(EventType(e) for e in c["events"] if e in EventType._value2member_map_),
        active=bool(c["active"]), active_since=datetime.fromisoformat(c["activeSince"]),
        created_at=datetime.fromisoformat(c["createdAt"]), created_by=c["createdBy"]["username"],
        version=doc.get("_etag"),
    )


def _doc(dest: Destination, *, created_by: dict[str, Any], changed_by: dict[str, Any],
         changed_at: datetime) -> Document:
    return wrap(doc_id=dest.id, pk=DESTINATIONS_PK, doc_type=DESTINATION_DOC, contents={
        "name": dest.name, "host": dest.host, "port": dest.port,
        "events": sorted(e.value for e in dest.events), "active": dest.active,
        "activeSince": dest.active_since.isoformat(), "createdAt": dest.created_at.isoformat(),
        "createdBy": created_by, "changedAt": changed_at.isoformat(), "changedBy": changed_by})


def add(store: DocumentStore, dest: Destination, *, actor: dict[str, Any]) -> Destination:
    return _destination(store.create(_doc(dest, created_by=actor, changed_by=actor,
                                          changed_at=dest.created_at)))


def find(store: DocumentStore, dest_id: str) -> Destination | None:
    doc = store.try_read(DESTINATIONS_PK, dest_id)
    return None if doc is None or doc.get("docType") != DESTINATION_DOC else _destination(doc)


def get(store: DocumentStore, dest_id: str) -> Destination:
    dest = find(store, dest_id)
    if dest is None:
        raise UnknownDestination(f"No HL7 destination {dest_id}.")
    return dest


def all_destinations(store: DocumentStore) -> list[Destination]:
    docs = store.query_all(DESTINATIONS_PK, Query(order_by=(("id", "ASC"),)))
    return [_destination(d) for d in docs if d.get("docType") == DESTINATION_DOC]


def any_destination(store: DocumentStore) -> bool:
    """Whether there is a destination at all (one count query of a small partition)."""
    return store.count_query(
        DESTINATIONS_PK, Query(where=(Cond("docType", "=", DESTINATION_DOC),))) > 0


def replace(store: DocumentStore, dest: Destination, *, actor: dict[str, Any], now: datetime,
            if_match: str) -> Destination:
    """Save ``dest`` over the document read at ``if_match`` (:class:`StaleWrite` if it
    changed since)."""
    doc = store.try_read(DESTINATIONS_PK, dest.id)
    if doc is None:
        raise UnknownDestination(f"No HL7 destination {dest.id}.")
    if doc["_etag"] != if_match:
        raise StaleWrite(DESTINATIONS_PK, dest.id)
    new = _doc(dest, created_by=doc["docContents"]["createdBy"], changed_by=actor, changed_at=now)
    try:
        return _destination(store.replace(new, if_match=if_match))
    except errors.PreconditionFailed:
        raise StaleWrite(DESTINATIONS_PK, dest.id) from None


def remove(store: DocumentStore, dest_id: str, *, if_match: str | None = None) -> None:
    try:
        store.delete(DESTINATIONS_PK, dest_id, if_match=if_match)
    except errors.NotFound:
        raise UnknownDestination(f"No HL7 destination {dest_id}.") from None
    except errors.PreconditionFailed:
        raise StaleWrite(DESTINATIONS_PK, dest_id) from None


# ------------------------------------------------------------------ the message log


@dataclass(frozen=True)
class LogEntry:
    control_id: str
    destination_id: str
    stream: str
    seq: int
    event_type: str
    trigger: str  # "A01" …
    mrn: str
    status: str  # one of STATUSES
    attempts: int
    reason: str  # why the last attempt failed ("" when it did not)
    at: str  # ISO 8601, the last attempt

    def as_dict(self) -> dict[str, Any]:
        """snake_case, as the API and pages show it."""
        return {"control_id": self.control_id, "destination_id": self.destination_id,
                "stream": self.stream, "seq": self.seq, "event_type": self.event_type,
                "trigger": self.trigger, "mrn": self.mrn, "status": self.status,
                "attempts": self.attempts, "reason": self.reason, "at": self.at}


def _entry(doc: Document) -> LogEntry:
    c = doc["docContents"]
    return LogEntry(control_id=doc["id"], destination_id=c["destination"], stream=c["stream"],
                    seq=int(c["seq"]), event_type=c["eventType"], trigger=c["trigger"],
                    mrn=c.get("mrn") or "", status=c["status"], attempts=int(c["attempts"]),
                    reason=c.get("reason") or "", at=c["at"])


def log_attempt(store: DocumentStore, entry: LogEntry) -> LogEntry:
    """Write (or overwrite) the entry of one event to one destination."""
    doc = store.upsert(wrap(doc_id=entry.control_id, pk=LOG_PK, doc_type=LOG_DOC, contents={
        "destination": entry.destination_id, "stream": entry.stream, "seq": entry.seq,
        "eventType": entry.event_type, "trigger": entry.trigger, "mrn": entry.mrn,
        "status": entry.status, "attempts": entry.attempts, "reason": entry.reason[:300],
        "at": entry.at}, ttl=RETENTION))
    return _entry(doc)


def log_pending(store: DocumentStore, entry: LogEntry) -> None:
    """Write the entry of a message handed out, unless it has one (a later status stands)."""
    try:
        store.create(wrap(doc_id=entry.control_id, pk=LOG_PK, doc_type=LOG_DOC, contents={
            "destination": entry.destination_id, "stream": entry.stream, "seq": entry.seq,
            "eventType": entry.event_type, "trigger": entry.trigger, "mrn": entry.mrn,
            "status": entry.status, "attempts": entry.attempts, "reason": "",
            "at": entry.at}, ttl=RETENTION))
    except errors.Conflict:
        pass


def open_counts(store: DocumentStore, destination_ids: list[str]) -> dict[str, dict[str, int]]:
    """Destination id → how many of its messages are pending, sending, retrying and dead
    (count queries in the engine: the log is not read)."""
    return {dest: {status: store.count_query(LOG_PK, Query(where=(
        Cond("docType", "=", LOG_DOC), Cond("docContents.destination", "=", dest),
        Cond("docContents.status", "=", status)))) for status in OPEN_STATUSES}
        for dest in destination_ids}


def find_entry(store: DocumentStore, control_id: str) -> LogEntry | None:
    doc = store.try_read(LOG_PK, control_id)
    return None if doc is None else _entry(doc)


def entries(store: DocumentStore, *, mrn: str = "", control_id: str = "", status: str = "",
            limit: int = 200) -> list[LogEntry]:
    """The log, newest first, narrowed by MRN, control id and status (exact matches)."""
    docs = store.query_all(LOG_PK, Query(where=(Cond("docType", "=", LOG_DOC),)))
    found = [_entry(d) for d in docs]
    found = [e for e in found
             if (not mrn or e.mrn == mrn.strip().upper())
             and (not control_id or e.control_id == control_id.strip().upper())
             and (not status or e.status == status)]
    found.sort(key=lambda e: e.at, reverse=True)
    return found[:limit]


def counts(store: DocumentStore) -> dict[tuple[str, str], int]:
    """(destination id, status) → how many log entries."""
    out: dict[tuple[str, str], int] = {}
    for doc in store.query_all(LOG_PK, Query(where=(Cond("docType", "=", LOG_DOC),))):
        key = (doc["docContents"]["destination"], doc["docContents"]["status"])
        out[key] = out.get(key, 0) + 1
    return out


def now_iso() -> str:
    return datetime.now(UTC).isoformat()
