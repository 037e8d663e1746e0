"""What every model page of the admin does on a change: record it, and keep a superuser's
things to superusers.

- :class:`RecordedAdmin`: adding, changing and deleting through a model's admin page is a
  :class:`SecurityEvent` (actor, target, and each field changed as before → after; secrets
  said to have changed, never shown).
- :func:`refuse`: the separation of duties' answer to an admin who is not a superuser and
  tries to change a superuser's account, password, devices or tokens: a ``change refused``
  event and a 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from accounts.models import SecurityEvent
from hisadmin.core.policy import actor_for

SECRET_FIELDS = frozenset({"key", "password", "secret", "key_hash"})


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value in (None, ""):
        return "—"
    return repr(str(value)[:100])


def changes(fields: Iterable[str], before: Model | None, after: Model) -> str:
    """``"name: 'a' → 'b'; confirmed: yes → no"`` for the fields that differ; a secret
    field is said to have changed, its values never written."""
    said = []
    for name in fields:
        old = getattr(before, name, None) if before is not None else None
        new = getattr(after, name, None)
        if old == new:
            continue
        said.append(f"{name}: changed" if name in SECRET_FIELDS
                    else f"{name}: {_shown(old)} → {_shown(new)}")
    return "; ".join(said)


def owned_by_superuser(obj: Any) -> bool:
    """A superuser's account, or a device or token of one."""
    owner = obj if hasattr(obj, "is_superuser") else getattr(obj, "user", None)
    return bool(getattr(owner, "is_superuser", False))


def refuse(request: HttpRequest, target: str, what: str) -> None:
    """Record the attempt and answer 403: only a superuser changes a superuser's things."""
    SecurityEvent.record(actor_for(request.user), SecurityEvent.REFUSED, target,
                         f"{what}: only a superuser changes a superuser's account, devices "
                         "or tokens")
    raise PermissionDenied("Only a superuser changes a superuser's account, devices or tokens.")


class RecordedAdmin:
    """A ModelAdmin mixin (first among the bases): each add, change and delete is recorded
    as the security event ``recorded_as`` says, and a superuser's objects are theirs alone."""

    recorded_as: tuple[str, str, str]  # (added, changed, deleted)

    def event_target(self, obj: Any) -> str:
        return f"{obj._meta.verbose_name} {obj}"

    def _guard(self, request: HttpRequest, object_id: str | None, what: str) -> None:
        if object_id is None or request.user.is_superuser:
            return
        obj = self.get_object(request, object_id)  # type: ignore[attr-defined]
        if obj is not None and owned_by_superuser(obj):
            refuse(request, self.event_target(obj), what)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and owned_by_superuser(obj) and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and owned_by_superuser(obj) and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)  # type: ignore[misc]

    def changeform_view(self, request: HttpRequest, object_id: str | None = None,
                        form_url: str = "", extra_context: dict[str, Any] | None = None) -> Any:
        if request.method == "POST":
            self._guard(request, object_id, "change")
        return super().changeform_view(request, object_id, form_url,  # type: ignore[misc]
                                       extra_context)

    def delete_view(self, request: HttpRequest, object_id: str,
                    extra_context: dict[str, Any] | None = None) -> Any:
        self._guard(request, object_id, "delete")
        return super().delete_view(request, object_id, extra_context)  # type: ignore[misc]

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        before = type(obj).objects.filter(pk=obj.pk).first() if change else None
        super().save_model(request, obj, form, change)  # type: ignore[misc]
        added, changed, _ = self.recorded_as
        detail = changes(form.changed_data, before, obj)
        if not change or detail:
            SecurityEvent.record(actor_for(request.user), changed if change else added,
                                 self.event_target(obj), detail or "added")

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        SecurityEvent.record(actor_for(request.user), self.recorded_as[2],
                             self.event_target(obj), "deleted")
        super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for obj in queryset:  # all checked before anything is recorded
            if owned_by_superuser(obj) and not request.user.is_superuser:
                refuse(request, self.event_target(obj), "delete")
        for obj in queryset:
            SecurityEvent.record(actor_for(request.user), self.recorded_as[2],
                                 self.event_target(obj), "deleted")
        super().delete_queryset(request, queryset)  # type: ignore[misc]
