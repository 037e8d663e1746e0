"""How far the views are behind the record, end to end, and the commands' admission control.

**The lag.** The relay notes each change-feed page it hands to the projections as pending
(below); the projection worker, once a page's views are committed, takes it off and raises
its ranges' *projected* positions (:func:`page_projected`). The relay then publishes the
end-to-end lag, in milliseconds: how long the oldest pending page of its ranges has been
waiting for its views (0 when every page it handed over is projected). Both sides meet in
Redis (the broker every process already has), so a command learns the lag with one
``HGETALL``, never a store round trip. Each relay publishes
under its own name; a reader takes the largest of the figures published in the last
:data:`FRESH_SECONDS` (a stopped relay's figure lapses; ``/healthz`` reports the relay).

**Pages not projected.** Before the relay hands a page over it notes, in one transaction,
each of its messages as *unfinished* (:func:`handing_over`: ids only, as the broker carries
them, with the time it read the page) and the page as *pending* for the views. The worker
that commits the page's views takes the page off the pending and its message off the
unfinished (:func:`page_projected`, in the same call that raises the positions); another
per-page consumer takes its own message off when it has handled it (:func:`page_done`). The
lag is the age of the oldest pending page of the relay's ranges, so a page whose message was
lost — its worker killed whole, holding it unacknowledged until the broker's visibility
timeout, or given up after its retries — keeps counting however many pages after it were
projected, and a relay (the same one, or the one that took its ranges over) sends the
unfinished messages again (:func:`unfinished_pages`, ``RELAY_REDRIVE_AFTER_S``).

**Admission control** (:func:`admit`): while the lag is above ``VIEWS_LAG_BOUND_MS``
(default 250 ms) a command waits before it commits, checking again every
:data:`POLL_SECONDS`, until the lag is back under the bound or ``VIEWS_ADMISSION_CAP_MS``
(default 2 s) has passed; then it commits anyway — a wait, never an error. A command may
wait a little; a view may not fall behind. Reads never wait (they commit nothing). The wait
is noted for the response's ``Server-Timing`` (``admission;dur=…``) and counted in Redis
(:func:`admission_counts`: shown by ``/healthz`` and ``relay_status``). When the lag cannot be
read (no broker configured, Redis down), nothing waits.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import redis
from django.conf import settings

log = logging.getLogger(__name__)

PENDING_KEY = "his:views:pending"  # hash: page key → epoch seconds the relay read the page
PAGES_KEY = "his:views:pages"  # hash: "<page key>#<task>" → a message not handled yet, JSON
LAG_KEY = "his:views:lag"  # hash: relay owner → "<ms>,<epoch seconds published>"
PROJECTED_KEY = "his:views:projected"  # hash: feed range → highest position projected
ADMISSION_KEY = "his:views:admission"  # hash: waits, waited_ms, capped
REDRIVEN_KEY = "his:views:redriven"  # counter: pages a relay sent again, not handled in time
FRESH_SECONDS = 3.0  # a relay publishes every poll (≤ 1 s); older figures are a stopped relay
POLL_SECONDS = 0.025
_READ_EVERY = 0.02  # a process reads the published lag at most this often outside a wait


# A page's views committed: raise each range's position, take the page off the pending and
# the projections' message off the unfinished.
_PROJECTED = """
for i = 3, #ARGV, 2 do
  local now = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > now then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1] .. '#' .. ARGV[2])
return 1
"""
_PRIORITY_SEP = "\x06\x16"  # kombu's Redis transport: a queue's list per priority step

_local = threading.local()
_waited: ContextVar[float] = ContextVar("his_admission_waited", default=0.0)
_last: dict[str, Any] = {"at": 0.0, "ms": None}


def _advisory(call: Callable[[redis.Redis], object], failed: str = "") -> None:
    """``call`` on the broker's client, if there is one. Advisory: a broker error is logged
    (as ``failed`` says, when given) and goes no further; the caller goes on either way."""
    try:
        client = _client()
        if client is not None:
            call(client)
    except redis.RedisError as exc:
        if failed:
            log.warning("%s: %s", failed, type(exc).__name__)


def _client() -> redis.Redis | None:
    url = getattr(settings, "CELERY_BROKER_URL", "") or ""
    if not url.startswith(("redis://", "rediss://", "redis+socket://", "unix://")):
        return None  # no broker configured (or not Redis): no lag to read, nothing waits
    cached = getattr(_local, "client", None)
    if cached is None or _local.url != url:
        cached = redis.Redis.from_url(url.replace("redis+socket://", "unix://"),
                                      socket_timeout=0.5, socket_connect_timeout=0.5)
        _local.client, _local.url = cached, url
    return cached


def bound_ms() -> float:
    return float(getattr(settings, "VIEWS_LAG_BOUND_MS", 250))


def cap_ms() -> float:
    return float(getattr(settings, "VIEWS_ADMISSION_CAP_MS", 2000))


# ------------------------------------------------------------------ pages, by key
def page_key(marks: list[dict[str, Any]]) -> str:
    """A hand-over's key: its ranges' positions (``marks``, as the page message carries
    them), the same in the relay that sends it and the worker that projects it."""
    return "|".join(sorted(f"{m['range']}@{int(m['position'])}" for m in marks))


def ranges_of(key: str) -> set[str]:
    return {part.rpartition("@")[0] for part in key.split("|")}


Marks = list[dict[str, Any]] | dict[str, Any] | None  # as a page message carries them


def _marks(marks: Marks) -> list[dict[str, Any]]:
    """A page message's marks as a list (one dict in messages of earlier releases)."""
    return [marks] if isinstance(marks, dict) else list(marks or [])


