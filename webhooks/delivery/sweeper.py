"""The delivery sweeper: the store says what is owed, and what was lost is driven again.

A delivery task lives in the broker; a worker killed while it runs, a relay killed after its
checkpoint, or a broker restarted empty can lose it, and a task the broker still holds
unacknowledged comes back only after the visibility timeout (an hour). The sweeper does not
trust the broker: it reads the change feed itself (its own checkpoints, apart from the
relay's) and, for every event a receiver wants, asks the receiver's tracker
(:mod:`webhooks.persistence.trackers`, the delivery state in the store) whether it got
there. Every ``SWEEP_SECONDS`` it looks again at what was still open:

- delivered (the tracker's ``delivered`` at or past the event): done, forgotten;
- claimed by a live task, or backing off until a retry that is not yet due, or held after
  its retry budget: in hand, kept open (and counted);
- otherwise, once the event is older than ``GRACE_SECONDS`` (the normal path had its
  chance): **re-driven**, one delivery task queued for it. A claim left by a killed worker
  lapses after the drain's claim time, a retry lost with its worker is due: both are
  re-driven within a minute, never an hour.

Re-driving twice is harmless: the drain's claims let one task deliver, and what is delivered
again carries the same MSH-10 or webhook-id. Several sweepers (one per relay process) may
run: each re-drives what it finds open, and their state document is written etag-guarded.

Kinds of receiver register themselves (:func:`register`): the webhooks' subscriptions and
ADT out's HL7 destinations, each with its targets, its tracker kind, its held-stream
consumer (a held stream is parked on purpose, never re-driven) and how to queue a delivery.
The open entries are what ``/healthz`` and ``hl7_status`` count per receiver.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cosmos_backend import outbox
from cosmos_backend.store import Document, DocumentStore
from hisadmin.core import held_streams, keys
from webhooks.persistence import trackers
from webhooks.persistence.sweeps import SweepState, read_state, save_state

log = logging.getLogger(__name__)

SWEEP_SECONDS = 15.0  # between two sweeps (DELIVERY_SWEEP_SECONDS)
GRACE_SECONDS = 20.0  # an event younger than this is left to the normal path (DELIVERY_GRACE_SECONDS)
MAX_OPEN = 5_000  # entries kept (one document: ~100 bytes each); beyond, the oldest dropped, logged


@dataclass(frozen=True)
class Kind:
    """One kind of receiver. ``targets(store)`` the receivers (each with ``id``, ``active``,
    ``active_since`` and ``wants(event_type)``); ``queue(target_id, stream, seq)`` queues a
    delivery task; ``consumer`` the held-stream consumer whose holds park a stream."""

    name: str  # the tracker kind: "sub", "hl7"
    targets: Callable[[DocumentStore], list[Any]]
    queue: Callable[[str, str, int], None]
    consumer: str
    # ``wake(store, target, stream, seq)``: whether a delivery backing off should be tried
    # now rather than at its retry (its receiver was unreachable and answers again)
    wake: Callable[[DocumentStore, Any, str, int], bool] | None = None


_kinds: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    """Add (or replace) a kind of receiver; apps call it when they load."""
    _kinds[kind.name] = kind


def kinds() -> tuple[Kind, ...]:
    return tuple(_kinds.values())


def open_key(kind: str, target_id: str, stream: str) -> str:
    return f"{kind}|{target_id}|{stream}"


# What an open entry's state is, as counted per receiver.
PENDING, SENDING, RETRYING, HELD = "pending", "sending", "retrying", "held"


@dataclass(frozen=True)
class SweepResult:
    events: int = 0  # events read off the feed
    redriven: int = 0
    open: int = 0


class Sweeper:
    def __init__(self, store: DocumentStore, *, clock: Callable[[], float] = time.time,
                 grace: float | None = None, page_size: int = 500) -> None:
        self.store = store
        self.clock = clock
        self.grace = grace if grace is not None else float(
            os.environ.get("DELIVERY_GRACE_SECONDS", GRACE_SECONDS))
        self.page_size = page_size

    def sweep(self) -> SweepResult:
        """One sweep: new events off the feed into the open set, every open entry checked,
        the lost ones re-driven, the state saved."""
        state = read_state(self.store)
        targets = {k.name: [t for t in k.targets(self.store) if t.active] for k in kinds()}
        if not any(targets.values()) and not state.open:
            return SweepResult()  # nobody to deliver to: the feed is not read at all
        events = self._read_feed(state, targets)
        redriven = self._check(state, targets)
        state.swept_at = self.clock()
        if len(state.open) > MAX_OPEN:
            log.error("delivery sweep: %s open entries; the oldest dropped", len(state.open))
            for key in sorted(state.open, key=lambda k: state.open[k][1])[:-MAX_OPEN]:
                del state.open[key]
        save_state(self.store, state)
        return SweepResult(events, redriven, len(state.open))

    def _read_feed(self, state: SweepState, targets: dict[str, list[Any]]) -> int:
        read = 0
        for feed_range in self.store.feed_ranges():
            continuation = state.continuations.get(feed_range)
            while True:
                page = self.store.read_feed(feed_range, continuation=continuation,
                                            max_items=self.page_size)
                for doc in page.items:
                    if outbox.is_event(doc) and outbox.event_stream(doc).startswith(keys.PATIENT):
                        read += 1
                        self._note(state, targets, doc)
                continuation = page.continuation
                if not page.items:
                    break
            state.continuations[feed_range] = continuation
        return read

    def _note(self, state: SweepState, targets: dict[str, list[Any]], doc: Document) -> None:
        event = outbox.event_payload(doc)
        stream, seq = outbox.event_stream(doc), outbox.event_seq(doc)
        occurred = _occurred(event)
        for kind, found in targets.items():
            for target in found:
                if not target.wants(str(event.get("type"))):
                    continue
                if occurred is not None and occurred < target.active_since:
                    continue
                key = open_key(kind, target.id, stream)
                before = state.open.get(key)
                if before is None or before[0] < seq:
                    state.open[key] = [seq, float(doc.get("_ts") or self.clock()), PENDING]

    def _check(self, state: SweepState, targets: dict[str, list[Any]]) -> int:
        now = self.clock()
        redriven = 0
        live = {(kind, t.id) for kind, found in targets.items() for t in found}
        by_id = {(kind, t.id): t for kind, found in targets.items() for t in found}
        held = {k.name: held_streams.held_now(self.store, k.consumer) for k in kinds()}
        for key, entry in list(state.open.items()):
            kind, target_id, stream = key.split("|", 2)
            if (kind, target_id) not in live:
                del state.open[key]  # the receiver is gone or switched off
                continue
            seq, written = int(entry[0]), float(entry[1])
            tracker = trackers.read(self.store, target_id, keys.suffix(stream), kind=kind)
            if tracker.delivered >= seq:
                del state.open[key]
                continue
            if tracker.held:
                entry[2] = HELD
                continue
            if stream in held.get(kind, {}):
                entry[2] = HELD  # parked at the fan-out: released by replay_dead_letters
                continue
            if tracker.claim is not None and tracker.claim_until > now:
                entry[2] = SENDING
                continue
            if tracker.failing_seq is not None:
                entry[2] = RETRYING
                if tracker.retry_at > now and self._wake_now(kind, by_id, target_id, stream,
                                                          tracker):
                    redriven += 1
                    continue
                if tracker.retry_at > now - self.grace:
                    continue  # its retry is due later (or just now): its task has it
            elif now - written < self.grace:
                entry[2] = PENDING
                continue  # the normal path is still on it
            _kinds[kind].queue(target_id, stream, seq)
            redriven += 1
            log.warning("delivery sweep: %s-%s %s#%s re-driven (no live task had it)",
                        kind, target_id, stream, seq)
        return redriven

    def _wake_now(self, kind: str, by_id: dict[tuple[str, str], Any], target_id: str,
                  stream: str, tracker: trackers.Tracker) -> bool:
        """Try a delivery backing off now when its kind says its receiver is back (the
        retry's own task then finds it done): an engine that returns is sent to within a
        sweep, not at the next backoff slot minutes later."""
        wake = _kinds[kind].wake
        target = by_id.get((kind, target_id))
        if wake is None or target is None or tracker.failing_seq is None:
            return False
        if not wake(self.store, target, stream, tracker.failing_seq):
            return False
        try:
            trackers.save(self.store, tracker.but(retry_at=self.clock()))
        except trackers.TrackerChanged:
            return False  # someone is on it
        _kinds[kind].queue(target_id, stream, tracker.failing_seq)
        log.info("delivery sweep: %s-%s %s#%s tried now: its receiver answers again",
                 kind, target_id, stream, tracker.failing_seq)
        return True


def _occurred(event: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(event["occurredAt"]))
    except (KeyError, ValueError):
        return None


def open_counts(store: DocumentStore) -> dict[tuple[str, str], dict[str, int]]:
    """(kind, target id) → how many patients' deliveries are open, by state (pending,
    sending, retrying, held), as of the last sweep."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for key, entry in read_state(store).open.items():
        kind, target_id, _ = key.split("|", 2)
        counts = out.setdefault((kind, target_id), {})
        status = str(entry[2]) if len(entry) > 2 else PENDING
        counts[status] = counts.get(status, 0) + 1
    return out


