"""JSON API for webhook subscriptions (``/api/v1/subscriptions``) and their dead letters
(``/api/v1/webhooks/dead-letters``). Admins only (``manage_webhooks``).

The secret is given back once, in the answer to the POST that created it. PATCH needs the
subscription's ETag in ``If-Match`` (428 ``precondition-required`` without it, 412 when it
is stale); DELETE takes one too, optionally.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Header, Router, Schema

from hisadmin.core import policy
from hisadmin.core.inputs import Text
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response, problem
from hisadmin.core.store import get_store
from patients.api.schemas import ERRORS_SCHEMA, Problem, StrictIn
from webhooks import use_cases
from webhooks.delivery.tasks import send_replay
from webhooks.domain.subscriptions import (
    MAX_SECRET_LENGTH,
    MAX_URL_LENGTH,
    PATIENT_EVENT_TYPES,
    Subscription,
)
from webhooks.persistence import deadletters, subscriptions

router = Router(tags=["webhooks"])
ACTION = "manage_webhooks"
ERRORS = {**ERRORS_SCHEMA, 428: Problem}


class SubscriptionIn(StrictIn):
    url: Text(MAX_URL_LENGTH) = Field(description="an absolute http:// or https:// URL")
    events: list[Text(60)] = Field(max_length=100, description="event type names, e.g. "
                                   "AdmissionStarted")
    secret: Text(MAX_SECRET_LENGTH) = Field(description="16 to 200 characters; signs every "
                                            "delivery")


class ActiveIn(StrictIn):
    active: bool


class SubscriptionOut(Schema):
    id: str
    url: str
    events: list[str]
    active: bool
    active_since: str = Field(description="events that occurred before are not delivered")
    created_at: str
    created_by: str
    etag: str | None = Field(None, description="send it in If-Match to change or delete")


class CreatedOut(SubscriptionOut):
    secret: str = Field(description="shown this once; deliveries are signed with it")


class DeadLetterOut(Schema):
    id: str
    kind: str = Field(description="delivery: one subscription's; fan-out: failed before any "
                      "subscription (subscription_id empty), its patient's stream held")
    subscription_id: str
    stream: str
    seq: int
    event_type: str
    reason: str
    attempts: int
    failed_at: str


class ReplayIn(StrictIn):
    ids: list[Text(200)] | None = Field(None, max_length=1000,
                                        description="the letters to replay; omitted: all")


class ReplayOut(Schema):
    queued: int


def subscription_out(sub: Subscription) -> dict[str, Any]:
    return {
        "id": sub.id,
        "url": sub.url,
        "events": sorted(e.value for e in sub.events),
        "active": sub.active,
        "active_since": sub.active_since.isoformat(),
        "created_at": sub.created_at.isoformat(),
        "created_by": sub.created_by,
        "etag": sub.version,
    }


@router.post(
    "/subscriptions",
    response={201: CreatedOut, **ERRORS},
    summary="Subscribe a URL to patient events",
)
def create(request: HttpRequest, payload: SubscriptionIn) -> HttpResponse:
    policy.require(request.user, ACTION)
    sub, secret = use_cases.subscribe(
        use_cases.Subscribe(url=payload.url, events=payload.events, secret=payload.secret),
        get_store(),
        actor=actor_for(request.user),
    )
    return json_response(
        request,
        {**subscription_out(sub), "secret": secret},
        201,
        etag=sub.version,
        location=f"/api/v1/subscriptions/{sub.id}",
    )


@router.get(
    "/subscriptions", response={200: list[SubscriptionOut], **ERRORS}, summary="Every subscription"
)
def list_subscriptions(request: HttpRequest) -> list[dict[str, Any]]:
    policy.require(request.user, ACTION)
    return [subscription_out(s) for s in subscriptions.all_subscriptions(get_store())]


@router.get(
    "/subscriptions/event-types",
    response={200: list[str], **ERRORS},
    summary="The event type names a subscription may name",
)
def event_types(request: HttpRequest) -> list[str]:
    policy.require(request.user, ACTION)
    return [t.value for t in PATIENT_EVENT_TYPES]


@router.get("/subscriptions/{subscription_id}", response={200: SubscriptionOut, **ERRORS})
def read(request: HttpRequest, subscription_id: str) -> HttpResponse:
    policy.require(request.user, ACTION)
    sub = subscriptions.get(get_store(), subscription_id)
    return json_response(request, subscription_out(sub), etag=sub.version)


@router.patch(
    "/subscriptions/{subscription_id}",
    response={200: SubscriptionOut, **ERRORS},
    summary="Switch deliveries on or off",
)
def patch(
    request: HttpRequest,
    subscription_id: str,
    payload: ActiveIn,
    if_match: str | None = Header(None, alias="If-Match"),
) -> HttpResponse:
    """``If-Match``: the subscription's ETag (required)."""
    policy.require(request.user, ACTION)
    if not if_match:
        return precondition_required(request)
    sub = use_cases.set_active(
        use_cases.SetActive(subscription_id, payload.active, if_match),
        get_store(),
        actor=actor_for(request.user),
    )
    return json_response(request, subscription_out(sub), etag=sub.version)


@router.delete(
    "/subscriptions/{subscription_id}",
    response={204: None, **ERRORS},
    summary="Remove a subscription",
)
def delete(
    request: HttpRequest,
    subscription_id: str,
    if_match: str | None = Header(None, alias="If-Match"),
) -> HttpResponse:
    """``If-Match`` (optional): delete only if unchanged since read."""
    policy.require(request.user, ACTION)
    use_cases.unsubscribe(
        use_cases.Unsubscribe(subscription_id, if_match or None),
        get_store(),
        actor=actor_for(request.user),
    )
    return HttpResponse(status=204)


@router.get(
    "/webhooks/dead-letters",
    response={200: list[DeadLetterOut], **ERRORS},
    summary="Deliveries that failed for good",
)
def dead_letters(request: HttpRequest) -> list[dict[str, Any]]:
    policy.require(request.user, ACTION)
    return [letter.as_dict() for letter in deadletters.all_letters(get_store())]


@router.post(
    "/webhooks/dead-letters/replay",
    response={202: ReplayOut, **ERRORS},
    summary="Queue dead letters for one more delivery each",
)
def replay(request: HttpRequest, payload: ReplayIn) -> HttpResponse:
    policy.require(request.user, ACTION)
    queued = use_cases.replay_dead_letters(
        payload.ids, get_store(), actor=actor_for(request.user), send=send_replay
    )
    return json_response(request, {"queued": queued}, 202)


def precondition_required(request: HttpRequest) -> HttpResponse:
    return problem(
        request,
        428,
        "Precondition required",
        "Send the subscription's ETag in If-Match (GET it first).",
        type="/api/v1/problems/precondition-required",
    )