# ------------------------------------------------------------------ the projections' side
def page_projected(marks: Marks, task: str) -> None:
    """The views of a page are committed by its message for ``task``: each range's position
    in ``marks`` raised, the page off the pending and its message off the unfinished
    (advisory: a broker error is logged, never raised — the views are written either way;
    the relay sends the page again later, which changes nothing)."""
    found = _marks(marks)
    if not found:
        return
    args: list[Any] = [page_key(found), task]
    for mark in found:
        args += [str(mark["range"]), int(mark["position"])]
    _advisory(lambda client: client.eval(_PROJECTED, 3, PROJECTED_KEY, PENDING_KEY, PAGES_KEY,
                                         *args), "projected position not published")


def projected_positions() -> dict[str, int]:
    client = _client()
    if client is None:
        return {}
    return {k.decode(): int(v) for k, v in client.hgetall(PROJECTED_KEY).items()}


# ------------------------------------------------------------------ the relay's side
def handing_over(key: str, read_at: float, messages: list[list[Any]], *, views: str) -> None:
    """Before a page is sent: note each of its messages (``[task, queue, args]``, ids only)
    unfinished, and the page pending for the views if ``views`` (the projections' task) is
    among them, read at ``read_at``: one transaction. Advisory: unnoted, the page is neither
    in the lag nor sent again, as before pages were noted."""
    def note(client: redis.Redis) -> None:
        pipe = client.pipeline(transaction=True)
        for task, queue, args in messages:
            if task == views:
                pipe.hset(PENDING_KEY, key, f"{read_at:.3f}")
            pipe.hset(PAGES_KEY, f"{key}#{task}",
                      json.dumps({"at": read_at, "queue": queue, "args": args}))
        pipe.execute()

    _advisory(note, "page not noted pending")


def page_done(task: str, marks: Marks) -> None:
    """A page's message for ``task`` was handled: it need not be sent again (advisory)."""
    found = _marks(marks)
    if found:
        _advisory(lambda client: client.hdel(PAGES_KEY, f"{page_key(found)}#{task}"),
                  "page not taken off the unfinished")


def handing_on(marks: Marks, task: str, queue: str, args: list[Any], *, label: str,
               at: float | None = None) -> None:
    """A message sent on alone from a page's (a stream whose follow-up failed in its page):
    noted unfinished like the page's own messages, ``label`` (its stream) telling it apart,
    so that a relay sends it again if a worker is lost with it. ``at``: from when it counts
    (a retry's: when it is due; default now). Advisory, as :func:`handing_over`."""
    field = _alone_field(marks, task, label)
    if field:
        kept = json.dumps({"at": time.time() if at is None else at, "queue": queue,
                           "args": args, "task": task})
        _advisory(lambda client: client.hset(PAGES_KEY, field, kept),
                  "message not noted unfinished")


def handed_on(marks: Marks, task: str, *, label: str) -> None:
    """The message sent on alone was handled (or given up after its retries): off the
    unfinished (advisory)."""
    field = _alone_field(marks, task, label)
    if field:
        _advisory(lambda client: client.hdel(PAGES_KEY, field),
                  "message not taken off the unfinished")


def _alone_field(marks: Marks, task: str, label: str) -> str:
    """Where a message sent on alone is noted among the unfinished ("" without marks)."""
    found = _marks(marks)
    return f"{page_key(found)}#{task}:{label}" if found else ""


def forget_page(key: str, tasks: list[str]) -> None:
    """Off the pending and the unfinished: not sent after all, or not to be sent again."""
    def forget(client: redis.Redis) -> None:
        client.hdel(PENDING_KEY, key)
        if tasks:
            client.hdel(PAGES_KEY, *(f"{key}#{task}" for task in tasks))

    _advisory(forget, "page not taken off the pending")


def pending_pages() -> dict[str, float]:
    """Every page pending for the views (of every relay): key → when it was read. Raises
    RedisError."""
    client = _client()
    if client is None:
        return {}
    pages = {}
    for key, value in client.hgetall(PENDING_KEY).items():
        try:
            pages[key.decode()] = float(value)
        except ValueError:
            continue
    return pages


def unfinished_pages() -> dict[str, list[tuple[float, list[Any]]]]:
    """Every page with a message not handled yet: key → ``(read at, [task, queue, args])``
    of each such message. Raises RedisError."""
    client = _client()
    if client is None:
        return {}
    pages: dict[str, list[tuple[float, list[Any]]]] = {}
    for field, raw in client.hgetall(PAGES_KEY).items():
        key, _, task = field.decode().rpartition("#")
        try:
            kept = json.loads(raw)
            pages.setdefault(key, []).append(  # a message sent on alone names its task
                (float(kept["at"]), [kept.get("task", task), kept["queue"], kept["args"]]))
        except (ValueError, KeyError, TypeError):
            continue
    return pages


