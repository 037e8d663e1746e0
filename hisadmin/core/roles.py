"""Roles are Django groups; superusers hold them all. Decisions go through the policy."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    CLERK = "clerk"  # registration, admission, transfer, discharge
    CLINICIAN = "clinician"  # orders
    NURSE = "nurse"  # progress orders, administrations
    CHARGE_NURSE = "charge_nurse"  # the nurse in charge: assigns nurses to beds per shift
    ADMIN = "admin"  # reference data, users


ALL_ROLES = tuple(Role)


def roles_of(user: Any) -> frozenset[Role]:
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return frozenset()
    if user.is_superuser:
        return frozenset(Role)
    cached = getattr(user, "_his_roles", None)
    if cached is None:
        names = set(user.groups.values_list("name", flat=True))
        cached = frozenset(r for r in Role if r.value in names)
        user._his_roles = cached
    return cached


# The Django model permissions each role's group carries: only what the admin's own model
# pages need. Clinical roles need none (their pages ask the policy, not model permissions),
# and nobody needs ``is_staff``: the site lets every active user in. Groups are the roles
# themselves, so an administrator may see them but not change what they grant.
GROUP_PERMISSIONS: dict[Role, tuple[str, ...]] = {
    Role.CLERK: (),
    Role.CLINICIAN: (),
    Role.NURSE: (),
    Role.CHARGE_NURSE: (),
    Role.ADMIN: ("auth.view_user", "auth.add_user", "auth.change_user", "auth.view_group",
                 "hisadmin.view_apitoken", "hisadmin.change_apitoken",
                 "hisadmin.view_securityevent",  # who issued, revoked and granted what
                 # a lost phone: delete the user's device, the next login enrols a new one
                 "otp_totp.view_totpdevice", "otp_totp.delete_totpdevice",
                 # a locked-out login: delete its failed attempts to unlock it early
                 "axes.view_accessattempt", "axes.delete_accessattempt"),
}


def ensure_groups(names: Iterable[str] = tuple(r.value for r in Role)) -> None:
    """Create the role groups and give each exactly its :data:`GROUP_PERMISSIONS` (taking
    away any other permission someone added by hand). Runs after every ``migrate``."""
    # Imported here: the auth models need the app registry, and this module is imported
    # before it is ready (settings, policy).
    from django.contrib.auth.models import Group, Permission

    for name in names:
        group, _ = Group.objects.get_or_create(name=name)
        wanted = [p.split(".", 1) for p in GROUP_PERMISSIONS.get(Role(name), ())]
        perms = [Permission.objects.get(content_type__app_label=app, codename=codename)
                 for app, codename in wanted]
        group.permissions.set(perms)
