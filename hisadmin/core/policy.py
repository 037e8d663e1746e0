"""Who may do what: the one table every page, API endpoint and menu entry asks.

Adapters never name roles themselves: they ask :func:`allows` / :func:`require` for an
action, or decorate a view with :func:`requires`. The permission-matrix test walks this
table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from hisadmin.core.actor import Actor
from hisadmin.core.roles import Role, roles_of

C, N, K, A = Role.CLINICIAN, Role.NURSE, Role.CLERK, Role.ADMIN
CN = Role.CHARGE_NURSE

RECORD_ACTIONS: dict[str, tuple[Role, ...]] = {  # the clinical record
    "read": (K, C, N, CN),
    "register": (K,),
    "update_demographics": (K,),
    "admit": (K,),
    "transfer": (K,),
    "discharge": (K,),
    "add_allergy": (C, N),
    "remove_allergy": (C,),
    "place_order": (C,),
    "progress_order": (C, N),  # ready / start / complete
    "cancel_order": (C,),
    "assign_order": (C, N),
    "administer": (N,),
    "acknowledge_result": (C,),  # mark a lab or imaging result reviewed
    "write_handover": (N, CN),  # the outgoing nurse's SBAR note on a patient
    "acknowledge_handover": (N, CN),  # the incoming nurse has read it
    "record_observations": (C, N, CN),  # a set of vital signs, scored (NEWS2)
    "decide_spo2_scale": (C,),  # SpO2 scale 2 (target 88-92 %) started or ended
    "escalate_observations": (C, N, CN),  # who was told of a score, and the response
}
WORKLIST_ACTIONS: dict[str, tuple[Role, ...]] = {
    "read_worklists": (K, C, N),  # admitted patients, name search
    "read_order_worklists": (C, N),  # active orders, my orders
    "read_medications_due": (C, N),  # a ward's doses due, late or coming up
    "read_results_to_review": (C,),  # the results of one's own orders, not yet acknowledged
    "read_my_patients": (N, CN),  # the patients of one's beds this shift
    "read_census": (K, C, N, CN, A),  # a ward's midnight census and occupancy over days
    "read_observation_worklists": (C, N, CN),  # observations due, patients at risk
}
REFERENCE_ACTIONS: dict[str, tuple[Role, ...]] = {
    "read_reference": (K, C, N),  # coded reference data: medications, allergens, lab tests
}
ADMIN_ACTIONS: dict[str, tuple[Role, ...]] = {
    "manage_reference_data": (A,),
    "manage_dead_letters": (A,),
    "manage_webhooks": (A,),  # event webhook subscriptions and their dead letters
    "read_access_log": (A,),  # who viewed a patient's record (the access audit)
}
BED_ACTIONS: dict[str, tuple[Role, ...]] = {
    "read_beds": (K, C, N, CN),  # ward bed boards, the wards API
    "clean_bed": (K, N),  # mark a bed being cleaned as clean (free again)
    "read_assignments": (K, C, N, CN),  # which nurse has which bed, per shift
    "assign_nurses": (CN,),  # set a shift's nurses by bed on the bed board
    "read_handover_sheet": (C, N, CN),  # a ward's printable handover sheet for a shift
}
STAFF_ACTIONS: dict[str, tuple[Role, ...]] = {
    "attend": (C,),  # may be named an admission's attending clinician
}
RECORDS_ACTIONS: dict[str, tuple[Role, ...]] = {  # records staff: one patient, one record
    "find_duplicates": (K,),  # list likely duplicate registrations; mark "not the same person"
    "merge_records": (K,),  # merge a duplicate into the surviving record, or undo it the same day
}
PRINT_ACTIONS: dict[str, tuple[Role, ...]] = {  # what identifies a patient on paper
    "print_wristband": (K, N),  # clerks band at registration and admission, nurses replace
    "print_specimen_label": (C, N),  # whoever collects the sample labels the tube
}
DISPLAY_ACTIONS: dict[str, tuple[Role, ...]] = {  # what a page shows, not what it allows
    "read_server_timings": (A,),  # how long a list's reads took, beside "updated …"
}
ACTION_ROLES = {**RECORD_ACTIONS, **WORKLIST_ACTIONS, **REFERENCE_ACTIONS, **ADMIN_ACTIONS,
                **BED_ACTIONS, **STAFF_ACTIONS, **RECORDS_ACTIONS, **PRINT_ACTIONS, **DISPLAY_ACTIONS}


def roles_for(action: str) -> tuple[Role, ...]:
    return ACTION_ROLES[action]


def allows(user: Any, action: str) -> bool:
    """True when ``user`` holds one of the roles ``action`` needs."""
    held = roles_of(user)
    return any(role in held for role in ACTION_ROLES[action])


# The actions ``require`` was asked for while :func:`recording_checks` is on (an idempotent
# write keeps them, so that its replay asks them again of whoever replays it).
_checked: ContextVar[list[str] | None] = ContextVar("his_policy_checked", default=None)


@contextmanager
def recording_checks() -> Iterator[list[str]]:
    """Within the block, every action :func:`require` checks is appended to the list."""
    found: list[str] = []
    token = _checked.set(found)
    try:
        yield found
    finally:
        _checked.reset(token)


def require(user: Any, action: str) -> None:
    checked = _checked.get()
    if checked is not None and action not in checked:
        checked.append(action)
    if not allows(user, action):
        wanted = " or ".join(r.value for r in ACTION_ROLES[action])
        raise PermissionDenied(f"This needs the {wanted} role.")


def requires(action: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """View decorator: 403 unless the user may take ``action`` (login is the admin's job)."""
    ACTION_ROLES[action]  # an unknown action fails at import, not at the first request

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            require(request.user, action)
            return view(request, *args, **kwargs)

        wrapped.his_action = action  # type: ignore[attr-defined]
        return wrapped

    return decorate


def actor_for(user: Any) -> Actor:
    return Actor(
        id=str(user.pk),
        username=user.get_username(),
        display_name=user.get_full_name() or user.get_username(),
        roles=tuple(sorted(r.value for r in roles_of(user))),
    )