def queued(queues: set[str]) -> dict[str, int]:
    """Per Celery queue, the messages waiting in it for a worker to take them (every
    priority step). Raises RedisError."""
    client = _client()
    if client is None:
        return {}
    names = sorted(queues)
    pipe = client.pipeline(transaction=False)
    for queue in names:
        pipe.llen(queue)
        for step in (3, 6, 9):
            pipe.llen(f"{queue}{_PRIORITY_SEP}{step}")
    lengths = pipe.execute()
    return {queue: int(sum(lengths[4 * i:4 * i + 4])) for i, queue in enumerate(names)}


def count_redriven(pages: int) -> None:
    """Count pages sent again (advisory)."""
    _advisory(lambda client: client.incrby(REDRIVEN_KEY, pages))


def redriven_count() -> int | None:
    """Pages the relays sent again since the broker started (every relay together), or None
    when the broker cannot be read."""
    try:
        client = _client()
        return int(client.get(REDRIVEN_KEY) or 0) if client is not None else None
    except redis.RedisError:
        return None


def publish_lag(owner: str, ms: float) -> None:
    client = _client()
    if client is not None:
        client.hset(LAG_KEY, owner, f"{ms:.1f},{time.time():.3f}")


def withdraw(owner: str) -> None:
    """A stopping relay takes its figure back (if the broker is away, it lapses by itself)."""
    _advisory(lambda client: client.hdel(LAG_KEY, owner))


def lag_ms(now: float | None = None) -> float | None:
    """The views' end-to-end lag in ms (the largest fresh figure of any relay), or None when
    no relay published one lately or Redis cannot be read."""
    try:
        client = _client()
        if client is None:
            return None
        published = client.hgetall(LAG_KEY)
    except redis.RedisError:
        return None
    now = time.time() if now is None else now
    fresh = []
    for value in published.values():
        ms, _, at = value.decode().partition(",")
        try:
            if now - float(at) <= FRESH_SECONDS:
                fresh.append(float(ms))
        except ValueError:
            continue
    return round(max(fresh), 1) if fresh else None


_reading = threading.Lock()


def _lag_now(fresh: bool) -> float | None:
    """The published lag: read from Redis when ``fresh`` (a command already waiting), else
    the process's reading of the last ``_READ_EVERY`` seconds. When it is older, one thread
    reads it again while the others go on with the last reading, not a read each: under the
    ward mix the web's threads, all finding it old at once, spent 6 % of their time in
    those reads (docs/performance.md)."""
    now = time.monotonic()
    if fresh:
        _last["ms"], _last["at"] = lag_ms(), now
    elif now - _last["at"] > _READ_EVERY and _reading.acquire(blocking=False):
        try:
            if now - _last["at"] > _READ_EVERY:
                _last["ms"], _last["at"] = lag_ms(), time.monotonic()
        finally:
            _reading.release()
    return _last["ms"]


# ------------------------------------------------------------------ the commands' side
def admit() -> float:
    """Before a command commits: wait while the views are behind the bound, at most the cap.
    Returns the seconds waited (0.0 mostly)."""
    bound = bound_ms()
    if bound <= 0:
        return 0.0
    lag = _lag_now(fresh=False)
    if lag is None or lag <= bound:
        return 0.0
    started = time.monotonic()
    deadline = started + cap_ms() / 1000
    capped = True
    while time.monotonic() < deadline:
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
        lag = _lag_now(fresh=True)
        if lag is None or lag <= bound:
            capped = False
            break
    waited = time.monotonic() - started
    _waited.set(_waited.get() + waited)
    try:
        client = _client()
        if client is not None:
            pipe = client.pipeline(transaction=False)
            pipe.hincrby(ADMISSION_KEY, "waits", 1)
            pipe.hincrbyfloat(ADMISSION_KEY, "waited_ms", round(waited * 1000, 1))
            if capped:
                pipe.hincrby(ADMISSION_KEY, "capped", 1)
            pipe.execute()
    except redis.RedisError:
        pass  # the count is informative; the command goes on
    return waited


def admission_counts() -> dict[str, float]:
    """Commands that waited, their total wait (ms) and how many reached the cap, since the
    broker started (every process together); empty when the broker cannot be read."""
    try:
        client = _client()
        if client is None:
            return {}
        raw = client.hgetall(ADMISSION_KEY)
    except redis.RedisError:
        return {}
    counts = {k.decode(): float(v) for k, v in raw.items()}
    return {"waits": int(counts.get("waits", 0)), "waited_ms": round(counts.get("waited_ms", 0), 1),
            "capped": int(counts.get("capped", 0))}


def begin_request() -> None:
    _waited.set(0.0)


def waited_in_request() -> float:
    """Seconds this request's commands waited for the views (for ``Server-Timing``)."""
    return _waited.get()
