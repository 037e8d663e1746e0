"""Idempotency-Key for creating POSTs: a retried request replays the first response.

The key is claimed first (a unique row), so two concurrent requests with one key cannot both
create; the second is told to retry. A request that fails frees the key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse

from .models import IdempotencyRecord

IN_PROGRESS = 0


def with_idempotency(request: HttpRequest, produce: Callable[[], HttpResponse],
                     problem: Callable[..., HttpResponse]) -> HttpResponse:
    key = request.headers.get("Idempotency-Key", "").strip()
    if not key:
        return produce()
    if len(key) > 200:
        return problem(request, 422, "Invalid Idempotency-Key", "Use at most 200 characters.")
    digest = hashlib.sha256(request.body).hexdigest()
    where = f"{request.method} {request.path}"
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                user=request.user, key=key, method_path=where, request_hash=digest,
                status=IN_PROGRESS, body="")
    except IntegrityError:
        record = IdempotencyRecord.objects.get(user=request.user, key=key)
        if record.method_path != where or record.request_hash != digest:
            return problem(request, 422, "Idempotency-Key reused",
                           "This Idempotency-Key was used for a different request; "
                           "use a new key for a new request.")
        if record.status == IN_PROGRESS:
            return problem(request, 409, "Request in progress",
                           "A request with this Idempotency-Key is still running; retry shortly.")
        response = HttpResponse(record.body, status=record.status,
                                content_type=record.headers.get("Content-Type",
                                                                "application/json"))
        for name, value in record.headers.items():
            response[name] = value
        response["Idempotent-Replayed"] = "true"
        return response
    try:
        response = produce()
    except BaseException:
        record.delete()
        raise
    if response.status_code >= 500 or response.status_code in (409, 412, 429, 503):
        record.delete()  # not a final answer: let a retry run the command again
        return response
    keep = {h: response[h] for h in ("Content-Type", "ETag", "Location") if response.has_header(h)}
    record.status = response.status_code
    record.body = response.content.decode()
    record.headers = json.loads(json.dumps(keep))
    record.save(update_fields=["status", "body", "headers"])
    return response
