"""The admin pages webhook subscriptions and HL7 destinations share, as receivers: the
list's switch on/off and its actions cell (with the last recorded change), and the delete
confirmation (what goes, and its recorded changes). Each feature's pages give its words
and its use cases; the actor is the request's user, so every change is attributed
(:mod:`webhooks.receiver_changes`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from cosmos_backend.uow import StaleWrite
from hisadmin.core.actor import Actor
from hisadmin.core.policy import actor_for
from patients.domain.errors import DomainError
from webhooks import receiver_changes
from webhooks.domain.receivers import Receiver

Switch = Callable[[str, str, bool, Actor], object]  # (id, etag, on?, actor)


def switch(request: HttpRequest, *, field: str, change: Switch, noun: str,
           done: tuple[str, str]) -> HttpResponse:
    """The list's POST: ``do=enable|disable`` the receiver named in ``field`` (at the ETag
    the admin saw); back to the list with what happened. ``done``: the messages for on
    and off."""
    receiver_id, do = request.POST.get(field, ""), request.POST.get("do")
    if do in ("enable", "disable") and receiver_id:
        on = do == "enable"
        try:
            change(receiver_id, request.POST.get("etag", ""), on, actor_for(request.user))
            messages.success(request, done[0] if on else done[1])
        except StaleWrite:
            messages.error(request, f"Someone changed this {noun} meanwhile; here it is as it "
                           "is now. Try again if still needed.")
        except DomainError as exc:
            messages.error(request, str(exc))
    return HttpResponseRedirect(request.path)


def with_last_change(rows: Iterable[dict[str, Any]], receivers: Sequence[Receiver]
                     ) -> list[dict[str, Any]]:
    """The list's rows, each with its receiver's last recorded change (``last_change``)."""
    last = {r.id: next(iter(receiver_changes.history(r)), None) for r in receivers}
    return [{**row, "last_change": last.get(row["id"])} for row in rows]


def confirm_delete(request: HttpRequest, *, receiver: Receiver, rows: list[tuple[str, str]],
                   remove: Callable[[str | None, Actor], None], gone: type[Exception],
                   list_url: str, words: dict[str, str]) -> HttpResponse:
    """GET: what deleting would remove and its recorded changes, to confirm; POST (with the
    ETag shown) deletes it. Someone's change in between is reported, nothing deleted.
    ``words``: ``noun``, ``list_label``, ``question``, ``consequence``, ``on_label``, ``title``."""
    noun = words["noun"]
    if request.method == "POST":
        try:
            remove(request.POST.get("etag") or None, actor_for(request.user))
        except StaleWrite:
            messages.error(request, f"Someone changed this {noun} meanwhile; nothing was "
                           "deleted. Here it is as it is now.")
            return HttpResponseRedirect(request.path)
        except gone:
            pass  # deleted meanwhile: what was asked is done
        messages.success(request, f"{noun.capitalize()} deleted.")
        return HttpResponseRedirect(list_url)
    return admin.site.render(request, "receivers/delete.html", {
        "receiver": receiver, "rows": rows, "list_url": list_url,
        "history": receiver_changes.history(receiver), **words}, title=words["title"])
