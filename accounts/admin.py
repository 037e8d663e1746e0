"""The ORM models' admin pages: API tokens, security events, and Django's users and groups
with the rules on who may raise whose privileges.

- An API token's user is shown, never edited (the model refuses a change anyway); revoking
  is final and recorded with the admin who did it; the token's page lists its events.
- Only a superuser grants or takes away superuser or staff status, direct permissions or
  the admin role, changes a superuser's account, or changes a group. Any admin gives the
  clinical roles. Every change of roles or privileges is a :class:`SecurityEvent` with its
  actor.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import Model, QuerySet
from django.forms import Form, ModelForm
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from accounts import staff
from accounts.models import ApiToken, SecurityEvent
from hisadmin.core.local_time import human_time
from hisadmin.core.policy import actor_for

User = get_user_model()
PRIVILEGE_FIELDS = ("is_superuser", "is_staff", "user_permissions")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created", "last_used", "revoked")
    list_filter = ("revoked",)
    fields = ("user", "name", "revoked", "prefix", "created", "last_used", "history")
    readonly_fields = ("user", "prefix", "created", "last_used", "history")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # issued with `manage.py create_api_token`, which shows the secret once

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields = tuple(super().get_readonly_fields(request, obj))
        return (*fields, "revoked") if obj is not None and obj.revoked else fields

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        """A revocation goes through :meth:`ApiToken.revoke`, which records it with the
        admin (the admin's change view runs in one transaction)."""
        revoking = change and "revoked" in form.changed_data and obj.revoked
        if revoking:
            obj.revoked = False  # saved with the other changes, then revoked and recorded
        super().save_model(request, obj, form, change)
        if revoking:
            obj.revoke(actor=actor_for(request.user), reason="in the admin")

    @admin.display(description="Events")
    def history(self, obj: ApiToken) -> str:
        events = SecurityEvent.about(obj.target())
        if not events:
            return "—"
        return format_html("<ul class=\"token-events\">{}</ul>", format_html_join(
            "", "<li>{} · {} · {} {}</li>",
            ((human_time(e.at), e.actor, e.action, e.detail) for e in events)))


@admin.register(SecurityEvent)
class SecurityEventAdmin(admin.ModelAdmin):
    """Read only: the record of who issued, revoked and granted what."""

    list_display = ("at", "actor", "action", "target", "detail")
    list_filter = ("action",)
    search_fields = ("actor", "target", "detail")
    date_hierarchy = "at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _names(names: set[str]) -> str:
    return ", ".join(sorted(names)) or "none"


class HisUserAdmin(UserAdmin):
    """Django's user pages, where an admin who is not a superuser gives only the clinical
    roles: privileges (superuser, staff, direct permissions) are read only to them, the
    groups they may tick are the clinical roles' (groups they may not give are kept as
    they were), and a superuser's account is theirs to view, not change."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False  # their password or roles would be a way to their privileges
        return super().has_change_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields if request.user.is_superuser else (*fields, *PRIVILEGE_FIELDS)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest,
                                 **kwargs: Any) -> Any:
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = Group.objects.filter(name__in=staff.ANY_ADMIN_GRANTS)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        stored = User.objects.filter(pk=obj.pk).first() if change else None
        if not request.user.is_superuser:  # read only above; never trusted from a form
            obj.is_superuser = stored.is_superuser if stored is not None else False
            obj.is_staff = stored.is_staff if stored is not None else False
        super().save_model(request, obj, form, change)
        was = {f for f in ("is_superuser", "is_staff") if stored is not None
               and getattr(stored, f)}
        now = {f for f in ("is_superuser", "is_staff") if getattr(obj, f)}
        if was != now:
            SecurityEvent.record(actor_for(request.user), SecurityEvent.PRIVILEGES_CHANGED,
                                 staff.user_target(obj), f"{_names(was)} → {_names(now)}")

    def save_related(self, request: HttpRequest, form: Form, formsets: Any,
                     change: bool) -> None:
        user = form.instance
        groups_before = set(user.groups.values_list("name", flat=True)) if change else set()
        perms_before = set(user.user_permissions.values_list("codename", flat=True)) \
            if change else set()
        super().save_related(request, form, formsets, change)
        if not request.user.is_superuser:  # the groups they could not tick stay as they were
            kept = groups_before - set(staff.ANY_ADMIN_GRANTS)
            user.groups.add(*Group.objects.filter(name__in=kept))
        actor = actor_for(request.user)
        groups_after = set(user.groups.values_list("name", flat=True))
        if groups_after != groups_before:
            SecurityEvent.record(actor, SecurityEvent.ROLES_CHANGED, staff.user_target(user),
                                 f"groups {_names(groups_before)} → {_names(groups_after)}"
                                 " (in the admin)")
        perms_after = set(user.user_permissions.values_list("codename", flat=True))
        if perms_after != perms_before:
            SecurityEvent.record(actor, SecurityEvent.PRIVILEGES_CHANGED,
                                 staff.user_target(user), "permissions "
                                 f"{_names(perms_before)} → {_names(perms_after)}")


class HisGroupAdmin(GroupAdmin):
    """Groups are the roles: only a superuser changes one (what it grants is reset to the
    roles table after every ``migrate`` anyway); each change is recorded."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def save_related(self, request: HttpRequest, form: Form, formsets: Any,
                     change: bool) -> None:
        group = form.instance
        before = set(group.permissions.values_list("codename", flat=True)) if change else set()
        super().save_related(request, form, formsets, change)
        after = set(group.permissions.values_list("codename", flat=True))
        if after != before or not change:
            SecurityEvent.record(actor_for(request.user), SecurityEvent.GROUP_CHANGED,
                                 f"group {group.name}",
                                 f"permissions {_names(before)} → {_names(after)}")

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        SecurityEvent.record(actor_for(request.user), SecurityEvent.GROUP_CHANGED,
                             f"group {obj}", "deleted")
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for group in queryset:
            SecurityEvent.record(actor_for(request.user), SecurityEvent.GROUP_CHANGED,
                                 f"group {group}", "deleted")
        super().delete_queryset(request, queryset)


admin.site.unregister(User)
admin.site.unregister(Group)
admin.site.register(User, HisUserAdmin)
admin.site.register(Group, HisGroupAdmin)
