"""Leases and checkpoints for change-feed consumers, kept in a container of their own.

Leases live apart from the monitored container so that checkpoint writes never feed back
into the change feed. Every write is etag-guarded: two owners can never both hold a range,
and a checkpoint from a relay that lost its lease is refused, so a checkpoint never moves
backwards (positions are also compared, belt and braces).
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from cosmos_backend import errors
from cosmos_backend.store import Cond, Document, DocumentStore, Query

LEASE_PK = "leases"


class LeaseLost(errors.PreconditionFailed):
    """This owner no longer holds the lease (it expired and another relay took it)."""


@dataclass(frozen=True)
class Lease:
    feed_range: str
    owner: str | None
    expires_at: float
    continuation: str | None
    position: int
    updated_at: float
    etag: str | None = None

    @classmethod
    def from_doc(cls, doc: Document) -> Lease:
        return cls(
            feed_range=doc["feedRange"],
            owner=doc.get("owner"),
            expires_at=doc.get("expiresAt", 0.0),
            continuation=doc.get("continuation"),
            position=doc.get("position", 0),
            updated_at=doc.get("updatedAt", 0.0),
            etag=doc.get("_etag"),
        )

    def held_by(self, owner: str, now: float) -> bool:
        return self.owner == owner and self.expires_at > now


def new_owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class LeaseStore:
    """Ownership and checkpoints per feed range, for one consumer ``group``."""

    def __init__(self, store: DocumentStore, group: str = "relay",
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.group = group
        self.clock = clock

    def _id(self, feed_range: str) -> str:
        # Feed ranges are opaque (JSON on Azure); a digest keeps the id within Cosmos's rules.
        return f"{self.group}.{hashlib.sha1(feed_range.encode()).hexdigest()[:20]}"

    def _doc(self, lease: Lease, **changes: object) -> Document:
        doc: Document = {
            "id": self._id(lease.feed_range),
            "partitionKey": LEASE_PK,
            "group": self.group,
            "feedRange": lease.feed_range,
            "owner": lease.owner,
            "expiresAt": lease.expires_at,
            "continuation": lease.continuation,
            "position": lease.position,
            "updatedAt": lease.updated_at,
        }
        doc.update(changes)
        return doc

    def ensure(self, feed_ranges: list[str]) -> None:
        """Create a free lease for every range that has none yet."""
        for feed_range in feed_ranges:
            blank = Lease(feed_range, None, 0.0, None, 0, self.clock())
            try:
                self.store.create(self._doc(blank))
            except errors.Conflict:
                pass

    def all(self) -> list[Lease]:
        docs = self.store.query_all(LEASE_PK, Query(where=(Cond("group", "=", self.group),)))
        return [Lease.from_doc(d) for d in docs]

    def get(self, feed_range: str) -> Lease:
        return Lease.from_doc(self.store.read(LEASE_PK, self._id(feed_range)))

    def try_acquire(self, feed_range: str, owner: str, ttl: float) -> Lease | None:
        """Take the range if it is free, expired or already ours; None if someone holds it."""
        lease = self.get(feed_range)
        now = self.clock()
        if lease.owner not in (None, owner) and lease.expires_at > now:
            return None
        doc = self._doc(lease, owner=owner, expiresAt=now + ttl, updatedAt=now)
        try:
            return Lease.from_doc(self.store.replace(doc, if_match=lease.etag))
        except errors.PreconditionFailed:
            return None  # another relay took it between our read and write

    def renew(self, lease: Lease, ttl: float) -> Lease:
        now = self.clock()
        if lease.expires_at <= now:
            raise LeaseLost(f"lease on {lease.feed_range} expired before renewal")
        doc = self._doc(lease, expiresAt=now + ttl, updatedAt=now)
        try:
            return Lease.from_doc(self.store.replace(doc, if_match=lease.etag))
        except (errors.PreconditionFailed, errors.NotFound) as exc:
            raise LeaseLost(f"lease on {lease.feed_range} was taken over") from exc

    def checkpoint(self, lease: Lease, continuation: str, position: int, ttl: float) -> Lease:
        """Record progress; refused (LeaseLost) unless this owner still holds the lease."""
        if position < lease.position:
            raise errors.InvalidRequest(
                f"checkpoint for {lease.feed_range} would move back from {lease.position} to {position}"
            )
        now = self.clock()
        if lease.expires_at <= now:
            raise LeaseLost(f"lease on {lease.feed_range} expired before the checkpoint")
        doc = self._doc(lease, continuation=continuation, position=position,
                        expiresAt=now + ttl, updatedAt=now)
        try:
            return Lease.from_doc(self.store.replace(doc, if_match=lease.etag))
        except (errors.PreconditionFailed, errors.NotFound) as exc:
            raise LeaseLost(f"lease on {lease.feed_range} was taken over") from exc

    def release(self, lease: Lease) -> None:
        doc = self._doc(lease, owner=None, expiresAt=0.0, updatedAt=self.clock())
        try:
            self.store.replace(doc, if_match=lease.etag)
        except (errors.PreconditionFailed, errors.NotFound):
            pass  # already taken over: nothing of ours to release

    def reset(self) -> None:
        """Forget every checkpoint of this group (rebuilds): consumers start from the beginning."""
        for lease in self.all():
            self.store.upsert(self._doc(Lease(lease.feed_range, None, 0.0, None, 0, self.clock())))
