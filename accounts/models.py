"""API tokens and the security events of who issued, revoked and granted what (users
and groups are Django's own). Kept under the ``hisadmin`` app label, where they were first
migrated, so their tables, permissions (``hisadmin.view_apitoken``) and admin URLs stay."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from hisadmin.core.actor import SYSTEM_ACTOR, Actor


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class TokenChangeRefused(ValueError):
    """A change an issued API token never takes: another user, or a revoked token used again.
    Attribution rests on a token naming one user for its whole life."""


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def update(self, **kwargs: Any) -> int:
        """As Django's, but never the user (``save()`` says why) nor un-revoking."""
        if {"user", "user_id"} & kwargs.keys():
            raise TokenChangeRefused("An API token's user never changes; issue a new token.")
        if kwargs.get("revoked") is False:
            raise TokenChangeRefused("A revoked API token stays revoked; issue a new token.")
        return super().update(**kwargs)

    def bulk_update(self, objs: Any, fields: Sequence[str], *args: Any, **kwargs: Any) -> int:
        if {"user", "user_id", "revoked"} & set(fields):
            raise TokenChangeRefused("An API token's user and revocation change one by one.")
        return super().bulk_update(objs, fields, *args, **kwargs)


class ApiToken(models.Model):
    """A bearer token for integrators. Only its hash is stored; the raw token is shown once.

    Its user is fixed when it is issued (what the API does with it is attributed to that
    user), and a revoked token stays revoked: :meth:`save` and the queryset refuse either
    change with :class:`TokenChangeRefused`. Issuing, revoking and re-issuing are recorded
    as :class:`SecurityEvent` rows with their actor."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What system uses this token.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.BooleanField(default=False)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        app_label = "hisadmin"  # its table, permissions and admin URLs, as first migrated
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save; :class:`TokenChangeRefused` (nothing written) when an issued token would
        change user or be un-revoked, whatever the caller (admin, shell, command)."""
        if self.pk is not None and not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values("user_id", "revoked").first()
            if stored is not None and stored["user_id"] != self.user_id:
                raise TokenChangeRefused(
                    "An API token's user never changes; revoke it and issue a new one.")
            if stored is not None and stored["revoked"] and not self.revoked:
                raise TokenChangeRefused("A revoked API token stays revoked; issue a new one.")
        super().save(*args, **kwargs)

    @classmethod
    def issue(cls, user: Any, name: str, *, actor: Actor = SYSTEM_ACTOR,
              replacing: Sequence[ApiToken] = ()) -> tuple[ApiToken, str]:
        """A new token for ``user`` and its raw secret (shown once, never stored), recorded
        with ``actor``. ``replacing``: the user's tokens this one re-issues; they are
        revoked in the same transaction and the event says "reissued"."""
        raw = "his_" + secrets.token_urlsafe(32)
        with transaction.atomic():
            for old in replacing:
                if old.user_id != user.pk:
                    raise TokenChangeRefused("A token is re-issued to its own user only.")
                if not old.revoked:
                    old.revoke(actor=actor, reason="replaced")
            token = cls.objects.create(user=user, name=name, key_hash=hash_token(raw),
                                       prefix=raw[4:12])
            detail = f"for {user.get_username()}, named {name[:100]!r}"
            if replacing:
                detail += ", replacing " + ", ".join(f"{t.prefix}…" for t in replacing)
            SecurityEvent.record(actor, SecurityEvent.TOKEN_REISSUED if replacing
                                 else SecurityEvent.TOKEN_ISSUED, token.target(), detail)
        return token, raw

    def revoke(self, *, actor: Actor, reason: str = "") -> None:
        """Revoke the token (for good), recorded with ``actor``; nothing if already revoked."""
        if self.revoked:
            return
        with transaction.atomic():
            self.revoked = True
            self.save(update_fields=["revoked"])
            detail = f"of {self.user.get_username()}" + (f" ({reason})" if reason else "")
            SecurityEvent.record(actor, SecurityEvent.TOKEN_REVOKED, self.target(), detail)

    def target(self) -> str:
        """How a security event names this token."""
        return f"API token {self.prefix}…"


