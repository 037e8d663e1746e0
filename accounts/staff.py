"""Staff accounts from the command line: import a roster, set roles, deactivate.

Each change is a function ``fn(..., *, actor)`` that validates everything first and then
writes in one database transaction, so bad input changes nothing. Roles are the role groups
of :mod:`hisadmin.core.roles` (the admin's user pages show the same groups); groups that are
not roles are left alone. Every change is attributed to its actor: an admin log entry on the
user (the admin's "History") when the actor is a user, and one line on the
``accounts.staff`` logger in every case (usernames only, never patient data).
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from accounts.models import ApiToken, SecurityEvent
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.policy import actor_for
from hisadmin.core.roles import ALL_ROLES, Role, ensure_groups

log = logging.getLogger("accounts.staff")

HEADER = ("username", "full_name", "email", "roles")
PASSWORD_COLUMN = "password"  # optional fifth column: the account's first password
ROLE_SEPARATOR = ";"
CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"
# The roles any admin gives or takes away; the admin role only a superuser (or the operator
# at the server) does: an admin who is not a superuser must not be able to raise anyone.
ANY_ADMIN_GRANTS = (Role.CLERK.value, Role.CLINICIAN.value, Role.NURSE.value)


class StaffError(ValueError):
    """Input that cannot be applied; nothing was written. The message says where and why."""


@dataclass(frozen=True)
class StaffRow:
    """One person of a roster: ``line`` is the line of the file it came from."""

    line: int
    username: str
    full_name: str
    email: str
    roles: frozenset[Role]
    password: str = field(default="", repr=False)  # "" leaves the password as it is


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def add(self, username: str, outcome: str) -> None:
        getattr(self, outcome).append(username)


# ------------------------------------------------------------------ parsing and checking
def parse_roles(values: Iterable[str], *, where: str = "") -> frozenset[Role]:
    """Role names (case-insensitive, blanks ignored) → roles; an unknown name is a
    :class:`StaffError` naming the known ones."""
    roles: set[Role] = set()
    for raw in values:
        name = raw.strip().lower()
        if not name:
            continue
        if name not in {r.value for r in ALL_ROLES}:
            known = ", ".join(r.value for r in ALL_ROLES)
            raise StaffError(f"{where}unknown role {raw.strip()!r} (known roles: {known})")
        roles.add(Role(name))
    return frozenset(roles)


def read_roster(text: str) -> list[StaffRow]:
    """The rows of a roster CSV (header ``username,full_name,email,roles``, roles separated
    by ``;``), all checked: the first problem found is a :class:`StaffError` naming the line
    and the field."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise StaffError("the file is empty; its first line must be " + ",".join(HEADER))
    columns = tuple(h.strip().lower() for h in header)
    if columns not in (HEADER, (*HEADER, PASSWORD_COLUMN)):
        raise StaffError(
            f"line 1: the header must be {','.join(HEADER)}, optionally followed by "
            f"{PASSWORD_COLUMN} (found {','.join(header)[:120]})"
        )
    rows: list[StaffRow] = []
    seen: dict[str, int] = {}
    check_username = UnicodeUsernameValidator()
    for values in reader:
        line = reader.line_num
        if not any(v.strip() for v in values):
            continue  # blank lines are allowed (a trailing newline, a spacer)
        if len(values) != len(columns):
            raise StaffError(
                f"line {line}: expected {len(columns)} fields "
                f"({','.join(columns)}), found {len(values)}"
            )
        username, full_name, email, roles = (v.strip() for v in values[:4])
        password = values[4] if len(values) > 4 else ""  # as typed: spaces count
        where = f"line {line}, "
        if not username:
            raise StaffError(f"{where}username: it is empty")
        try:
            check_username(username)
        except ValidationError:
            raise StaffError(
                f"{where}username: {username[:40]!r} may hold only letters, digits and @ . + - _"
            ) from None
        if len(username) > 150:
            raise StaffError(f"{where}username: longer than 150 characters")
        if username.lower() in seen:
            raise StaffError(
                f"{where}username: {username!r} is already on line {seen[username.lower()]}"
            )
        seen[username.lower()] = line
        if not full_name:
            raise StaffError(f"{where}full_name: it is empty")
        if email:
            try:
                validate_email(email)
            except ValidationError:
                raise StaffError(f"{where}email: {email[:60]!r} is not an email address") from None
        if password:
            check_password(password, username, full_name, email, where=where)
        rows.append(
            StaffRow(
                line,
                username,
                full_name,
                email,
                parse_roles(roles.split(ROLE_SEPARATOR), where=f"{where}roles: "),
                password,
            )
        )
    return rows


