"""Users as the clinical record names them: attendings and assignees (Django's auth users)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from hisadmin.core.policy import roles_for
from patients.domain.errors import InvalidInput


def clinicians() -> list[tuple[str, str]]:
    """(user id, display name) of active users who may be an admission's attending: the
    members of the attending roles' groups. A superuser holds every role for permissions,
    but is an account, not a clinician, so it is no attending unless it is in such a group."""
    users = get_user_model().objects.filter(
        is_active=True, groups__name__in=[r.value for r in roles_for("attend")]).distinct()
    return sorted(((str(u.pk), u.get_full_name() or u.get_username()) for u in users),
                  key=lambda c: c[1])


def attending(username_or_id: str, *, field: str = "attending") -> tuple[str, str]:
    """Resolve a clinician by username (API) or id (form) to (id, display name)."""
    model = get_user_model()
    lookup = Q(username=username_or_id)
    if username_or_id.isdigit():
        lookup |= Q(pk=int(username_or_id))
    user = model.objects.filter(lookup, is_active=True).first()
    if user is None or str(user.pk) not in dict(clinicians()):
        raise InvalidInput(f"{username_or_id!r} is not an active clinician; choose one from "
                           "the list.", field=field)
    return str(user.pk), user.get_full_name() or user.get_username()


def nurses() -> list[tuple[str, str]]:
    """(user id, display name) of active users who may be assigned to a bed for a shift:
    the members of the nursing groups (the nurse in charge among them), by name."""
    users = get_user_model().objects.filter(
        is_active=True, groups__name__in=[r.value for r in roles_for("administer")]).distinct()
    return sorted(((str(u.pk), u.get_full_name() or u.get_username()) for u in users),
                  key=lambda c: c[1])


def nurse(user_id: str, *, field: str = "nurse") -> tuple[str, str]:
    """A nurse by user id (or username) → (id, display name); InvalidInput otherwise."""
    known = dict(nurses())
    if user_id in known:
        return user_id, known[user_id]
    user = get_user_model().objects.filter(username=user_id, is_active=True).first()
    if user is not None and str(user.pk) in known:
        return str(user.pk), known[str(user.pk)]
    raise InvalidInput(f"{user_id!r} is not an active nurse; choose one from the list.",
                       field=field)