def last_sweep(store: DocumentStore) -> float:
    return read_state(store).swept_at


class SweeperThread:
    """Sweeps every ``interval`` seconds on a daemon thread until :meth:`stop` (the relay's
    processes run one); an error is logged and the next sweep tries again."""

    def __init__(self, store_factory: Callable[[], DocumentStore], *,
                 interval: float | None = None) -> None:
        self.store_factory = store_factory
        self.interval = interval if interval is not None else float(
            os.environ.get("DELIVERY_SWEEP_SECONDS", SWEEP_SECONDS))
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="delivery-sweeper", daemon=True)

    def start(self) -> SweeperThread:
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stopping.wait(self.interval):
            try:
                if kinds():
                    Sweeper(self.store_factory()).sweep()
            except Exception:  # noqa: BLE001 - logged; the next sweep tries again
                log.exception("delivery sweep failed")

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout)


def start_thread() -> SweeperThread:
    """The sweeper beside a relay (registered with
    :func:`hisadmin.core.consumers.register_sweeper` when the webhooks app loads)."""
    from hisadmin.core.store import get_store

    return SweeperThread(lambda: get_store("relay")).start()


def sweep_once(store: DocumentStore, targets: Iterable[Kind] | None = None) -> SweepResult:
    """One sweep now (tests, ``hl7_status --sweep``)."""
    if targets is not None:
        for kind in targets:
            register(kind)
    return Sweeper(store).sweep()
