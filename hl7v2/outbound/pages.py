"""Admin pages for ADT out: the HL7 destinations (add, switch off or on, delete with
confirmation) and the message log (search by MRN, control id and status; replay the dead
letters). Admins only (``manage_webhooks``, as the API). Thin over
:mod:`hl7v2.outbound.use_cases`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from hisadmin.core import held_streams, keys
from hisadmin.core.actor import Actor
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store
from hl7v2.outbound import audit, tasks, use_cases
from hl7v2.outbound.destinations import NAME_MAX, TRIGGERS, Destination, UnknownDestination
from hl7v2.persistence import store
from patients.domain.errors import DomainError
from patients.domain.events import EVENT_LABELS, EventType
from webhooks import receiver_pages

ACTION = "manage_webhooks"
STATUS_LABELS = {
    "pending": "Waiting to be sent",
    "sending": "Sending",
    "accepted": "Accepted",
    "retrying": "Refused or unanswered, retrying",
    "dead": "Failed for good",
}


def event_label(name: str) -> str:
    kind = EventType._value2member_map_.get(name)
    return EVENT_LABELS.get(kind, name) if isinstance(kind, EventType) else name


def _event_choice(kind: EventType) -> tuple[str, str]:
    return kind.value, f"{EVENT_LABELS.get(kind, kind.value)} ({TRIGGERS[kind]})"


class DestinationForm(CheckedForm):
    name = forms.CharField(label="Name", max_length=NAME_MAX,
                           widget=forms.TextInput(attrs={"size": 50}),
                           help_text="What you call the engine's channel, e.g. Rhapsody ADT.")
    host = forms.CharField(label="Host", max_length=253,
                           widget=forms.TextInput(attrs={"size": 50}),
                           help_text="The engine's host name or IP address.")
    port = forms.IntegerField(label="Port", min_value=1, max_value=65535, initial=2575,
                              help_text="The channel's MLLP listener port (often 2575).")
    events = forms.MultipleChoiceField(
        label="Events", widget=forms.CheckboxSelectMultiple,
        choices=[_event_choice(t) for t in TRIGGERS],
        help_text="Each is sent as the ADT message in brackets.")


class SearchForm(CheckedForm):
    mrn = forms.CharField(label="MRN", max_length=40, required=False)
    control_id = forms.CharField(label="Control id (MSH-10)", max_length=40, required=False)
    status = forms.ChoiceField(label="Status", required=False,
                               choices=[("", "Any"), *STATUS_LABELS.items()])


def _row(dest: Destination) -> dict[str, Any]:
    return {"id": dest.id, "name": dest.name, "address": f"{dest.host}:{dest.port}",
            "active": dest.active, "etag": dest.version,
            "events": ", ".join(f"{event_label(t.value)} ({trigger})"
                                for t, trigger in TRIGGERS.items() if t in dest.events),
            "created_by": dest.created_by, "created_at": dest.created_at,
            "active_since": dest.active_since}


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def destination_list(request: HttpRequest) -> HttpResponse:
    """The list; its POST forms switch one destination off or on (deleting one goes through
    :func:`destination_delete`'s confirmation)."""
    store_ = get_store()
    if request.method == "POST":
        def change(dest_id: str, etag: str, on: bool, actor: Actor) -> object:
            return use_cases.change_destination(
                use_cases.ChangeDestination(dest_id, etag, active=on), store_, actor=actor)

        return receiver_pages.switch(request, field="destination", change=change,
                                     noun="destination", done=(
                                         "Messages switched on.", "Messages switched off."))
    counts = store.counts(store_)
    dests = store.all_destinations(store_)
    rows = receiver_pages.with_last_change(
        [{**_row(d), "dead": counts.get((d.id, "dead"), 0),
          "retrying": counts.get((d.id, "retrying"), 0),
          "pending": counts.get((d.id, "pending"), 0),
          "delete_url": reverse("admin:hl7_destination_delete", args=[d.id])} for d in dests],
        dests)
    return admin.site.render(request, "hl7v2/destinations.html", {"destinations": rows},
                             title="HL7 destinations")


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def destination_add(request: HttpRequest) -> HttpResponse:
    form = DestinationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            use_cases.add_destination(
                use_cases.AddDestination(name=data["name"], host=data["host"],
                                         port=data["port"], events=data["events"]),
                get_store(), actor=actor_for(request.user))
        except DomainError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, "Destination added: it gets the events that occur "
                             "from now on.")
            return HttpResponseRedirect(reverse("admin:hl7_destinations"))
    return admin.site.render(request, "hl7v2/add.html", {"form": form},
                             title="Add an HL7 destination")


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def destination_delete(request: HttpRequest, destination_id: str) -> HttpResponse:
    """GET: what deleting would remove and its recorded changes, to confirm; POST (with the
    ETag shown) deletes it."""
    store_ = get_store()
    try:
        dest = store.get(store_, destination_id)
    except UnknownDestination:
        raise Http404("No such destination.") from None

    def remove(etag: str | None, actor: Actor) -> None:
        use_cases.remove_destination(dest.id, store_, actor=actor, expected_version=etag)

    row = _row(dest)
    return receiver_pages.confirm_delete(
        request, receiver=dest, rows=[("Name", dest.name), ("Host and port", row["address"]),
                                      ("Events", row["events"])],
        remove=remove, gone=UnknownDestination, list_url=reverse("admin:hl7_destinations"),
        words={"noun": "destination", "list_label": "HL7 destinations", "on_label": "Sending",
               "title": "Delete an HL7 destination",
               "question": "Delete this destination?",
               "consequence": "The engine gets no more messages from it, messages waiting for "
                              "it stop, and its failed messages can no longer be sent again."})


