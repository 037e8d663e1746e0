"""Who viewed which patient's record: recorded off the request path.

Adapters call :func:`record` (pages and the JSON API through the shell's middleware, the
FHIR facade from its views): it appends to an in-process queue and returns. A view whose
URL does not name its patient (an MRN lookup, a worklist) says which patients its answer
shows with :func:`note_views` / :func:`note_list`; the shell's middleware records them once
the answer is known to be a success. A background
thread, started in server processes (:func:`start_writer`, from ``hisadmin/wsgi.py``),
writes the queue to the sink in batches of at most ``BATCH`` every ``INTERVAL_SECONDS``.
Without a started writer (management commands, tests) each record is written at once, in
the caller's thread.

Never lost silently:
- the sink failing (database down): the batch goes back to the queue, is retried, and an
  error is logged with the count (never patient data);
- the queue full (``LIMIT`` waiting, the sink far behind): the request that records writes
  its own record synchronously — slower, not lost;
- the process exiting normally (a server's graceful stop): the queue is written at exit;
- the process killed (SIGKILL, power loss): what waited, at most ``INTERVAL_SECONDS`` of
  views (``BATCH`` at most per second), is lost; the documentation says so.

The sink is the shell's (``hisadmin.apps`` registers a Django-database writer): this module
knows no model.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

log = logging.getLogger(__name__)

INTERVAL_SECONDS = 1.0
BATCH = 500
LIMIT = 100_000


class Channel:
    """Where the view came from; the labels are the words the access report shows."""

    PAGE = "page"
    API = "api"
    FHIR = "fhir"
    LABELS = {PAGE: "Page", API: "JSON API", FHIR: "FHIR"}


@dataclass(frozen=True)
class Access:
    """One view of one patient's record, or (``listed``) one list showing several patients:
    then ``patient_id`` is empty and ``listed`` holds the ids shown, in the list's order."""

    at: datetime
    patient_id: str
    part: str  # what was seen, in words: "Chart", "Medication record", "FHIR Observation"…
    channel: str  # a :class:`Channel` value
    user_id: int | None
    username: str
    client: str  # the client's address as the server saw it
    listed: tuple[str, ...] = ()


Sink = Callable[[Sequence[Access]], None]


class AccessLog:
    """The queue and its writer; one per process (:data:`LOG`)."""

    def __init__(
        self,
        sink: Sink | None = None,
        *,
        interval: float = INTERVAL_SECONDS,
        batch: int = BATCH,
        limit: int = LIMIT,
    ) -> None:
        self.sink = sink
        self.interval, self.batch, self.limit = interval, batch, limit
        self._queue: deque[Access] = deque()
        self._lock = threading.Lock()  # one writer at a time (thread, exit, flush)
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._background = False

    def record(self, access: Access) -> None:
        """Queue ``access`` (or write it now: no writer started, or the queue is full)."""
        if not self._background:
            self._write([access])
            return
        if len(self._queue) >= self.limit:
            log.warning("access log queue full (%d waiting): writing in the request", self.limit)
            self._write([access])
            return
        self._queue.append(access)
        self._ensure_thread()

    def start_writer(self) -> None:
        """Write in a background thread from now on (server processes)."""
        self._background = True
        self._ensure_thread()

    def flush(self) -> int:
        """Write everything queued now, in the caller's thread; returns how many."""
        written = 0
        while self._queue:
            with self._lock:
                taken = [self._queue.popleft() for _ in range(min(self.batch, len(self._queue)))]
                if not taken:
                    break
                try:
                    self._sink()(taken)
                except Exception:
                    self._queue.extendleft(reversed(taken))  # kept, in order, for a retry
                    raise
            written += len(taken)
        return written

    def pending(self) -> int:
        """Records not yet written, a batch the writer is writing included (it leaves the queue
        under the lock, and goes back to it if the write fails)."""
        with self._lock:
            return len(self._queue)

    # ------------------------------------------------------------------ mechanics
    def _sink(self) -> Sink:
        if self.sink is None:
            raise RuntimeError("no access log sink registered (hisadmin.apps registers it)")
        return self.sink

    def _write(self, accesses: list[Access]) -> None:
        with self._lock:
            self._sink()(accesses)

    def _ensure_thread(self) -> None:
        # A forked worker (gunicorn) inherits the flag but not the thread: start its own.
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="access-log-writer", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - kept queued and retried; the count is logged
                log.exception(
                    "access log: %d records wait to be written; retrying", len(self._queue)
                )


LOG = AccessLog()


def record(access: Access) -> None:
    LOG.record(access)


def configure(sink: Sink) -> None:
    LOG.sink = sink


def start_writer() -> None:
    LOG.start_writer()


def flush() -> int:
    return LOG.flush()


# ---------------------------------------------------------------- views noted by the views
NOTED_ATTRIBUTE = "_his_access_noted"


@dataclass(frozen=True)
class Noted:
    """What a view said its answer shows (recorded by the middleware on a 2xx answer)."""

    patient_ids: tuple[str, ...]
    part: str  # "" : the middleware names it from the page or the endpoint
    listed: bool  # one list-view record with all the ids, not one record per patient


def _note(request: object, noted: Noted) -> None:
    if not noted.patient_ids:
        return
    held = getattr(request, NOTED_ATTRIBUTE, None)
    if held is None:
        held = []
        setattr(request, NOTED_ATTRIBUTE, held)
    held.append(noted)


def note_views(request: object, patient_ids: Iterable[str], part: str = "") -> None:
    """This request's answer shows these patients' records (an MRN lookup): one view each,
    recorded if the answer is a success. Costs an append; nothing is written here."""
    _note(request, Noted(tuple(dict.fromkeys(p for p in patient_ids if p)), part, False))


def note_list(request: object, patient_ids: Iterable[str], part: str = "") -> None:
    """This request's answer is a list showing these patients (a worklist, a name search):
    one list-view record holding their ids, if the answer is a success; none when empty."""
    _note(request, Noted(tuple(dict.fromkeys(p for p in patient_ids if p)), part, True))


def noted(request: object) -> list[Noted]:
    return list(getattr(request, NOTED_ATTRIBUTE, ()))


@atexit.register
def _flush_at_exit() -> None:
    if LOG.pending():
        try:
            LOG.flush()
        except Exception:  # noqa: BLE001 - the interpreter is going; say what is lost
            log.exception("access log: %d records could not be written at exit", LOG.pending())