def check_password(password: str, username: str, full_name: str, email: str, *,
                   where: str = "") -> None:
    """The password validators of the settings, with the row's own name and email to be
    unlike; a :class:`StaffError` naming the line and what is wrong (never the password)."""
    first, last = split_name(full_name)
    user = get_user_model()(username=username, first_name=first, last_name=last, email=email)
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise StaffError(f"{where}password: {' '.join(exc.messages)}") from None


def split_name(full_name: str) -> tuple[str, str]:
    """Django keeps first and last names; the last word is the last name, so that
    ``get_full_name()`` gives the full name back."""
    words = full_name.split()
    if len(words) == 1:
        return words[0], ""
    return " ".join(words[:-1]), words[-1]


# ------------------------------------------------------------------ the changes
def _groups() -> dict[Role, Group]:
    ensure_groups()
    return {Role(g.name): g for g in Group.objects.filter(name__in=[r.value for r in ALL_ROLES])}


def roles_held(user: AbstractUser) -> frozenset[Role]:
    """The role groups the user is in (not what a superuser may do: what is recorded)."""
    names = set(user.groups.values_list("name", flat=True))
    return frozenset(r for r in ALL_ROLES if r.value in names)


def user_target(user: AbstractUser) -> str:
    """How a security event names a user."""
    return f"user {user.get_username()}"


def _set_groups(user: AbstractUser, roles: frozenset[Role], groups: dict[Role, Group],
                *, actor: Actor) -> None:
    """Give exactly ``roles``, recorded as a security event with ``actor``; a
    :class:`StaffError` when the actor is the user themself (nobody gives themself a role),
    or a user who is not a superuser and the admin role would be given or taken away."""
    held = roles_held(user)
    if held == roles:
        return
    changing = {r for r in held ^ roles if r.value not in ANY_ADMIN_GRANTS}
    acting = get_user_model().objects.filter(pk=actor.id).first() if actor.id.isdigit() else None
    if acting is not None and acting.pk == user.pk:
        raise StaffError(f"{actor.username} may not change their own roles; another admin or "
                         "a superuser does")
    if changing and acting is not None and not acting.is_superuser:
        raise StaffError(f"only a superuser gives or takes away the {_names(changing)} role "
                         f"({actor.username} is not one)")
    user.groups.remove(*(groups[r] for r in held - roles))
    user.groups.add(*(groups[r] for r in roles - held))
    SecurityEvent.record(actor, SecurityEvent.ROLES_CHANGED, user_target(user),
                         f"roles {_names(held)} → {_names(roles)}")


def _record(user: AbstractUser, message: str, actor: Actor, *, created: bool = False,
            event: str | None = None) -> None:
    """Attribute a change: the user's admin history when the actor is a user, a log line,
    and the security event ``event`` (a change of roles alone was recorded as one already)."""
    if event is not None:
        SecurityEvent.record(actor, event, user_target(user), message)
    acting = get_user_model().objects.filter(pk=actor.id).first() if actor.id.isdigit() else None
    if acting is not None:
        LogEntry.objects.log_actions(
            user_id=acting.pk,
            queryset=get_user_model().objects.filter(pk=user.pk),
            action_flag=ADDITION if created else CHANGE,
            change_message=message,
            single_object=True,
        )
    log.info("staff %s: %s (by %s)", user.get_username(), message, actor.username)


def _user(username: str) -> AbstractUser:
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise StaffError(f"no user named {username!r}")
    return user