class SecurityEvent(models.Model):
    """Every change to who may do what, and to where patient data is sent: API tokens,
    users (accounts, roles, privileges, passwords), groups, second-factor devices, login
    lockouts, webhook subscriptions, HL7 destinations and dead-letter replays, and the
    attempts the separation of duties refused. One row per change, with the actor copied
    (user id and username) so it outlives the account, the target, and what changed
    (before → after). Append-only; written in the transaction of the change it records
    (a feed's document is in the store: its event is written once the store took it)."""

    TOKEN_ISSUED = "token issued"
    TOKEN_REVOKED = "token revoked"
    TOKEN_REISSUED = "token reissued"
    TOKEN_CHANGED = "token changed"  # renamed
    ROLES_CHANGED = "roles changed"
    PRIVILEGES_CHANGED = "privileges changed"  # superuser or staff status
    GROUP_CHANGED = "group changed"  # a group's permissions (superusers only)
    USER_ADDED = "user added"
    USER_CHANGED = "user changed"  # name, email, username, active
    USER_DELETED = "user deleted"
    PASSWORD_RESET = "password reset"  # set by someone else: the user is told and changes it
    PASSWORD_CHANGED = "password changed"  # by the user themself
    DEVICE_ADDED = "device added"  # a second factor (TOTP)
    DEVICE_CHANGED = "device changed"
    DEVICE_DELETED = "device deleted"
    LOGIN_RECORD_DELETED = "login record deleted"  # a lockout's attempts, cleared early
    FEED_ADDED = "feed added"  # a webhook subscription or an HL7 destination
    FEED_CHANGED = "feed changed"
    FEED_DELETED = "feed deleted"
    DEAD_LETTERS_REPLAYED = "dead letters replayed"
    REFUSED = "change refused"  # an attempt the separation of duties stopped
    ACTIONS = (TOKEN_ISSUED, TOKEN_REVOKED, TOKEN_REISSUED, TOKEN_CHANGED, ROLES_CHANGED,
               PRIVILEGES_CHANGED, GROUP_CHANGED, USER_ADDED, USER_CHANGED, USER_DELETED,
               PASSWORD_RESET, PASSWORD_CHANGED, DEVICE_ADDED, DEVICE_CHANGED, DEVICE_DELETED,
               LOGIN_RECORD_DELETED, FEED_ADDED, FEED_CHANGED, FEED_DELETED,
               DEAD_LETTERS_REPLAYED, REFUSED)

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor_id = models.CharField(max_length=64)  # a user's id, or "system" (the operator)
    actor = models.CharField(max_length=150)  # the username, copied
    action = models.CharField(max_length=40, choices=[(a, a) for a in ACTIONS])
    target = models.CharField(max_length=200)  # "user clerk", "API token abcd1234…"
    detail = models.TextField(blank=True)

    class Meta:
        app_label = "hisadmin"
        verbose_name = "security event"
        ordering = ("-at", "-pk")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor}: {self.action} {self.target}"

    @classmethod
    def record(cls, actor: Actor, action: str, target: str, detail: str = "") -> SecurityEvent:
        """Write one event now (the caller's transaction, if any, holds it)."""
        return cls.objects.create(actor_id=actor.id[:64], actor=actor.username[:150],
                                  action=action, target=target[:200], detail=detail)

    @classmethod
    def replay(cls, actor: Actor, kind: str, ids: Sequence[str], *, everything: bool
               ) -> SecurityEvent | None:
        """Record dead letters of ``kind`` queued again by ``actor`` (``everything``: all of
        them were asked for); nothing when none was."""
        if not ids:
            return None
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        return cls.record(actor, cls.DEAD_LETTERS_REPLAYED, f"{kind} dead letters",
                          f"{len(ids)} queued again ({'all' if everything else 'chosen'}): "
                          f"{shown}")

    @classmethod
    def about(cls, target: str) -> models.QuerySet[SecurityEvent]:
        return cls.objects.filter(target=target)
