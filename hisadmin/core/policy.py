"""Who may do what: one table used by the pages, the API and the permission-matrix test."""

from __future__ import annotations

from hisadmin.core.roles import Role

C, N, K = Role.CLINICIAN, Role.NURSE, Role.CLERK

COMMAND_ROLES: dict[str, tuple[Role, ...]] = {
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
    "read": (K, C, N),
}


def roles_for(command: str) -> tuple[Role, ...]:
    return COMMAND_ROLES[command]
