"""The ORM models' admin pages: API tokens, security events, and Django's users and groups
with the rules on who may raise whose privileges.

- An API token's user is shown, never edited (the model refuses a change anyway); revoking
  is final and recorded with the admin who did it; the token's page lists its events.
- Only a superuser grants or takes away superuser or staff status, direct permissions or
  the admin role, changes a superuser's account, password, devices or tokens (an attempt
  is a 403 and a ``change refused`` event), or changes a group. Any admin gives the
  clinical roles, to others: nobody changes their own roles.
- Every change made here is a :class:`SecurityEvent` with its actor, target and before →
  after (:mod:`accounts.recorded_admin`); a password set for someone else is a ``password
  reset`` the user is told about (:mod:`accounts.password_reset`).
"""

from __future__ import annotations

from typing import Any

from axes.admin import AccessAttemptAdmin, AccessFailureLogAdmin, AccessLogAdmin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import Model, QuerySet
from django.forms import Form, ModelForm
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import password_reset, staff
from accounts.models import ApiToken, SecurityEvent
from accounts.recorded_admin import RecordedAdmin, changes, refuse
from hisadmin.core.local_time import human_time
from hisadmin.core.policy import actor_for

User = get_user_model()
PRIVILEGE_FIELDS = ("is_superuser", "is_staff", "user_permissions")
ACCOUNT_FIELDS = ("username", "first_name", "last_name", "email", "is_active")


@admin.register(ApiToken)
class ApiTokenAdmin(RecordedAdmin, admin.ModelAdmin):
    recorded_as = (SecurityEvent.TOKEN_ISSUED, SecurityEvent.TOKEN_CHANGED,
                   SecurityEvent.TOKEN_REVOKED)
    list_display = ("name", "user", "prefix", "created", "last_used", "revoked")
    list_filter = ("revoked",)
    fields = ("user", "name", "revoked", "prefix", "created", "last_used", "history")
    readonly_fields = ("user", "prefix", "created", "last_used", "history")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # issued with `manage.py create_api_token`, which shows the secret once

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoked, never deleted: what it did stays attributed

    def event_target(self, obj: ApiToken) -> str:
        return obj.target()

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields = tuple(super().get_readonly_fields(request, obj))
        return (*fields, "revoked") if obj is not None and obj.revoked else fields

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        """A revocation goes through :meth:`ApiToken.revoke`, which records it with the
        admin (the admin's change view runs in one transaction)."""
        revoking = change and "revoked" in form.changed_data and obj.revoked
        if revoking:
            obj.revoked = False  # saved with the other changes, then revoked and recorded
            form.changed_data.remove("revoked")
        super().save_model(request, obj, form, change)  # a rename is recorded
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

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields = tuple(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields = (*fields, *PRIVILEGE_FIELDS)
        if obj is not None and obj.pk == request.user.pk:
            fields = (*fields, "groups")  # nobody gives themself a role
        return fields

    def _guard(self, request: HttpRequest, object_id: str | None, what: str) -> Any:
        user = self.get_object(request, object_id) if object_id else None
        if user is not None and user.is_superuser and not request.user.is_superuser:
            refuse(request, staff.user_target(user), what)
        return user

    def changeform_view(self, request: HttpRequest, object_id: str | None = None,
                        form_url: str = "", extra_context: dict[str, Any] | None = None) -> Any:
        if request.method == "POST":
            user = self._guard(request, object_id, "change of the account")
            if user is not None and user.pk == request.user.pk and "groups" in request.POST:
                held = {str(pk) for pk in user.groups.values_list("pk", flat=True)}
                if set(request.POST.getlist("groups")) != held:
                    SecurityEvent.record(actor_for(request.user), SecurityEvent.REFUSED,
                                         staff.user_target(user), "own roles: another admin "
                                         "or a superuser gives them")
        return super().changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request: HttpRequest, object_id: str,
                    extra_context: dict[str, Any] | None = None) -> Any:
        self._guard(request, object_id, "delete")
        return super().delete_view(request, object_id, extra_context)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> Any:
        """Setting a password: 403 and recorded for a superuser's unless by a superuser;
        another user's is a ``password reset`` they are told about at their next login."""
        user = self._guard(request, id, "password")
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302 and user is not None:
            password_reset.reset_by_other(request, user)
        return response

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        SecurityEvent.record(actor_for(request.user), SecurityEvent.USER_DELETED,
                             staff.user_target(obj), "deleted")
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        if not request.user.is_superuser and queryset.filter(is_superuser=True).exists():
            refuse(request, "users", "delete")
        for user in queryset:
            SecurityEvent.record(actor_for(request.user), SecurityEvent.USER_DELETED,
                                 staff.user_target(user), "deleted")
        super().delete_queryset(request, queryset)

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
        actor = actor_for(request.user)
        if not change:
            SecurityEvent.record(actor, SecurityEvent.USER_ADDED, staff.user_target(obj),
                                 f"username {obj.get_username()!r}")
        else:
            said = changes([f for f in form.changed_data if f in ACCOUNT_FIELDS], stored, obj)
            if said:
                SecurityEvent.record(actor, SecurityEvent.USER_CHANGED,
                                     staff.user_target(obj), said)
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
        if change and "name" in form.changed_data:
            SecurityEvent.record(actor_for(request.user), SecurityEvent.GROUP_CHANGED,
                                 f"group {group.name}", "renamed")
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


class HisTOTPDeviceAdmin(RecordedAdmin, TOTPDeviceAdmin):
    """Second-factor devices: an admin deletes a lost phone's device (the next login enrols
    a new one), recorded; a superuser's devices only a superuser touches."""

    recorded_as = (SecurityEvent.DEVICE_ADDED, SecurityEvent.DEVICE_CHANGED,
                   SecurityEvent.DEVICE_DELETED)

    def event_target(self, obj: Any) -> str:
        return f"TOTP device {obj.name!r} of {obj.user.get_username()}"


def _lockout_admin(base: type[admin.ModelAdmin], what: str) -> type[admin.ModelAdmin]:
    """django-axes' page for ``what`` ("login attempts": deleting them unlocks a locked-out
    login early), each delete recorded."""

    class Recorded(RecordedAdmin, base):  # type: ignore[misc, valid-type]
        recorded_as = (SecurityEvent.LOGIN_RECORD_DELETED,) * 3

        def event_target(self, obj: Any) -> str:
            return f"{what} of {obj.username}"

    return Recorded


for _model, _admin in (
        (TOTPDevice, HisTOTPDeviceAdmin),
        (AccessAttempt, _lockout_admin(AccessAttemptAdmin, "login attempts")),
        (AccessLog, _lockout_admin(AccessLogAdmin, "login log")),
        (AccessFailureLog, _lockout_admin(AccessFailureLogAdmin, "failed-login log"))):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
    admin.site.register(_model, _admin)
