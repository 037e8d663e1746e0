"""Roles are Django groups; superusers hold them all. Decisions go through the policy."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    CLERK = "clerk"  # registration, admission, transfer, discharge
    CLINICIAN = "clinician"  # orders
    NURSE = "nurse"  # progress orders, administrations
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


def ensure_groups(names: Iterable[str] = tuple(r.value for r in Role)) -> None:
    from django.contrib.auth.models import Group  # needs the app registry: not at import

    for name in names:
        Group.objects.get_or_create(name=name)
