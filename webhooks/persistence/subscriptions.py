"""Subscription documents: one small partition (``V_Webhooks``), read whole.

A hospital has a handful of subscriptions, so listing them is one single-partition query.
Documents are camelCase; the secret is stored sealed (:mod:`webhooks.persistence.secrets`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cosmos_backend import errors
from cosmos_backend.envelope import wrap
from cosmos_backend.store import Cond, Document, DocumentStore, Query
from cosmos_backend.uow import StaleWrite
from hisadmin.core import keys
from patients.domain.events import EventType
from webhooks.domain.subscriptions import Subscription, UnknownSubscription
from webhooks.persistence.secrets import seal, unseal

SUBSCRIPTIONS_PK = keys.view("Webhooks")
DOC_TYPE = "WebhookSubscription"


def _subscription(doc: Document) -> Subscription:
    c = doc["docContents"]
    return Subscription(
        id=doc["id"],
        url=c["url"],
        events=frozenset(EventType(e) for e in c["events"] if e in EventType._value2member_map_),
        active=bool(c["active"]),
        active_since=datetime.fromisoformat(c["activeSince"]),
        created_at=datetime.fromisoformat(c["createdAt"]),
        created_by=c["createdBy"]["username"],
        version=doc.get("_etag"),
    )


def _contents(
    sub: Subscription,
    sealed: str,
    *,
    changed_by: dict[str, Any],
    changed_at: datetime,
    created_by: dict[str, Any],
) -> dict[str, Any]:
    return {
        "url": sub.url,
        "events": sorted(e.value for e in sub.events),
        "secretSealed": sealed,
        "active": sub.active,
        "activeSince": sub.active_since.isoformat(),
        "createdAt": sub.created_at.isoformat(),
        "createdBy": created_by,
        "changedAt": changed_at.isoformat(),
        "changedBy": changed_by,
    }


def add(
    store: DocumentStore, sub: Subscription, secret: str, *, actor: dict[str, Any]
) -> Subscription:
    doc = store.create(
        wrap(
            doc_id=sub.id,
            pk=SUBSCRIPTIONS_PK,
            doc_type=DOC_TYPE,
            contents=_contents(
                sub, seal(secret), changed_by=actor, changed_at=sub.created_at, created_by=actor
            ),
        )
    )
    return _subscription(doc)


def get(store: DocumentStore, sub_id: str) -> Subscription:
    doc = store.try_read(SUBSCRIPTIONS_PK, sub_id)
    if doc is None:
        raise UnknownSubscription(f"No subscription {sub_id}.")
    return _subscription(doc)


def find(store: DocumentStore, sub_id: str) -> Subscription | None:
    doc = store.try_read(SUBSCRIPTIONS_PK, sub_id)
    return None if doc is None else _subscription(doc)


def secret_of(store: DocumentStore, sub_id: str) -> str:
    doc = store.read(SUBSCRIPTIONS_PK, sub_id)
    return unseal(doc["docContents"]["secretSealed"])


def any_subscription(store: DocumentStore) -> bool:
    """Whether there is a subscription at all (one count query of a small partition)."""
    return store.count_query(SUBSCRIPTIONS_PK, Query(where=(Cond("docType", "=", DOC_TYPE),))) > 0


def all_subscriptions(store: DocumentStore) -> list[Subscription]:
    docs = store.query_all(SUBSCRIPTIONS_PK, Query(order_by=(("id", "ASC"),)))
    return [_subscription(d) for d in docs if d.get("docType") == DOC_TYPE]


def replace(
    store: DocumentStore, sub: Subscription, *, actor: dict[str, Any], now: datetime, if_match: str
) -> Subscription:
    """Save ``sub`` over the document read at ``if_match`` (``PreconditionFailed`` if it
    changed since); the sealed secret and its creator are kept."""
    doc = store.try_read(SUBSCRIPTIONS_PK, sub.id)
    if doc is None:
        raise UnknownSubscription(f"No subscription {sub.id}.")
    if doc["_etag"] != if_match:
        raise StaleWrite(SUBSCRIPTIONS_PK, sub.id)
    c = doc["docContents"]
    new = wrap(
        doc_id=sub.id,
        pk=SUBSCRIPTIONS_PK,
        doc_type=DOC_TYPE,
        contents=_contents(
            sub, c["secretSealed"], changed_by=actor, changed_at=now, created_by=c["createdBy"]
        ),
    )
    try:
        return _subscription(store.replace(new, if_match=if_match))
    except errors.PreconditionFailed:
        raise StaleWrite(SUBSCRIPTIONS_PK, sub.id) from None


def remove(store: DocumentStore, sub_id: str, *, if_match: str | None = None) -> None:
    try:
        store.delete(SUBSCRIPTIONS_PK, sub_id, if_match=if_match)
    except errors.NotFound:
        raise UnknownSubscription(f"No subscription {sub_id}.") from None
    except errors.PreconditionFailed:
        raise StaleWrite(SUBSCRIPTIONS_PK, sub_id) from None
