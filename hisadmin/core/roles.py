"""Roles are Django groups. Every command and page checks them; superusers hold them all."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from functools import wraps
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from cosmos_backend.outbox import Actor


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


def has_role(user: Any, *roles: Role) -> bool:
    """True when the user holds any of ``roles`` (no roles given: any authenticated user)."""
    held = roles_of(user)
    if not roles:
        return bool(getattr(user, "is_authenticated", False))
    return any(r in held for r in roles)


def require_role(user: Any, *roles: Role) -> None:
    if not has_role(user, *roles):
        wanted = " or ".join(r.value for r in roles)
        raise PermissionDenied(f"This needs the {wanted} role.")


def actor_for(user: Any) -> Actor:
    return Actor(
        id=str(user.pk),
        username=user.get_username(),
        display_name=user.get_full_name() or user.get_username(),
        roles=tuple(sorted(r.value for r in roles_of(user))),
    )


def role_required(*roles: Role) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """View decorator: 403 unless the user holds one of ``roles`` (login is the admin's job)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            require_role(request.user, *roles)
            return view(request, *args, **kwargs)

        wrapped.his_roles = roles  # type: ignore[attr-defined]
        return wrapped

    return decorate


def ensure_groups(names: Iterable[str] = tuple(r.value for r in Role)) -> None:
    from django.contrib.auth.models import Group

    for name in names:
        Group.objects.get_or_create(name=name)