@require_http_methods(["GET", "POST"])
@requires(ACTION)
def message_log(request: HttpRequest) -> HttpResponse:
    """The log, newest first, narrowed by the search; its POST queues the dead letters
    chosen (or all) for one more attempt each."""
    store_ = get_store()
    if request.method == "POST":
        chosen = None if request.POST.get("all") else request.POST.getlist("message")
        queued = use_cases.replay(chosen, store_, actor=actor_for(request.user),
                                  send=tasks.send_replay)
        messages.success(request, f"{len(queued)} message(s) queued to be sent again.")
        return HttpResponseRedirect(request.get_full_path())
    form = SearchForm(request.GET or None)
    # A search the form refuses (a status it does not offer…) is a 400 with the form's
    # error and no rows, never every message as if it were the answer (the lists' one rule).
    refused = form.is_bound and not form.is_valid()
    query = {} if refused or not form.is_bound else form.cleaned_data
    names = {d.id: d.name for d in store.all_destinations(store_)}
    found = [] if refused else store.entries(
        store_, mrn=query.get("mrn", ""), control_id=query.get("control_id", ""),
        status=query.get("status", ""))
    audit.note_read(request, found, searched_mrn=bool(query.get("mrn")))
    rows = [{**e.as_dict(), "status_label": STATUS_LABELS.get(e.status, e.status),
             "event_label": event_label(e.event_type),
             "destination": names.get(e.destination_id, "(deleted destination)"),
             "when": datetime.fromisoformat(e.at)}
            for e in found]
    held = [{**h.as_dict(), "event_label": event_label(h.event_type or "")}
            for h in [*held_streams.all_held(store_, held_streams.HL7),
                      *held_streams.all_held(store_, held_streams.HL7_DELIVERY)]]
    letters = [{**letter.as_dict(), "event_label": event_label(letter.event_type),
                "patient_id": keys.suffix(letter.stream),
                "failed": datetime.fromisoformat(letter.failed_at)}
               for letter in tasks.fan_out_letters(store_)]
    return admin.site.render(request, "hl7v2/messages.html", {
        "form": form, "rows": rows, "searched": bool(request.GET), "refused": refused,
        "held": held, "fan_out_letters": letters,
        "dead": sum(1 for r in rows if r["status"] == "dead"),
        "list_url": reverse("admin:hl7_destinations")}, title="HL7 message log",
        status=400 if refused else 200)
