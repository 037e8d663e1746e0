"""The change-feed relay: feed ranges under leases → published events → checkpoints.

``publish`` hands a page's events, by id, to whoever consumes them (:func:`celery_publisher`:
per consumer registered in ``hisadmin.core.consumers`` — the worklist projections among them
— one Celery task message per patient stream in the page, carrying that stream's sequence
numbers in order). At-least-once: a page is checkpointed only after every event in it
was accepted by the broker, so a crash anywhere re-sends (consumers are idempotent). Several
relays split the ranges: each takes at most its fair share of ranges, and takes over ranges
whose lease expired; a range is only read while its lease has a third of its time left, so a
relay that stalled never reads a range another relay already owns. Polling stays at
``busy_poll`` for ``hot_window`` seconds after the last change (bursts see ~50 ms latency),
then backs off to ``idle_max``; when the broker is down it backs off exponentially and keeps
its checkpoints.

Each step reads a page of every range the relay holds and hands them over together (one
message to the projections for all of them); after a step that moved anything but filled no
page, the relay waits ``gather`` seconds (the relays :func:`build_relay` makes: the setting
``RELAY_GATHER_MS``, 20 ms) before the next, so
that under load a message carries several commands' events rather than one. Each message
costs Celery about seven Redis calls (publish, fetch, ack) and the worker's CPU with them;
see docs/performance.md, "Fewer messages".

A page's per-page messages are noted in Redis before they are sent, until their consumers
have handled them, and the page pending until a worker has committed its views
(:mod:`hisadmin.core.views_lag`): its age is the views' lag, and a message still unhandled
after ``redrive_after`` seconds, with nothing waiting in its queue, is sent again (it was lost
with a worker killed whole, or given up after its retries): :meth:`Relay.redrive`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from celery import current_app
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from cosmos_backend import errors
from cosmos_backend.leases import LEASE_PK, Lease, LeaseLost, LeaseStore, new_owner_id
from cosmos_backend.store import Cond, DocumentStore, Query
from hisadmin.core import recent_events, views_lag
from hisadmin.core.consumers import consumers_of
from worklists.delivery.tasks import PAGE_TASK, project_page_here
from worklists.persistence.feed import EventRef, events_in

log = logging.getLogger(__name__)

# publish(events, marks=None, note=None): raises when the broker does not accept them; a
# per-page consumer (the projections) gets the page with ``marks`` ([{"range", "position"}],
# one per feed range the hand-over covers); ``note`` is given the per-page messages
# (``[task, queue, args]``) before any is sent, so the relay can wait for the page to be
# marked projected (hisadmin.core.views_lag) and send them again if it is not.
Publish = Callable[..., object]
REDRIVE_CHECK_S = 1.0  # how often a relay looks for pages overdue


@dataclass
class RelayStats:
    published: int = 0
    pages: int = 0
    broker_errors: int = 0
    redriven: int = 0  # pages sent again, not projected in time
    started: float = field(default_factory=time.time)


class Relay:
    def __init__(self, store: DocumentStore, leases: LeaseStore, publish: Publish, *,
                 owner: str | None = None, lease_ttl: float = 10.0, page_size: int = 200,
                 busy_poll: float = 0.05, idle_max: float = 1.0,
                 hot_window: float = 5.0, keep_events: bool = False,
                 gather: float = 0.0, redrive_after: float = 15.0,
                 resend: Callable[[list[list[Any]]], None] | None = None) -> None:
        self.store = store
        self.leases = leases
        self.publish = publish
        self.owner = owner or new_owner_id()
        self.lease_ttl = lease_ttl
        self.page_size = page_size
        self.busy_poll = busy_poll
        self.idle_max = idle_max
        self.hot_window = hot_window
        # A relay inside a worker keeps the events it read for the worker's own tasks
        # (hisadmin.core.recent_events): they skip re-reading them.
        self.keep_events = keep_events
        self.broker_backoff_max = 5.0
        # After a page that was not full, wait this long before reading on, so that a busy
        # ward's commands go to the projections several at a time (RELAY_GATHER_MS).
        self.gather = gather
        self.full = False
        self.held: dict[str, Lease] = {}
        self.stats = RelayStats()
        self._next_balance = 0.0
        self._last_heartbeat = 0.0
        # A page's message not handled this many seconds after the page was read is sent
        # again (``RELAY_REDRIVE_AFTER_S``; 0: never) with ``resend`` (default: the
        # publisher's), once nothing waits in its queue: it was lost.
        self.redrive_after = redrive_after
        self.resend = resend or getattr(publish, "resend", None)
        self._redriven: dict[str, float] = {}  # page key → when this relay last sent it again
        self._next_redrive = 0.0

    # ------------------------------------------------------------------ leases
    def balance(self) -> None:
        """Renew what we hold; take free or expired ranges up to our fair share."""
        now = time.time()
        self._heartbeat(now)
        for feed_range, lease in list(self.held.items()):
            if now - lease.updated_at > self.lease_ttl / 3:
                try:
                    self.held[feed_range] = self.leases.renew(lease, self.lease_ttl)
                except LeaseLost:
                    log.warning("lost range=%s owner=%s", feed_range, self.owner)
                    del self.held[feed_range]
        if now < self._next_balance:
            return
        self._next_balance = now + self.lease_ttl / 3
        ranges = self.store.feed_ranges()
        self.leases.ensure(ranges)
        all_leases = self.leases.all()
        live_owners = self._live_owners(now) | {lease.owner for lease in all_leases
                                                if lease.owner and lease.expires_at > now}
        share = math.ceil(len(ranges) / len(live_owners))
        for lease in all_leases:
            if len(self.held) >= share:
                break
            if lease.feed_range in self.held:
                continue
            if lease.owner and lease.owner != self.owner and lease.expires_at > now:
                continue
            taken = self.leases.try_acquire(lease.feed_range, self.owner, self.lease_ttl)
            if taken is not None:
                log.info("acquired range=%s owner=%s", lease.feed_range, self.owner)
                self.held[lease.feed_range] = taken
        # Give back ranges beyond our share so a newly started relay gets work.
        while len(self.held) > share:
            feed_range, lease = self.held.popitem()
            self._release(lease)

    def _release(self, lease: Lease) -> None:
        # Logged before the write: once released another relay may take it at once.
        log.info("released range=%s owner=%s", lease.feed_range, self.owner)
        self.leases.release(lease)

    def release_all(self) -> None:
        for lease in self.held.values():
            self._release(lease)
        self.held.clear()
        try:
            self.leases.store.delete(LEASE_PK, self._presence_id())
        except errors.StoreError:
            pass  # expires by itself

    # Presence: a relay that holds no range yet must still count when shares are computed,
    # or the first relay would keep every range for ever.
    def _presence_id(self) -> str:
        return f"{self.leases.group}-presence.{self.owner}"

    def _heartbeat(self, now: float) -> None:
        if now - self._last_heartbeat < self.lease_ttl / 3:
            return
        self.leases.store.upsert({
            "id": self._presence_id(), "partitionKey": LEASE_PK,
            "group": f"{self.leases.group}-presence", "owner": self.owner,
            "expiresAt": now + self.lease_ttl, "updatedAt": now})
        self._last_heartbeat = now

    def _live_owners(self, now: float) -> set[str]:
        docs = self.leases.store.query_all(LEASE_PK, Query(where=(
            Cond("group", "=", f"{self.leases.group}-presence"),)))
        return {d["owner"] for d in docs if d.get("expiresAt", 0) > now} | {self.owner}

    # ------------------------------------------------------------------ work
    def pump_ranges(self, ranges: list[str]) -> int:
        """Relay a page of each range as one hand-over: the events of all of them go out
        together (the projections get one message for every range's page, each range's
        position marked in it), then each range is checkpointed. A stream's events are all
        in one range, so its order holds. Returns how many documents the pages covered."""
        read = []
        self.full = False
        for feed_range in ranges:
            lease = self.held[feed_range]
            if lease.expires_at - time.time() < self.lease_ttl / 3:
                continue  # too close to expiry to be sure it is still ours: renew first
            page = self.store.read_feed(feed_range, continuation=lease.continuation,
                                        max_items=self.page_size)
            if page.items:
                read.append((feed_range, page,
                             max(int(doc.get("_lsn", 0)) for doc in page.items)))
        if not read:
            return 0
        events: list[EventRef] = []
        marks = []
        for feed_range, page, position in read:
            found = events_in(page.items)
            if found:
                if self.keep_events:
                    recent_events.keep(page.items)  # before the tasks can run
                events += found
                marks.append({"range": feed_range, "position": position})
        if events:
            # Its messages noted before they are sent: a worker may handle them at once.
            key = views_lag.page_key(marks) if marks else ""
            read_at = time.time()
            noted: list[str] = []

            def note(messages: list[list[Any]]) -> None:
                if key:
                    views_lag.handing_over(key, read_at, messages, views=PAGE_TASK)
                    noted.extend(task for task, _, _ in messages)

            try:
                self.publish(events, marks=marks, note=note)
            except BaseException:
                if noted:
                    views_lag.forget_page(key, noted)
                raise
            self.stats.published += len(events)
        for feed_range, page, position in read:
            lease = self.held[feed_range]
            try:
                self.held[feed_range] = self.leases.checkpoint(
                    lease, page.continuation, max(position, lease.position), self.lease_ttl)
            except LeaseLost:
                # Another relay owns it now and will re-send from its checkpoint: harmless
                # duplicates, which the projections ignore.
                log.warning("lost range=%s owner=%s", feed_range, self.owner)
                del self.held[feed_range]
            self.stats.pages += 1
        self.full = any(len(page.items) >= self.page_size for _, page, _ in read)
        return sum(len(page.items) for _, page, _ in read)

    def step(self) -> int:
        self.balance()
        moved = self.pump_ranges(list(self.held))
        self.publish_lag()
        return moved

    def _ours(self, key: str) -> bool:
        """A page of a range this relay holds (sent by it, or by the relay that held the
        range before)."""
        return not views_lag.ranges_of(key).isdisjoint(self.held)

    def lag_ms(self, pending: dict[str, float], now: float) -> float:
        """How long the oldest page handed to the projections has waited for its views."""
        oldest = min((at for key, at in pending.items() if self._ours(key)), default=None)
        return 0.0 if oldest is None else max(0.0, (now - oldest) * 1000)

    def publish_lag(self) -> None:
        """Publish the views' end-to-end lag (advisory: a broker error only skips it), and
        send again the pages overdue."""
        try:
            now = time.time()
            views_lag.publish_lag(self.owner, self.lag_ms(views_lag.pending_pages(), now))
            self.redrive(now)
        except RedisError as exc:
            log.debug("lag not published: %s", type(exc).__name__)

    def redrive(self, now: float) -> int:
        """Send again every unfinished message of the pages of our ranges handed over
        ``redrive_after`` seconds ago (or sent again that long ago), each once nothing waits
        in its queue (a message still queued behind others is late, not lost). Such a message
        was lost: the worker that took it was killed whole (its unacknowledged messages come
        back only after the broker's visibility timeout), or it gave up after its retries.
        Handling a page again changes nothing, so a page merely slow costs only the repeat.
        A follow-up sent on alone from its page is noted the same way
        (``views_lag.handing_on``) and sent again the same way. Returns how many pages were
        sent again. Raises RedisError."""
        if self.redrive_after <= 0 or self.resend is None or now < self._next_redrive:
            return 0
        self._next_redrive = now + REDRIVE_CHECK_S
        unfinished = views_lag.unfinished_pages()
        self._redriven = {k: at for k, at in self._redriven.items() if k in unfinished}
        overdue: dict[str, list[list[Any]]] = {}
        for key, kept in unfinished.items():
            if not self._ours(key):
                continue
            # Each message by its own time: a follow-up sent on alone counts from when it was
            # sent, or from when its retry is due.
            since = self._redriven.get(key, 0.0)
            late = [message for at, message in kept if now - max(at, since) >= self.redrive_after]
            if late:
                overdue[key] = late
        if not overdue:
            return 0
        waiting = views_lag.queued({str(queue) for messages in overdue.values()
                                    for _, queue, _ in messages})
        sent = 0
        for key, messages in overdue.items():
            # Only into a queue the workers have caught up with: behind others, it is late.
            lost = [message for message in messages if not waiting.get(str(message[1]))]
            if lost:
                self.resend(lost)
                self._redriven[key] = now
                sent += 1
        if sent:
            self.stats.redriven += sent
            views_lag.count_redriven(sent)
            log.warning("%s page(s) handed over more than %.0f s ago and not handled: sent "
                        "again", sent, self.redrive_after)
        return sent

    def run(self, stop: threading.Event) -> None:
        idle = self.busy_poll
        last_change = time.monotonic()
        broker_backoff = 0.1
        log.info("relay %s started", self.owner)
        try:
            while not stop.is_set():
                try:
                    moved = self.step()
                    broker_backoff = 0.1
                except (errors.Throttled, errors.Unavailable) as exc:
                    log.warning("store busy: %s", type(exc).__name__)
                    stop.wait(1.0)
                    continue
                except Exception as exc:  # broker down: keep checkpoints, back off
                    if not _is_broker_error(exc):
                        raise
                    self.stats.broker_errors += 1
                    log.warning("broker unavailable (%s); retrying in %.2fs",
                                type(exc).__name__, broker_backoff)
                    stop.wait(broker_backoff)
                    broker_backoff = min(broker_backoff * 2, self.broker_backoff_max)
                    continue
                if moved:
                    idle, last_change = self.busy_poll, time.monotonic()
                    if self.gather and not self.full:
                        # What the next few ms bring goes in the same hand-over: a message
                        # (and a write of the views) per several commands, not per command.
                        stop.wait(self.gather)
                    continue
                stop.wait(idle)
                if time.monotonic() - last_change > self.hot_window:
                    idle = min(idle * 2, self.idle_max)
        finally:
            self.release_all()
            views_lag.withdraw(self.owner)
            log.info("relay %s stopped", self.owner)


def _is_broker_error(exc: BaseException) -> bool:
    return isinstance(exc, (OperationalError, RedisConnectionError, ConnectionError, OSError))


# Kombu retries a lost broker connection itself before a publish gives up (0 + 2 + 4 s by
# default). The relay backs off on its own and keeps its checkpoint, so it wants the error
# at once: one quick retry, then raise.
FAIL_FAST_TRANSPORT = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2,
                       "interval_max": 0.2, "socket_connect_timeout": 2, "socket_timeout": 5}


def consumer_publisher(send_task: Callable[..., object]) -> Publish:
    """Send a page's events to every consumer that wants them, as ``send_task(name, args,
    queue)``: one message per consumer and stream, ``args=[stream, [seq, …]]`` in feed order
    (a stream's events of one page go to one task, which reads them in one round trip and
    writes each row they change once; the per-patient order holds within the message) — or,
    for a consumer registered ``per_page`` (the projections), one message for the whole page,
    ``args=[[[stream, [seq, …]], …]]``, applied in one write transaction of the views.

    Ids only: the task re-reads the events, so no patient data sits in the broker or logs.
    """

    def publish(events: list[EventRef], marks: list[dict[str, Any]] | None = None,
                note: Callable[[list[list[Any]]], None] | None = None) -> list[list[Any]]:
        messages: dict[tuple[str, str, str], list[int]] = {}
        open_gates: dict[str, bool] = {}  # asked once per page, after it was read
        per_page: set[str] = set()
        for event in events:
            for consumer in consumers_of(event.stream, event.type):
                if consumer.gate is not None:
                    if consumer.task not in open_gates:
                        open_gates[consumer.task] = consumer.gate()
                    if not open_gates[consumer.task]:
                        continue
                if consumer.per_page:
                    per_page.add(consumer.task)
                messages.setdefault((consumer.task, consumer.queue, event.stream),
                                    []).append(event.seq)
        pages: dict[tuple[str, str], list[list[Any]]] = {}
        for (task, queue, stream), seqs in messages.items():
            if task in per_page:
                pages.setdefault((task, queue), []).append([stream, seqs])
        sent = [[task, queue, [streams] if marks is None else [streams, marks]]
                for (task, queue), streams in pages.items()]
        if note is not None and sent:
            note(sent)  # before any is sent: a worker may handle one at once
        # The relay owns retrying (retry=False): it backs off and keeps its checkpoints.
        for (task, queue, stream), seqs in messages.items():
            if task not in per_page:
                send_task(task, args=[stream, seqs], queue=queue, retry=False)
        resend(sent)
        return sent

    def resend(sent: list[list[Any]]) -> None:
        for task, queue, args in sent:
            send_task(task, args=args, queue=queue, retry=False)

    publish.resend = resend  # type: ignore[attr-defined] # the relay's re-drive sends with it
    return publish


def celery_publisher(apply_pages: bool = False) -> Publish:
    """:func:`consumer_publisher` on the project's Celery app, over a broker connection of its
    own set to fail fast (the process's other connections — a worker's consumer, when the
    relay runs inside a worker — keep the app's settings). A connection that failed is
    dropped, and the next page opens a new one. ``apply_pages``: the projections' pages are
    applied in the calling thread instead (:func:`applying_here`)."""
    app = current_app
    options = {**(app.conf.broker_transport_options or {}), **FAIL_FAST_TRANSPORT}
    held: list[Any] = []

    def send_task(name: str, **kwargs: Any) -> object:
        if not held:
            held.append(app.connection_for_write(transport_options=options))
        try:
            return app.send_task(name, connection=held[0], **kwargs)
        except Exception:
            broken = held.pop()
            with suppress(Exception):  # it is broken already; closing it may fail too
                broken.release()
            raise

    here = {PAGE_TASK: project_page_here} if apply_pages else {}
    return consumer_publisher(applying_here(here, send_task))


def applying_here(here: dict[str, Callable[..., object]],
                  send_task: Callable[..., object]) -> Callable[..., object]:
    """``send_task``, except that a task named in ``here`` (task name → a function doing its
    work) is done in the calling thread, with the message's arguments, instead of being
    sent: the projections' page, where the relay runs in the worker that would apply it (no
    broker round trip, no hand-off to a pool thread). When that raises, the message is sent
    after all, and the task's retries take over."""

    def send(name: str, **kwargs: Any) -> object:
        run = here.get(name)
        if run is not None:
            try:
                return run(*kwargs["args"])
            except Exception as exc:  # noqa: BLE001 - handed to the workers below
                log.warning("%s failed in the relay (%s); sent to the workers", name,
                            type(exc).__name__)
        return send_task(name, **kwargs)

    return send
