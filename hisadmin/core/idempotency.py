"""Idempotency-Key for every write of the API: a retried request replays the first response.

The API assembly applies :func:`with_idempotency` to every POST, PUT, PATCH and DELETE of
``/api/v1`` after authentication (keys are per user). A request is the same request when its
method, path with query string and body are the same; the same key with another request is a
422 (``…/problems/idempotency-key-reused``). A replay asks the policy again for every
action the first request was checked for (kept with the answer): a user who has lost the
role since gets a 403, not the record. Only final answers are kept: a 409, 412, 429, 503
or 5xx frees the key, so a retry runs the command again.

The key is claimed first (a unique row), so two concurrent requests with one key cannot both
create; the second is told to retry. A request that fails frees the key. A key is kept for
``IDEMPOTENCY_KEY_HOURS`` (24 by default): older records are forgotten — a request with
that key runs again — and deleted, by every web process about once an hour and by
``manage.py purge_idempotency_keys`` (the stored responses hold patient data).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from hisadmin.core import policy
from hisadmin.core.models import IdempotencyRecord
from hisadmin.core.problems import problem_type

IN_PROGRESS = 0
HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 200
KEY_REUSED = problem_type("idempotency-key-reused")
IN_PROGRESS_TYPE = problem_type("request-in-progress")
INVALID_KEY = problem_type("invalid-idempotency-key")
# Answers that are not final: the key is freed so that a retry runs the command again.
NOT_FINAL = frozenset({409, 412, 429, 503})
KEPT_HEADERS = ("Content-Type", "ETag", "Location")
ACTIONS = "_policy_actions"  # kept beside the headers, never replayed as one
PURGE_EVERY_SECONDS = 3600
_last_purge = 0.0


def cutoff() -> datetime:
    return timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)


def purge_expired() -> int:
    """Delete the records older than the retention; returns how many."""
    deleted, _ = IdempotencyRecord.objects.filter(created__lt=cutoff()).delete()
    return deleted


def _purge_now_and_then() -> None:
    global _last_purge
    now = time.monotonic()
    if now - _last_purge >= PURGE_EVERY_SECONDS:
        _last_purge = now
        purge_expired()


def fingerprint(request: HttpRequest) -> tuple[str, str]:
    """What makes two requests the same request: ``METHOD path?query`` (cut to the stored
    300 characters, the hash then covering the whole of it) and a hash of the body."""
    where = f"{request.method} {request.get_full_path()}"
    digest = hashlib.sha256(request.body)
    if len(where) > 300:
        digest.update(where.encode())
        where = where[:300]
    return where, digest.hexdigest()


def with_idempotency(request: HttpRequest, produce: Callable[[], HttpResponse],
                     problem: Callable[..., HttpResponse]) -> HttpResponse:
    """``produce()``'s answer, or, for a request whose ``Idempotency-Key`` was seen before,
    the first answer again (``Idempotent-Replayed: true``). ``request.user`` must be the
    authenticated caller."""
    key = request.headers.get(HEADER, "").strip()
    if not key:
        return produce()
    if len(key) > MAX_KEY_LENGTH:
        return problem(request, 422, "Invalid Idempotency-Key",
                       f"Use at most {MAX_KEY_LENGTH} characters.", type=INVALID_KEY,
                       errors=[{"field": HEADER, "message": "too long"}])
    where, digest = fingerprint(request)
    _purge_now_and_then()

    def claim() -> IdempotencyRecord | None:
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    user=request.user, key=key, method_path=where, request_hash=digest,
                    status=IN_PROGRESS, body="")
        except IntegrityError:
            return None

    claimed = claim()
    if claimed is None:
        # The key is taken. An expired record is forgotten: the request runs as a new one.
        expired = IdempotencyRecord.objects.filter(user=request.user, key=key,
                                                   created__lt=cutoff())
        if expired.delete()[0]:
            claimed = claim()
    if claimed is None:
        record = IdempotencyRecord.objects.filter(user=request.user, key=key).first()
        if record is None:  # freed meanwhile by a request that failed
            return problem(request, 409, "Request in progress",
                           "A request with this Idempotency-Key just finished without an "
                           "answer to keep; retry.", type=IN_PROGRESS_TYPE)
        if record.method_path != where or record.request_hash != digest:
            return problem(request, 422, "Idempotency-Key reused",
                           "This Idempotency-Key was used for a different request; "
                           "use a new key for a new request.", type=KEY_REUSED,
                           errors=[{"field": HEADER, "message": "used for another request"}])
        if record.status == IN_PROGRESS:
            return problem(request, 409, "Request in progress",
                           "A request with this Idempotency-Key is still running; retry shortly.",
                           type=IN_PROGRESS_TYPE)
        refused = [a for a in record.headers.get(ACTIONS, ()) if not policy.allows(
            request.user, a)]
        if refused:
            wanted = " or ".join(r.value for r in policy.roles_for(refused[0]))
            return problem(request, 403, "Forbidden", f"This needs the {wanted} role.")
        response = HttpResponse(record.body, status=record.status,
                                content_type=record.headers.get("Content-Type",
                                                                "application/json"))
        for name, value in record.headers.items():
            if name != ACTIONS:
                response[name] = value
        response[REPLAYED] = "true"
        return response
    record = claimed
    try:
        with policy.recording_checks() as actions:
            response = produce()
    except BaseException:
        record.delete()
        raise
    if response.status_code >= 500 or response.status_code in NOT_FINAL:
        record.delete()  # not a final answer: let a retry run the command again
        return response
    keep = {h: response[h] for h in KEPT_HEADERS if response.has_header(h)}
    record.status = response.status_code
    record.body = response.content.decode()
    record.headers = json.loads(json.dumps({**keep, ACTIONS: actions}))
    record.save(update_fields=["status", "body", "headers"])
    return response