def import_staff(
    rows: Sequence[StaffRow], *, actor: Actor, progress: Callable[[int], object] = lambda n: None
) -> ImportReport:
    """Create or update one account per row, idempotently: full name, email and exactly the
    row's roles. New accounts get the row's password (checked by :func:`read_roster`), else
    no usable one (they are given one by an admin, or sign in through the hospital's
    identity provider); an existing account keeps its password unless the row gives another,
    and always its active flag (deactivation is deliberate, never a side effect)."""
    report = ImportReport()
    model = get_user_model()
    with transaction.atomic():
        groups = _groups()
        for row in rows:
            first, last = split_name(row.full_name)
            user = model.objects.filter(username=row.username).first()
            if user is None:
                user = model(
                    username=row.username, first_name=first, last_name=last, email=row.email
                )
                if row.password:
                    user.set_password(row.password)
                else:
                    user.set_unusable_password()
                user.save()
                _set_groups(user, row.roles, groups, actor=actor)
                _record(user, f"created with roles {_names(row.roles)}", actor, created=True,
                        event=SecurityEvent.USER_ADDED)
                report.add(row.username, CREATED)
            else:
                changes = _update(user, row, first, last, groups, actor=actor)
                if changes:
                    _record(user, "; ".join(changes), actor, event=SecurityEvent.USER_CHANGED)
                report.add(row.username, UPDATED if changes else UNCHANGED)
            progress(1)
    return report


def _update(
    user: AbstractUser, row: StaffRow, first: str, last: str, groups: dict[Role, Group],
    *, actor: Actor,
) -> list[str]:
    changes: list[str] = []
    if user.get_full_name() != " ".join(row.full_name.split()):
        user.first_name, user.last_name = first, last
        changes.append(f"name → {row.full_name}")
    if user.email != row.email:
        user.email = row.email
        changes.append("email changed")
    if changes:
        user.save(update_fields=["first_name", "last_name", "email"])
    if row.password and not user.check_password(row.password):
        user.set_password(row.password)
        user.save(update_fields=["password"])
        changes.append("password set")
        # Set by someone else: told at the next login, and replaced (accounts.password_reset).
        SecurityEvent.record(actor, SecurityEvent.PASSWORD_RESET, user_target(user),
                             f"set by {actor.username} (import_staff); the user is told at "
                             "the next login and chooses a new one")
    held = roles_held(user)
    if held != row.roles:
        _set_groups(user, row.roles, groups, actor=actor)
        changes.append(f"roles {_names(held)} → {_names(row.roles)}")
    return changes


def set_roles(
    username: str, roles: frozenset[Role], *, actor: Actor
) -> tuple[frozenset[Role], frozenset[Role]]:
    """Give the user exactly ``roles``; returns (before, after)."""
    with transaction.atomic():
        user = _user(username)
        before = roles_held(user)
        if before != roles:
            _set_groups(user, roles, _groups(), actor=actor)
            _record(user, f"roles {_names(before)} → {_names(roles)}", actor)
    return before, roles


def set_active(username: str, active: bool, *, actor: Actor) -> bool:
    """Deactivate (or reactivate) an account; returns whether anything changed. A
    deactivated user can no longer sign in, their open sessions end, and their API tokens
    are revoked (a reactivated user is issued new ones). The account and its roles stay, so
    the record keeps naming them."""
    with transaction.atomic():
        user = _user(username)
        if user.is_active == active:
            return False
        user.is_active = active
        user.save(update_fields=["is_active"])
        if not active:
            for token in ApiToken.objects.filter(user=user, revoked=False):
                token.revoke(actor=actor, reason="user deactivated")  # each one recorded
            _end_sessions(user)
        _record(user, "active: no → yes" if active else "active: yes → no", actor,
                event=SecurityEvent.USER_CHANGED)
    return True


def _end_sessions(user: AbstractUser) -> None:
    """Delete the user's sessions (database sessions, the configured engine)."""
    for session in Session.objects.iterator():
        if session.get_decoded().get("_auth_user_id") == str(user.pk):
            session.delete()


def _names(roles: Iterable[Role]) -> str:
    return ", ".join(sorted(r.value for r in roles)) or "none"


def command_actor(username: str | None) -> Actor:
    """Who a management command acts as: ``--by USERNAME`` (an active user who may change
    users in the admin, the same permission the admin's user pages ask for), else the
    system (commands run by the operator at the server)."""
    if not username:
        return SYSTEM_ACTOR
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None or not user.has_perm("auth.change_user"):
        raise StaffError(
            f"--by {username!r}: not an active user who may change users (the admin role)"
        )
    return actor_for(user)
