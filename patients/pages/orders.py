"""The order page: every field of one order, its overrides, administrations, results and
the history of its events, in words (thin: reads and labels, no command)."""

from __future__ import annotations

import re
from typing import Any

from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse

from cosmos_backend.store import DocumentStore
from hisadmin.core import policy
from hisadmin.core.local_time import human_time
from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from patients.domain.errors import UnknownOrder, UnknownPatient
from patients.domain.events import ORDER_PLACED
from patients.domain.orders import ADMINISTRABLE, CORE_FIELDS, actions_from
from patients.pages import audit, labels
from patients.pages.records import banner_context
from patients.persistence import queries

HISTORY_PAGE = 200  # events read per query while looking back for an order's own
# Fields the page shows in their own rows or sections, or that are internal.
SHOWN = frozenset({
    *CORE_FIELDS, "etag", "note", "overrides", "results", "medicationCode", "medicationName",
    "dose", "unit", "route", "frequency", "startAt", "endAt", "asNeeded", "modality",
    "modalityName", "bodyPart", "testCode", "testName",
    "frequencyHours",  # the frequency's hours: shown as the frequency's name
})


def order_history(store: DocumentStore, patient_id: str, order_id: str) -> list[dict[str, Any]]:
    """The events of one order, oldest first.

    Reads the patient's audit trail newest first, a page at a time, keeping the events whose
    ``orderId`` is this order's, and stops at the event that placed it: an order's history is
    never older than its placing, so only the events since then are read.
    """
    placing = set(ORDER_PLACED.values())
    found: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page, token = queries.events(store, patient_id, page_size=HISTORY_PAGE, continuation=token)
        for event in page:
            if (event.get("data") or {}).get("orderId") != order_id:
                continue
            found.append(event)
            if event.get("type") in placing:
                return found[::-1]
        if not token:
            return found[::-1]


def _other_fields(order: dict[str, Any]) -> list[tuple[str, Any]]:
    """Fields of the order's kind this page has no row for (added later), by a readable
    name, so every field is shown; an instant (``…At``) in the hospital's time, in words."""
    return [
        (re.sub(r"(?<!^)([A-Z])", r" \1", key).capitalize(),
         human_time(value) if key.endswith("At") else value)
        for key, value in sorted(order.items())
        if key not in SHOWN and not isinstance(value, dict | list) and value not in (None, "")
    ]


@requires("read")
def order_detail(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    store = get_store()
    try:
        chart = queries.chart(store, patient_id)
        order = queries.order(store, patient_id, order_id)
    except (UnknownPatient, UnknownOrder) as exc:
        raise Http404(str(exc)) from exc
    history = order_history(store, patient_id, order_id)
    other_fields = _other_fields(order)  # before the page adds its own keys
    names = labels.names(store, [*labels.order_usernames(order), *audit.actor_usernames(history)])
    labels.label_order(order, names)
    order["actions"] = actions_from(order["status"])
    order["administrable"] = order["kind"] == "medication" and order["status"] in ADMINISTRABLE
    for event in history:
        audit.label_event(event, names, {order_id: order})
    placed = next((e for e in history if e.get("type") in set(ORDER_PLACED.values())), None)
    user = request.user
    banner = banner_context(chart)
    context = {
        **chart,
        "banner": banner,
        "allergy": banner["allergy"],
        "order": order,
        "orders": [order],
        "history": history,
        "placed_by_name": placed["who"] if placed else order.get("placedBy", ""),
        "other_fields": other_fields,
        "can_order": policy.allows(user, "place_order"),
        "can_nurse": policy.allows(user, "administer"),
        "can_progress": policy.allows(user, "progress_order"),
        "can_print_label": policy.allows(user, "print_specimen_label"),
    }
    return admin.site.render(
        request,
        "patients/order_detail.html",
        context,
        title=f"{order['kind_label']} order: {order['description']}",
    )
