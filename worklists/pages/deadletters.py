"""Admin page: projections that failed for good, with the reason, and a replay button."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.http import require_http_methods

from accounts.models import SecurityEvent
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store
from worklists.delivery import deadletters
from worklists.delivery.tasks import enqueue
from worklists.persistence.deadletters import all_letters


@require_http_methods(["GET", "POST"])
@requires("manage_dead_letters")
def dead_letters(request: HttpRequest) -> HttpResponse:
    store = get_store()
    if request.method == "POST":
        wanted = request.POST.getlist("letter")
        letters = [letter for letter in all_letters(store)
                   if request.POST.get("all") or letter.id in wanted]
        for letter in letters:
            deadletters.replay(store, letter, send=enqueue)
        SecurityEvent.replay(actor_for(request.user), "worklist projection",
                             [letter.id for letter in letters],
                             everything=bool(request.POST.get("all")))
        messages.success(request, f"{len(letters)} event(s) sent to the projections again.")
        return HttpResponseRedirect(request.path)
    rows = [{**letter.as_dict(), "id": letter.id} for letter in all_letters(store)]
    return admin.site.render(request, "worklists/dead_letters.html", {"letters": rows},
                             title="Projection dead letters")
