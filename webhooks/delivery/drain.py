"""Deliver a patient's events to one subscription, in order, at least once.

A task asks for event ``seq`` of a patient's stream. Per subscription and patient one task
at a time holds the tracker's claim (etag-guarded, expiring, so a killed worker's claim
lapses) and delivers every pending event in sequence order up to the highest one asked for;
a task that finds the claim taken records what it wants and leaves, and the holder picks it
up before it lets go. A failure keeps later events of that patient waiting (order) until
the retries, with backoff, succeed or give up: then the event is dead-lettered and the
patient's next events flow. Other patients and other subscriptions never wait on it.

One mechanism, two transports: what reaching a receiver means is a :class:`Transport`
strategy — :class:`WebhookTransport` (a signed HTTP POST, 2xx is delivered) or the HL7
interface's MLLP send that waits for the engine's ACK (``hl7v2.outbound.transport``). The
order, claims, backoff and dead letters above are the same code for both.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from hisadmin.core.recent_events import read_event
from patients.events_public import public_event
from webhooks.delivery.sender import DeliveryFailed, Post
from webhooks.domain import signing
from webhooks.domain.subscriptions import Subscription
from webhooks.persistence import deadletters, subscriptions, trackers
from webhooks.persistence.secrets import SecretUnreadable
from webhooks.persistence.trackers import Tracker, TrackerChanged

log = logging.getLogger(__name__)


class Target(Protocol):
    """What the drain needs of a receiver: a webhook subscription, an HL7 destination."""

    id: str
    active: bool
    active_since: datetime

    def wants(self, event_type: str) -> bool: ...


class Transport(Protocol):
    """How events reach one kind of receiver; the drain (order, claims, retries, dead
    letters) is the same for all. ``kind`` names the receiver's trackers
    (``<kind>-<target id>``), ``label`` its log lines."""

    kind: str
    label: str

    def find(self, store: DocumentStore, target_id: str) -> Target | None:
        """The receiver, or None when it is gone."""
        ...

    def send(self, store: DocumentStore, target: Any, stream: str,
             event: dict[str, Any]) -> str | None:
        """Deliver one stored event; None when the receiver took it, else why not (a short
        reason with no patient data: it goes into logs and dead letters)."""
        ...

    def dead_letter(self, store: DocumentStore, target: Any, *, stream: str, seq: int,
                    event_type: str, reason: str, attempts: int) -> None:
        """Keep an event the receiver refused for good, for admins to see and replay."""
        ...


class WebhookTransport:
    """Signed HTTP POSTs to a webhook subscription (the transport the drain was made for)."""

    kind = trackers.SUBSCRIPTION
    label = "webhook"

    def __init__(self, post: Post, timeout: float) -> None:
        self.post = post
        self.timeout = timeout
        self._secrets: dict[str, str] = {}  # one secret read per drain, as before

    def find(self, store: DocumentStore, target_id: str) -> Subscription | None:
        return subscriptions.find(store, target_id)

    def send(self, store: DocumentStore, target: Subscription, stream: str,
             event: dict[str, Any]) -> str | None:
        try:
            if target.id not in self._secrets:
                self._secrets[target.id] = subscriptions.secret_of(store, target.id)
        except SecretUnreadable:
            return "secret unreadable (SECRET_KEY changed?)"
        return self.post_event(target, stream, event, self._secrets[target.id])

    def post_event(self, sub: Subscription, stream: str, event: dict[str, Any],
                   secret: str) -> str | None:
        """POST one event; None when delivered, else why not (a status or an error kind)."""
        body = signing.body(public_event(event, patient_id=keys.suffix(stream)))
        headers = signing.headers(
            body,
            secret,
            event_type=event["type"],
            delivery=signing.delivery_id(sub.id, stream, int(event["seq"])),
        )
        try:
            status = self.post(sub.url, body, headers, self.timeout)
        except DeliveryFailed as exc:
            return str(exc)
        return None if 200 <= status < 300 else f"HTTP {status}"

    def dead_letter(self, store: DocumentStore, target: Subscription, *, stream: str, seq: int,
                    event_type: str, reason: str, attempts: int) -> None:
        deadletters.record(store, subscription_id=target.id, stream=stream, seq=seq,
                           event_type=event_type, reason=reason, attempts=attempts)


class FinalFailure(str):
    """A failure that another attempt would only repeat (an HL7 AR: the engine rejected the
    message itself): the retry budget is spent at once."""


@dataclass(frozen=True)
class Settings:
    timeout: float = 5.0  # seconds per POST
    max_attempts: int = 8
    backoff_base: float = 2.0  # seconds before the second attempt; doubles after
    backoff_cap: float = 600.0
    # Seconds from an event's first failure after which its retries are spent (None: only
    # ``max_attempts`` counts; with a budget, attempts go on until it is spent).
    retry_budget: float | None = None
    # What a spent budget does: False dead-letters the event and lets the patient's next
    # events go (the webhooks'); True dead-letters it and holds the patient's stream for
    # this receiver there (ADT out: an engine must never get a patient's messages out of
    # order) until the message is replayed.
    hold_when_spent: bool = False

    @property
    def claim_seconds(self) -> float:
        # Outlives one POST comfortably; a dead holder's claim lapses after it.
        return 2 * self.timeout + 10.0


@dataclass(frozen=True)
class Outcome:
    kind: str  # delivered | duplicate | queued | later | inactive | lost | held
    delivered: int = 0  # events POSTed successfully by this run
    retry_in: float | None = None  # run the task again after this many seconds


class Deliverer:
    def __init__(
        self,
        store: DocumentStore,
        post: Post | None = None,
        settings: Settings | None = None,
        *,
        clock: Callable[[], float] = time.time,
        transport: Transport | None = None,
    ) -> None:
        """``post`` makes it the webhooks' drain; ``transport`` any other kind of receiver."""
        self.store = store
        self.settings = settings or Settings()
        self.clock = clock
        if transport is None:
            assert post is not None, "a Deliverer needs a post or a transport"
            transport = WebhookTransport(post, self.settings.timeout)
        self.transport = transport

    def run(self, subscription_id: str, stream: str, seq: int, *, token: str) -> Outcome:
        """Make sure event ``seq`` of ``stream`` reaches the subscription (or is on its way)."""
        sub = self.transport.find(self.store, subscription_id)
        if sub is None or not sub.active:
            return Outcome("inactive")
        patient_id = keys.suffix(stream)
        while True:
            tracker = trackers.read(self.store, subscription_id, patient_id, kind=self.transport.kind)
            now = self.clock()
            if tracker.delivered >= seq:
                # Our event is done, but this may be the only task left on the patient's
                # stream: the retry of a holder that drained past its own event and failed on
                # a later one (the tasks of those events left them to it), or a holder
                # interrupted with its claim. Leave only when nothing is pending or another
                # task holds the claim (it drains everything wanted before letting go).
                if tracker.claimed_by_other(token, now):
                    return Outcome("duplicate")
                if tracker.wanted <= tracker.delivered:
                    if tracker.claim != token:
                        return Outcome("duplicate")
                    try:  # our own claim, left behind by an interrupted run: let it go
                        trackers.save(self.store, tracker.but(claim=None, claim_until=0.0))
                    except TrackerChanged:
                        continue
                    return Outcome("duplicate")
            if tracker.backing_off(now):
                # The failing event's own retry drains the rest (told so by ``wanted``); come
                # back when it is due anyway, in case that retry was lost with its worker.
                if tracker.wanted < seq:
                    try:
                        trackers.save(self.store, tracker.but(wanted=seq))
                    except TrackerChanged:
                        continue
                if tracker.held:  # waits for a replay of the held event, no task needed
                    return Outcome("held")
                return Outcome("later", retry_in=tracker.retry_at - now + 0.1)
            if tracker.claimed_by_other(token, now):
                if tracker.wanted >= seq:
                    return Outcome("queued")
                try:
                    trackers.save(self.store, tracker.but(wanted=seq))
                except TrackerChanged:
                    continue
                return Outcome("queued")
            claimed = tracker.but(
                claim=token,
                claim_until=now + self.settings.claim_seconds,
                wanted=max(tracker.wanted, seq),
            )
            if tracker.etag is None:  # first event for this patient: skip older history
                claimed = claimed.but(delivered=self._first(sub, stream, seq) - 1)
            try:
                claimed = trackers.save(self.store, claimed)
            except TrackerChanged:
                continue
            return self._drain(sub, stream, claimed, token)

    def _first(self, sub: Target, stream: str, seq: int) -> int:
        """The lowest sequence up to ``seq`` from which every event is not older than the
        subscription's activation (a backwards walk over this patient's recent events)."""
        first = seq
        while first > 1:
            event = read_event(self.store, stream, first - 1)
            if event is None or _occurred(event) < sub.active_since:
                break
            first -= 1
        return first

    def _drain(self, sub: Target, stream: str, tracker: Tracker, token: str) -> Outcome:
        done = 0
        while True:
            if tracker.delivered >= tracker.wanted:
                released = tracker.but(claim=None, claim_until=0.0)
                try:
                    trackers.save(self.store, released)
                    return Outcome("delivered", done)
                except TrackerChanged:
                    fresh = self._merge(tracker, token)
                    if fresh is None:
                        return Outcome("lost", done)
                    tracker = fresh
                    continue
            seq = tracker.delivered + 1
            event = read_event(self.store, stream, seq)
            if event is None or not sub.wants(event["type"]) or _occurred(event) < sub.active_since:
                tracker = tracker.but(delivered=seq)  # saved with the next write
                continue
            failure = self.transport.send(self.store, sub, stream, event)
            now = self.clock()
            if failure is None:
                done += 1
                after = tracker.but(
                    delivered=seq,
                    failing_seq=None,
                    failing_attempts=0,
                    retry_at=0.0,
                    claim_until=now + self.settings.claim_seconds,
                )
            else:
                same = tracker.failing_seq == seq
                attempts = (tracker.failing_attempts if same else 0) + 1
                since = tracker.failing_since if same and tracker.failing_since else now
                if self._spent(failure, attempts, now - since) and self.settings.hold_when_spent:
                    return self._hold(sub, stream, tracker, token, seq=seq, event=event,
                                      failure=failure, attempts=attempts, since=since, done=done)
                if self._spent(failure, attempts, now - since):
                    self.transport.dead_letter(
                        self.store,
                        sub,
                        stream=stream,
                        seq=seq,
                        event_type=event["type"],
                        reason=failure,
                        attempts=attempts,
                    )
                    log.warning(
                        "%s %s: %s#%s dead-lettered after %s attempts (%s)",
                        self.transport.label,
                        sub.id,
                        stream,
                        seq,
                        attempts,
                        failure,
                    )
                    after = tracker.but(
                        delivered=seq,
                        failing_seq=None,
                        failing_attempts=0,
                        failing_since=0.0,
                        retry_at=0.0,
                        claim_until=now + self.settings.claim_seconds,
                    )
                else:
                    delay = signing.backoff(
                        attempts, base=self.settings.backoff_base, cap=self.settings.backoff_cap
                    )
                    after = tracker.but(
                        failing_seq=seq,
                        failing_attempts=attempts,
                        failing_since=since,
                        retry_at=now + delay,
                        claim=None,
                        claim_until=0.0,
                    )
                    log.info(
                        "%s %s: %s#%s attempt %s failed (%s); retry in %.1fs",
                        self.transport.label,
                        sub.id,
                        stream,
                        seq,
                        attempts,
                        failure,
                        delay,
                    )
                    saved = self._save_merged(after, token)
                    return Outcome(
                        "later" if saved is None else "retry", done, retry_in=delay + 0.1
                    )
            saved = self._save_merged(after, token)
            if saved is None:
                return Outcome("lost", done)
            tracker = saved

    def _spent(self, failure: str, attempts: int, failing_for: float) -> bool:
        """Whether the retries of a failing event are spent: a final failure at once; with a
        budget, once it is used up; without, after ``max_attempts``."""
        if isinstance(failure, FinalFailure):
            return True
        if self.settings.retry_budget is not None:
            return failing_for >= self.settings.retry_budget
        return attempts >= self.settings.max_attempts

    def _hold(self, sub: Target, stream: str, tracker: Tracker, token: str, *, seq: int,
              event: dict[str, Any], failure: str, attempts: int, since: float,
              done: int) -> Outcome:
        """The budget is spent and order matters: dead-letter the event, keep the tracker
        failing at it and held (the patient's later events wait behind it), and hand the
        transport the hold to make visible. Replaying the letter releases it."""
        self.transport.dead_letter(self.store, sub, stream=stream, seq=seq,
                                   event_type=event["type"], reason=failure, attempts=attempts)
        held = tracker.but(failing_seq=seq, failing_attempts=attempts, failing_since=since,
                           retry_at=0.0, held=True, claim=None, claim_until=0.0)
        saved = self._save_merged(held, token)
        hold = getattr(self.transport, "hold", None)
        if hold is not None:
            hold(self.store, sub, stream=stream, seq=seq, event=event, reason=failure)
        log.warning("%s %s: %s#%s held after %s attempts (%s): the patient's later "
                    "messages wait until it is replayed", self.transport.label, sub.id,
                    stream, seq, attempts, failure)
        return Outcome("held" if saved is not None else "lost", done)

    def replay(self, letter: deadletters.DeadLetter) -> str:
        """Deliver a dead letter's event once more, out of order (its patient's later events
        went on). The letter goes first; a new failure writes it again, one attempt more.
        A fan-out letter is no delivery: :func:`webhooks.delivery.fanout.replay` replays it."""
        if letter.kind != deadletters.DELIVERY:
            return "not a delivery"
        if not deadletters.remove(self.store, letter):
            return "already replayed"
        sub = self.transport.find(self.store, letter.subscription_id)
        event = read_event(self.store, letter.stream, letter.seq)
        if sub is None or event is None:
            return "gone"
        if not sub.active:
            deadletters.record(
                self.store,
                subscription_id=sub.id,
                stream=letter.stream,
                seq=letter.seq,
                event_type=letter.event_type,
                reason="subscription disabled",
                attempts=letter.attempts,
            )
            return "subscription disabled"
        failure = self.transport.send(self.store, sub, letter.stream, event)
        if failure is None:
            return "delivered"
        deadletters.record(
            self.store,
            subscription_id=sub.id,
            stream=letter.stream,
            seq=letter.seq,
            event_type=letter.event_type,
            reason=failure,
            attempts=letter.attempts + 1,
        )
        return "failed again"

    def _merge(self, tracker: Tracker, token: str) -> Tracker | None:
        """Re-read after a concurrent write: ours still (with what others want), or None."""
        fresh = trackers.read(self.store, tracker.subscription_id, tracker.patient_id,
                              kind=tracker.kind)
        if fresh.claim != token:
            return None  # our claim lapsed and another task took over
        return tracker.but(wanted=max(fresh.wanted, tracker.wanted), etag=fresh.etag)

    def _save_merged(self, tracker: Tracker, token: str) -> Tracker | None:
        while True:
            try:
                return trackers.save(self.store, tracker)
            except TrackerChanged:
                fresh = self._merge(tracker, token)
                if fresh is None:
                    return None
                tracker = tracker.but(wanted=fresh.wanted, etag=fresh.etag)


def _occurred(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["occurredAt"])
