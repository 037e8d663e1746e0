"""JSON API for HL7 destinations (``/api/v1/hl7/destinations``), the message log
(``/api/v1/hl7/messages``) and the dead letters' replay. Admins only (``manage_webhooks``:
the admins who manage the webhooks manage the engine's channels too).

A thin adapter over :mod:`hl7v2.outbound.use_cases`: the address rules are the use cases'
(422 on ``host`` naming the rule). PATCH needs the destination's ETag in ``If-Match`` (428
``precondition-required`` without it, 412 when it is stale); DELETE takes one optionally.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Field, Header, Router, Schema

from hisadmin.core import policy
from hisadmin.core.inputs import Text
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, require_if_match
from hisadmin.core.store import get_store
from hl7v2.outbound import audit, tasks, use_cases
from hl7v2.outbound.destinations import NAME_MAX, TRIGGERS, Destination
from hl7v2.persistence import store
from patients.api.schemas import ERRORS_SCHEMA, Problem, StrictIn

router = Router(tags=["hl7"])
ACTION = "manage_webhooks"
ERRORS = {**ERRORS_SCHEMA, 428: Problem}
EVENTS_HELP = "patient event names sent as ADT: " + ", ".join(t.value for t in TRIGGERS)
Status = Literal["pending", "sending", "accepted", "retrying", "dead"]


class DestinationIn(StrictIn):
    name: Text(NAME_MAX) = Field(description="what admins call the engine's channel")
    host: Text(253) = Field(description="the engine's host name or IP address")
    port: int = Field(description="the channel's MLLP port, 1 to 65535 (often 2575)")
    events: list[Text(60)] = Field(max_length=20, description=EVENTS_HELP)


class DestinationChangeIn(StrictIn):
    name: Text(NAME_MAX) | None = None
    host: Text(253) | None = None
    port: int | None = None
    events: list[Text(60)] | None = Field(None, max_length=20, description=EVENTS_HELP)
    active: bool | None = Field(None, description="false: messages stop; true again: the "
                                "events that occur from then on are sent")


class DestinationOut(Schema):
    id: str
    name: str
    host: str
    port: int
    events: list[str]
    active: bool
    active_since: str = Field(description="events that occurred before are not sent")
    created_at: str
    created_by: str
    etag: str | None = Field(None, description="send it in If-Match to change or delete")


class MessageOut(Schema):
    control_id: str = Field(description="MSH-10, the same on every retry and replay")
    destination_id: str
    stream: str
    seq: int
    event_type: str
    trigger: str = Field(description="the ADT trigger event, e.g. A01")
    mrn: str
    status: str = Field(description="pending (owed, not attempted yet), sending, accepted, retrying "
                        "or dead (replayable)")
    attempts: int
    reason: str = Field(description="why the last attempt failed: an ACK code or an error "
                        "kind; empty when it did not")
    at: str = Field(description="the last attempt, ISO 8601")


class ReplayIn(StrictIn):
    control_ids: list[Text(40)] | None = Field(None, max_length=1000, description="the dead "
                                               "letters to replay; omitted: all")


class ReplayOut(Schema):
    queued: int


def destination_out(dest: Destination) -> dict[str, Any]:
    return {"id": dest.id, "name": dest.name, "host": dest.host, "port": dest.port,
            "events": sorted(e.value for e in dest.events), "active": dest.active,
            "active_since": dest.active_since.isoformat(),
            "created_at": dest.created_at.isoformat(), "created_by": dest.created_by,
            "etag": dest.version}


@router.post("/destinations", response={201: DestinationOut, **ERRORS},
             summary="Add an HL7 destination (an engine's MLLP channel)")
def create(request: HttpRequest, payload: DestinationIn) -> HttpResponse:
    policy.require(request.user, ACTION)
    dest = use_cases.add_destination(
        use_cases.AddDestination(name=payload.name, host=payload.host, port=payload.port,
                                 events=payload.events),
        get_store(), actor=actor_for(request.user))
    return json_response(request, destination_out(dest), 201, etag=dest.version,
                         location=f"/api/v1/hl7/destinations/{dest.id}")


@router.get("/destinations", response={200: list[DestinationOut], **ERRORS},
            summary="Every HL7 destination")
def list_destinations(request: HttpRequest) -> list[dict[str, Any]]:
    policy.require(request.user, ACTION)
    return [destination_out(d) for d in store.all_destinations(get_store())]


@router.get("/destinations/{destination_id}", response={200: DestinationOut, **ERRORS},
            summary="One HL7 destination, with its ETag")
def read(request: HttpRequest, destination_id: str) -> HttpResponse:
    policy.require(request.user, ACTION)
    dest = store.get(get_store(), destination_id)
    return json_response(request, destination_out(dest), etag=dest.version)


@router.patch("/destinations/{destination_id}", response={200: DestinationOut, **ERRORS},
              summary="Change a destination, or switch it off or on")
def patch(request: HttpRequest, destination_id: str, payload: DestinationChangeIn,
          if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match``: the destination's ETag (required)."""
    policy.require(request.user, ACTION)
    version = require_if_match(if_match)
    dest = use_cases.change_destination(
        use_cases.ChangeDestination(destination_id, version, name=payload.name,
                                    host=payload.host, port=payload.port,
                                    events=payload.events, active=payload.active),
        get_store(), actor=actor_for(request.user))
    return json_response(request, destination_out(dest), etag=dest.version)


@router.delete("/destinations/{destination_id}", response={204: None, **ERRORS},
               summary="Remove an HL7 destination")
def delete(request: HttpRequest, destination_id: str,
           if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """``If-Match`` (optional): delete only if unchanged since read."""
    policy.require(request.user, ACTION)
    use_cases.remove_destination(destination_id, get_store(), actor=actor_for(request.user),
                                 expected_version=if_match or None)
    return HttpResponse(status=204)


@router.get("/messages", response={200: list[MessageOut], **ERRORS},
            summary="The message log, newest first (200 at most)")
def messages(request: HttpRequest, mrn: Text(40) = "", control_id: Text(40) = "",
             status: Status | None = None) -> list[dict[str, Any]]:
    """Exact matches on the MRN, the control id (MSH-10) and the status. The answer names
    patients (MRNs): it is in the access audit, as a view of the record searched by MRN and
    as a list view otherwise."""
    policy.require(request.user, ACTION)
    found = store.entries(get_store(), mrn=mrn, control_id=control_id, status=status or "")
    audit.note_read(request, found, searched_mrn=bool(mrn))
    return [e.as_dict() for e in found]


@router.post("/dead-letters/replay", response={202: ReplayOut, **ERRORS},
             summary="Queue dead-lettered messages for one more attempt each")
def replay(request: HttpRequest, payload: ReplayIn) -> HttpResponse:
    policy.require(request.user, ACTION)
    queued = use_cases.replay(payload.control_ids, get_store(), actor=actor_for(request.user),
                              send=tasks.send_replay)
    return json_response(request, {"queued": len(queued)}, 202)
