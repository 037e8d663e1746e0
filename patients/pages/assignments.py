"""The bed board's nurses for a shift: who has which bed, set by the nurse in charge.

The board shows the shift's nurse on each card (the live part) and, below the cards, the
shift's assignment form (not refreshed, so a choice being made is never swapped away): a
select per bed with the ward's nurses, "Save assignments" and "Same as last shift".
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import StaleWrite
from hisadmin.core import policy
from hisadmin.core.inputs import hospital_time_zone
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import new_uow
from patients import staff
from patients.domain.errors import DomainError
from patients.domain.shifts import SHIFT_LABELS, Nurse, Shift, ShiftHours, ShiftOutOfRange
from patients.use_cases.assignments import (
    AssignNurses,
    CopyLastShift,
    assign_nurses,
    copy_last_shift,
    read_assignments,
)

BED_FIELD = "nurse-"  # the select of bed B is named "nurse-B"


def current_shift(ward: dict[str, Any]) -> Shift:
    """The shift on now in the ward's hours, in the hospital's time."""
    return Shift.at(timezone.now(), ShiftHours.of_ward(ward), hospital_time_zone())


def chosen_shift(request: HttpRequest, ward: dict[str, Any]) -> Shift:
    """``?shift=`` when it names a shift, else the one on now (a bad name is not an error
    on a page that shows a board: the board shows now). A shift off the calendar the wards
    work (``9999-12-31-night``) is a 400: it is a date, just not one to show."""
    try:
        return Shift.parse(request.GET.get("shift", "")) if request.GET.get("shift") \
            else current_shift(ward)
    except ShiftOutOfRange as exc:
        raise BadRequest(str(exc)) from None
    except DomainError:
        return current_shift(ward)


def shift_label(shift: Shift, hours: ShiftHours) -> str:
    """"Day shift, Wed 25 Nov 2026 (07:00–19:00)"."""
    day = f"{shift.day:%a} {shift.day.day} {shift.day:%b %Y}"
    return f"{SHIFT_LABELS[shift.kind]}, {day} ({hours.text(shift.kind)})"


def panel(request: HttpRequest, store: DocumentStore, ward: dict[str, Any],
          cards: list[dict[str, Any]]) -> dict[str, Any]:
    """The board's shift panel; puts each card's nurse on it (``nurse``: a name or "")."""
    shift = chosen_shift(request, ward)
    hours = ShiftHours.of_ward(ward)
    sheet = read_assignments(store, ward["code"], shift)
    last = read_assignments(store, ward["code"], shift.previous()).assignments
    for card in cards:
        nurse = sheet.assignments.get(card["code"])
        card["nurse"] = nurse.name if nurse else ""
    can_assign = policy.allows(request.user, "assign_nurses")
    nurses = staff.nurses() if can_assign else []
    active = {nurse_id for nurse_id, _ in nurses}
    board = reverse("admin:bed_board", args=[ward["code"]])
    return {
        "shift": shift.name,
        "label": shift_label(shift, hours),
        "now": shift == current_shift(ward),
        "previous_href": board + "?" + urlencode({"shift": shift.previous().name}),
        "next_href": board + "?" + urlencode({"shift": shift.next().name}),
        "now_href": board,
        "version": sheet.version or "new",
        "updated_at": sheet.updated_at,
        "updated_by": sheet.updated_by,
        "can_assign": can_assign,
        "nurses": nurses,
        "rows": [{"bed": c["code"], "name": c.get("name") or "",
                  "nurse_id": (sheet.assignments.get(c["code"]) or Nurse("", "")).nurse_id,
                  "nurse": c["nurse"],
                  # "Same as last shift" for this bed: its nurse then, while still a nurse
                  "last": last[c["code"]] if c["code"] in last
                  and last[c["code"]].nurse_id in active else None} for c in cards],
        "action": reverse("admin:ward_assignments", args=[ward["code"]]),
        "print_href": reverse("admin:handover_sheet", args=[ward["code"]]) + "?"
        + urlencode({"shift": shift.name})
        if policy.allows(request.user, "read_handover_sheet") else "",
    }


@requires("assign_nurses")
def ward_assignments(request: HttpRequest, ward_id: str) -> HttpResponse:
    """POST only: the shift's nurses by bed ("save") or as the shift before ("copy"); back
    to the board on that shift."""
    shift_name = request.POST.get("shift", "")
    back = reverse("admin:bed_board", args=[ward_id])
    if request.method != "POST":
        return redirect(back)
    try:
        shift = Shift.parse(shift_name)
        back += "?" + urlencode({"shift": shift.name})
        version = request.POST.get("version") or None
        actor = actor_for(request.user)
        if "copy" in request.POST:
            sheet = copy_last_shift(CopyLastShift(ward_id, shift, version), new_uow(),
                                    actor=actor)
            messages.success(request, f"{len(sheet.assignments)} bed(s) assigned as in the "
                             "last shift.")
        else:
            known = dict(staff.nurses())
            beds: dict[str, Nurse | None] = {}
            for key, value in request.POST.items():
                if key.startswith(BED_FIELD):
                    bed = key[len(BED_FIELD):]
                    if value and value not in known:
                        raise DomainError(f"Bed {bed}: choose a nurse from the list.")
                    beds[bed] = Nurse(value, known[value]) if value else None
            sheet = assign_nurses(AssignNurses(ward_id, shift, beds, replace=True,
                                               expected_version=version), new_uow(),
                                  actor=actor)
            messages.success(request, f"Assignments saved: {len(sheet.assignments)} bed(s) "
                             "have a nurse.")
    except StaleWrite:
        messages.error(request, "Someone changed this shift's assignments meanwhile; here "
                       "they are as they are now. Make your change again.")
    except DomainError as exc:
        messages.error(request, str(exc))
        if exc.http_status == 404:
            return redirect("admin:ward_index")
    return redirect(back)
