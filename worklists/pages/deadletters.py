"""Admin page: projections that failed for good, with the reason, and a replay button."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.http import require_http_methods

from hisadmin.core.policy import requires
from hisadmin.core.store import get_store
from worklists.delivery import deadletters


@require_http_methods(["GET", "POST"])
@requires("manage_dead_letters")
def dead_letters(request: HttpRequest) -> HttpResponse:
    store = get_store()
    if request.method == "POST":
        wanted = request.POST.getlist("letter")
        letters = [d for d in deadletters.all_letters(store)
                   if request.POST.get("all") or d["id"] in wanted]
        for doc in letters:
            deadletters.replay(store, doc)
        messages.success(request, f"{len(letters)} event(s) sent to the projections again.")
        return HttpResponseRedirect(request.path)
    rows = [d["docContents"] | {"id": d["id"]} for d in deadletters.all_letters(store)]
    return admin.site.render(request, "worklists/dead_letters.html", {"letters": rows},
                             title="Projection dead letters")
