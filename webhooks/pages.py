"""Admin pages for webhooks: the subscriptions (add, switch off or on, delete) and what
failed for good (replay): deliveries, and fan-outs with the patients' streams they hold.
Admins only (``manage_webhooks``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from hisadmin.core import access_log, held_streams, keys
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store
from patients.domain.errors import DomainError
from patients.domain.events import EVENT_LABELS, EventType
from webhooks import receiver_pages, use_cases
from webhooks.delivery.tasks import send_replay
from webhooks.domain.subscriptions import (
    MAX_SECRET_LENGTH,
    PATIENT_EVENT_TYPES,
    Subscription,
    UnknownSubscription,
)
from webhooks.persistence import deadletters, subscriptions

ACTION = "manage_webhooks"


def event_label(name: str) -> str:
    kind = EventType._value2member_map_.get(name)
    return EVENT_LABELS.get(kind, name) if isinstance(kind, EventType) else name


class SubscriptionForm(CheckedForm):
    url = forms.CharField(
        label="Receiver URL",
        max_length=2000,
        widget=forms.URLInput(attrs={"size": 60}),
        help_text="An http:// or https:// address that accepts POSTed JSON.",
    )
    events = forms.MultipleChoiceField(
        label="Events",
        widget=forms.CheckboxSelectMultiple,
        choices=[(t.value, EVENT_LABELS.get(t, t.value)) for t in PATIENT_EVENT_TYPES],
    )
    secret = forms.CharField(
        label="Signing secret",
        required=False,
        max_length=MAX_SECRET_LENGTH,
        widget=forms.PasswordInput(render_value=False),
        help_text="At least 16 characters. Leave empty to have one generated; either way it "
        "is shown once, after saving.",
    )


def _row(sub: Subscription) -> dict[str, Any]:
    return {
        "id": sub.id,
        "url": sub.url,
        "active": sub.active,
        "etag": sub.version,
        "events": ", ".join(sorted(event_label(e.value) for e in sub.events)),
        "created_by": sub.created_by,
        "created_at": sub.created_at,
        "active_since": sub.active_since,
    }


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def subscription_list(request: HttpRequest) -> HttpResponse:
    """The list; its POST forms switch one subscription off or on (deleting one goes through
    :func:`subscription_delete`'s confirmation)."""
    store = get_store()
    if request.method == "POST":
        if request.POST.get("do") == "delete" and request.POST.get("subscription"):
            return HttpResponseRedirect(reverse("admin:webhook_delete",
                                                args=[request.POST["subscription"]]))

        def change(sub_id: str, etag: str, on: bool, actor: Actor) -> object:
            return use_cases.set_active(use_cases.SetActive(sub_id, on, etag), store,
                                        actor=actor)

        return receiver_pages.switch(request, field="subscription", change=change,
                                     noun="subscription", done=(
                                         "Deliveries switched on.", "Deliveries switched off."))
    subs = subscriptions.all_subscriptions(store)
    rows = receiver_pages.with_last_change([{**_row(s), "delete_url": reverse(
        "admin:webhook_delete", args=[s.id])} for s in subs], subs)
    return admin.site.render(
        request,
        "webhooks/subscriptions.html",
        {"subscriptions": rows, "letters": len(deadletters.all_letters(store))},
        title="Webhook subscriptions",
    )


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def subscription_add(request: HttpRequest) -> HttpResponse:
    form = SubscriptionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            sub, secret = use_cases.subscribe(
                use_cases.Subscribe(
                    url=data["url"], events=data["events"], secret=data["secret"] or None
                ),
                get_store(),
                actor=actor_for(request.user),
            )
        except DomainError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            # Rendered, not redirected: the secret is never put in a session or a URL.
            response = admin.site.render(
                request,
                "webhooks/created.html",
                {"sub": _row(sub), "secret": secret},
                title="Subscription added",
            )
            response["Cache-Control"] = "no-store"
            return response
    return admin.site.render(
        request, "webhooks/add.html", {"form": form}, title="Add a webhook subscription"
    )


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def subscription_delete(request: HttpRequest, subscription_id: str) -> HttpResponse:
    """GET: what deleting would remove (URL, events, status) and its recorded changes, to
    confirm; POST (with the ETag shown) deletes it."""
    store = get_store()
    try:
        sub = subscriptions.get(store, subscription_id)
    except UnknownSubscription:
        raise Http404("No such subscription.") from None

    def remove(etag: str | None, actor: Actor) -> None:
        use_cases.unsubscribe(use_cases.Unsubscribe(sub.id, etag), store, actor=actor)

    row = _row(sub)
    return receiver_pages.confirm_delete(
        request, receiver=sub, rows=[("Receiver URL", sub.url), ("Events", row["events"])],
        remove=remove, gone=UnknownSubscription,
        list_url=reverse("admin:webhook_subscriptions"), words={
            "noun": "subscription", "list_label": "Webhooks", "on_label": "Delivering",
            "title": "Delete a webhook subscription",
            "question": "Delete this subscription?",
            "consequence": "Its receiver gets no more events, deliveries queued for it stop, "
                           "and its failed deliveries can no longer be replayed to it."})


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def dead_letters(request: HttpRequest) -> HttpResponse:
    store = get_store()
    if request.method == "POST":
        chosen = None if request.POST.get("all") else request.POST.getlist("letter")
        queued = use_cases.replay_dead_letters(
            chosen, store, actor=actor_for(request.user), send=send_replay
        )
        messages.success(request, f"{queued} delivery(ies) queued again.")
        return HttpResponseRedirect(request.path)
    urls = {s.id: s.url for s in subscriptions.all_subscriptions(store)}
    rows = [
        {
            **letter.as_dict(),
            "fan_out": letter.kind == deadletters.FAN_OUT,
            "event_label": event_label(letter.event_type),
            "patient_id": letter.stream.removeprefix(keys.PATIENT),
            "failed": datetime.fromisoformat(letter.failed_at),
            "url": (
                "(fan-out: no subscription reached)"
                if letter.kind == deadletters.FAN_OUT
                else urls.get(letter.subscription_id, "(deleted subscription)")
            ),
        }
        for letter in deadletters.all_letters(store)
    ]
    held = [
        {**h.as_dict(), "event_label": event_label(h.event_type or "")}
        for h in held_streams.all_held(store, held_streams.WEBHOOKS)
    ]
    # The letters name patients: reading them is a list view in the access audit.
    access_log.note_list(request, (r["patient_id"] for r in rows), "Webhook dead letters")
    return admin.site.render(
        request,
        "webhooks/dead_letters.html",
        {"letters": rows, "held": held, "list_url": reverse("admin:webhook_subscriptions")},
        title="Webhook dead letters",
    )
