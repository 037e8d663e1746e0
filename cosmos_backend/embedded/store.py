"""Embedded store: one SQLite file in WAL mode with Cosmos DB semantics.

Safe for many processes: SQLite serialises writers (``BEGIN IMMEDIATE``), so the change-feed
position (``lsn``) handed out inside a write transaction grows in commit order and a feed
reader never sees a later change before an earlier one. Each container is one table; its
indexing policy becomes SQLite expression indexes on ``json_extract`` so view queries are
index range scans (see docs/data-model.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import orjson

from cosmos_backend import errors
from cosmos_backend.embedded.sqlquery import (
    EXPIRED,
    HASH_SPACE,
    LIVE,
    PRESENCE_BITS,
    PresenceChecks,
    compile_segments,
    has_query_fields,
    index_statements,
    leading_paths,
    presence_mask,
    presence_terms,
    remember_bits,
)
from cosmos_backend.paging import decode_token, encode_token
from cosmos_backend.store import (
    BatchOp,
    ContainerSpec,
    Document,
    DocumentStore,
    FeedPage,
    Page,
    Query,
    clean_document,
    item_ttl,
    validate_batch,
    validate_id,
    validate_partition_key,
)

_PURGE_EVERY = 500  # writes between sweeps of expired rows
# Checkpoints (copying the WAL back into the database file, with an fsync) run in a thread of
# their own after this many commits of the process, not in the commit that crosses SQLite's
# threshold: that commit's caller (a web request) would wait 10-15 ms for it. SQLite's own
# automatic checkpoint stays as a backstop, at a higher threshold (pages of 4 KiB).
_CHECKPOINT_EVERY = 100
_AUTOCHECKPOINT_PAGES = 8000
# SQLite's page cache per connection (every thread has one; the web server has 8 threads):
# at most 4 MB each, and all of a process's connections together at most _PROCESS_KB of
# SQLite memory: with 4 MB each and no common bound, the web process grew by 23 MB over a
# bench run at 10,000 patients (docs/performance.md). A page not in it is read from the
# kernel's page cache, which every process shares.
_CACHE_KB = int(os.environ.get("EMBEDDED_STORE_CACHE_KB", "4096"))
_PROCESS_KB = int(os.environ.get("EMBEDDED_STORE_MEMORY_KB", "12288"))
# No memory map by default: a mapped page read once stays in the process's resident set,
# so the web's and the worker's memory grew with the files (37 MB of the worker's at the
# bench's peak), where a read through the kernel's page cache leaves nothing behind. The
# map saved no time measured through the API; a page of the 100,000-item partition read
# alone takes about 0.1 ms more without it (docs/performance.md, "The store files' memory
# map, and the events kept"). EMBEDDED_STORE_MMAP_MB turns it back on.
_MMAP_MB = int(os.environ.get("EMBEDDED_STORE_MMAP_MB", "0"))
_CHECKPOINTER_IDLE_S = 30.0  # an idle checkpointer thread ends (a new one starts on demand)
_USING_INDEX = re.compile(r"USING (?:COVERING )?INDEX (\S+)")
# A sort on a path no filter implies needs the distinct presence masks of the partition;
# past this many the partition is treated as mixed (no partial index for that sort).
_MAX_MASKS = 32


def _locked(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc)  # SQLITE_BUSY's message: "database is locked"


def _set_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. Switching needs the file to itself and SQLite answers "locked" at once,
    without its busy handler, while another connection opens the same new file; retry."""
    deadline = time.monotonic() + 30.0
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _locked(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _owner_only(path: str) -> None:
    """The store file, its WAL and its shared-memory index readable by their owner only
    (0600), whatever the umask they were made with: they hold every clinical record."""
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            continue


class _Checkpointer:
    """One store file's background checkpoints in this process: a thread, started on demand,
    runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own connection when told; a passive
    checkpoint never blocks readers or writers."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._commits = 0
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        self._commits += 1  # unlocked: an occasional lost count only delays a checkpoint
        if self._commits < _CHECKPOINT_EVERY:
            return
        self._commits = 0
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="embedded-store-checkpoint")
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while True:
                if not self._wake.wait(_CHECKPOINTER_IDLE_S):
                    with self._lock:
                        if not self._wake.is_set():
                            self._thread = None
                            return
                self._wake.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:
                    pass  # SQLite's automatic checkpoint is the backstop
        finally:
            conn.close()


_T = TypeVar("_T")


class _PerFile(Generic[_T]):
    """One ``make(path)`` per store file in this process, made on first use. A forked child
    forgets them all (:func:`_forget_in_child`): the parent's threads did not come along, and
    a lock one of them held would never be released in the child."""

    def __init__(self, make: Callable[[str], _T]) -> None:
        self._make = make
        self._found: dict[str, _T] = {}
        self._lock = threading.Lock()

    def __call__(self, path: str) -> _T:
        found = self._found.get(path)
        if found is None:
            with self._lock:
                found = self._found.setdefault(path, self._make(path))
        return found

    def forget(self) -> None:
        self._found = {}
        self._lock = threading.Lock()


_checkpointer = _PerFile(_Checkpointer)


# How a process's threads wait for a store file's write lock. SQLite's own busy handler
# polls: a writer that finds the file locked sleeps 1, 2, 5, 10, 15, 20, 25 … up to 100 ms
# between tries, so under load (the web's eight threads committing) an unlucky one sleeps
# far past the commits it waits behind: that was the commands' p99. Now a writer waits so
# for _BUSY_FIRST_MS at most (SQLite's first sleeps, 1 + 2 + 5 + 10 + 12 ms, which let a
# burst through quickly and keep the median), then at the file's gate, which each commit or
# rollback of this process opens for one waiter. A writer holding the lock in another
# process (the web, the worker) opens no gate here, so a waiter also tries again every
# _RETRY_S. Measured in docs/performance.md ("A gate for the writers"): under the ward mix
# the commands' p99 halved at the same rate; going to the gate at once, or a strict queue (a
# lock taken before ``BEGIN IMMEDIATE``), cut the p99 as much but raised the median by half
# and lowered the rate, each hand-over waiting for the next thread to get the interpreter.
_WRITER_GATE = os.environ.get("EMBEDDED_STORE_WRITER_GATE", "1") != "0"
_WRITE_WAIT_S = 30.0  # as SQLite's busy timeout: past it, "database is locked" as before
_RETRY_S = 0.002
_BUSY_FIRST_MS = int(os.environ.get("EMBEDDED_STORE_GATE_AFTER_MS", "30"))
_BUSY_MS = 30_000


class _Gate:
    """Opened by each write transaction's end in this process, for one waiting writer."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.opened = 0  # how many times; a waiter that saw a count waits for the next

    def wait(self, seen: int, timeout: float) -> None:
        with self._cond:
            if self.opened == seen:
                self._cond.wait(timeout)

    def open(self) -> None:
        with self._cond:
            self.opened += 1
            self._cond.notify()


_gate = _PerFile(lambda path: _Gate())


def _forget_in_child() -> None:
    _checkpointer.forget()
    _gate.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class EmbeddedStore(DocumentStore):
    def __init__(
        self,
        path: str,
        spec: ContainerSpec,
        *,
        feed_range_count: int = 4,
        synchronous: str = "NORMAL",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.spec = spec
        self.table = self.table_name(spec.name)
        self.synchronous = synchronous
        self.clock = clock
        self._local = threading.local()
        self._writes = 0
        self._background_checkpoints = path != ":memory:" and not path.startswith("file:")
        self._writer_gate = _WRITER_GATE and self._background_checkpoints
        self._pinned: dict[str, str | None] = {}  # continuation SQL → index to run it on
        self._bits: dict[str, int] = {}  # indexed path → its presence bit in column pm
        self._checks = PresenceChecks.of({})
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.provisioned = self.provision()  # what opening did: cosmos_init reports it
        if self._background_checkpoints:  # a real file: the store, its WAL and index
            _owner_only(path)
        self._range_count = self._meta("feed_range_count", feed_range_count)
        self._epoch = self._meta("epoch", int.from_bytes(os.urandom(4), "big"))

    @staticmethod
    def table_name(container: str) -> str:
        """The SQLite table that holds the container named ``container``."""
        return "c_" + hashlib.sha1(container.encode()).hexdigest()[:12]

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0,
                                   check_same_thread=False)
            _set_wal(conn)
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            # The page cache, private to each connection (every thread has one), stays
            # small (_CACHE_KB); no memory map unless _MMAP_MB says so.
            conn.execute(f"PRAGMA cache_size=-{_CACHE_KB}")
            conn.execute(f"PRAGMA mmap_size={_MMAP_MB * 1024 * 1024}")
            conn.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT_PAGES}")
            # One budget for all of the process's connections (SQLite's soft heap limit:
            # past it, a cache takes back its least recently used pages instead of growing).
            conn.execute(f"PRAGMA soft_heap_limit={_PROCESS_KB * 1024}")
            local.conn, local.pid = conn, os.getpid()
        return local.conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        if getattr(self._local, "grouped", 0):
            # Inside grouped(): a savepoint, so this write is undone alone if it fails.
            conn.execute("SAVEPOINT w")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK TO w")
                conn.execute("RELEASE w")
                raise
            conn.execute("RELEASE w")
            return
        gate = _gate(self.path) if self._writer_gate else None
        if gate is None:
            conn.execute("BEGIN IMMEDIATE")
        else:
            self._begin_at_gate(conn, gate)
        try:
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            if gate is not None:
                gate.open()
                # Put back once the lock is let go, not inside it: every statement lets
                # the interpreter go, and the lock's holder would wait to get it back.
                conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        self._committed()

    @staticmethod
    def _begin_at_gate(conn: sqlite3.Connection, gate: _Gate) -> None:
        """``BEGIN IMMEDIATE``, waiting at ``gate`` while another writer holds the lock.
        Returns with the connection's busy timeout shortened (a write transaction needs no
        busy wait in WAL mode); the caller puts it back after ``COMMIT``."""
        deadline = time.monotonic() + _WRITE_WAIT_S
        conn.execute(f"PRAGMA busy_timeout={_BUSY_FIRST_MS}")
        try:
            first = True
            while True:
                seen = gate.opened
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if not _locked(exc) or time.monotonic() > deadline:
                        raise
                if first and _BUSY_FIRST_MS:
                    conn.execute("PRAGMA busy_timeout=0")
                first = False
                gate.wait(seen, _RETRY_S)
        except BaseException:
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            raise

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """This thread's writes in the block as one SQLite write transaction (the write lock
        taken once, one commit); each batch in it runs in a savepoint of its own, so a
        failing one is undone alone. A nested block is a savepoint: its writes are undone
        together if an exception leaves it. Reads in the block see its writes."""
        local = self._local
        if getattr(local, "grouped", 0):
            conn = self._conn()
            conn.execute("SAVEPOINT g")
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK TO g")
                conn.execute("RELEASE g")
                raise
            conn.execute("RELEASE g")
            return
        with self._write():
            local.grouped = 1
            try:
                yield
            finally:
                local.grouped = 0

    @property
    def write_transactions(self) -> int:
        """Write transactions this handle committed (a grouped block counts once)."""
        return self._writes

    def _committed(self) -> None:
        if self._background_checkpoints:
            _checkpointer(self.path).committed()
        self._writes += 1
        if self._writes % _PURGE_EVERY == 0:
            self.purge_expired()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            conn.close()
        self._local = threading.local()

    # ------------------------------------------------------------------ provisioning
    def provision(self) -> list[str]:
        """Create the table and indexes of the spec (idempotent); return what was done."""
        done: list[str] = []
        conn = self._conn()
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (self.table,)
        ).fetchone()
        conn.executescript(
            f"""
            CREATE TABLE IF NOT EXISTS {self.table} (
                pk TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, etag TEXT NOT NULL,
                ts INTEGER NOT NULL, lsn INTEGER NOT NULL, rng INTEGER NOT NULL, exp REAL,
                q INTEGER NOT NULL DEFAULT 0, pm INTEGER NOT NULL DEFAULT -1,
                PRIMARY KEY (pk, id)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS {self.table}_feed ON {self.table} (lsn);
            CREATE INDEX IF NOT EXISTS {self.table}_exp ON {self.table} (exp) WHERE exp IS NOT NULL;
            CREATE TABLE IF NOT EXISTS store_meta (
                container TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                PRIMARY KEY (container, key));
            """
        )
        done.append(f"container {self.spec.name!r} " + ("exists" if exists else "created"))
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({self.table})")}
        if "q" not in columns:  # a store made before query-field indexes were partial
            conn.execute(f"ALTER TABLE {self.table} ADD COLUMN q INTEGER NOT NULL DEFAULT 0")
            conn.execute(f"UPDATE {self.table} SET q = 1 WHERE EXISTS (SELECT 1 FROM "
                         "json_each(doc) WHERE key LIKE 'Query%')")
            done.append("column q added and filled")
        if "pm" not in columns:  # a store made before presence masks: every row in every index
            conn.execute(f"ALTER TABLE {self.table} ADD COLUMN pm INTEGER NOT NULL DEFAULT -1")
            done.append("column pm added")
        done += self._assign_presence_bits(conn)
        conn.execute(f"CREATE INDEX IF NOT EXISTS {self.table}_pm ON {self.table} (pk, pm)")
        wanted = dict(index_statements(self.table, self.spec.indexing_policy, self._bits))
        present = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name=?", (self.table,))}
        for name, sql in wanted.items():
            if name not in present:
                conn.execute(sql)
                done.append(f"index {name} created")
        for name in sorted(present):
            if "_ix_" in name and name not in wanted:
                conn.execute(f"DROP INDEX {name}")  # no longer in the indexing policy
                done.append(f"index {name} dropped")
        return done

    def _assign_presence_bits(self, conn: sqlite3.Connection) -> list[str]:
        """Give each path that leads an index a bit of column pm (kept in store_meta, shared by
        every process and never reused) and clear it in the rows that lack the path.

        A writer sets pm from the bits it knows and leaves the others set, so a process
        still on an older policy, or older code (the column's default), only puts rows into
        more indexes than needed, never fewer.
        """
        done: list[str] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            bits = {row[0].removeprefix("pm:"): 1 << int(row[1]) for row in conn.execute(
                "SELECT key, value FROM store_meta WHERE container=? AND key LIKE 'pm:%'",
                (self.spec.name,))}
            free = sorted(set(range(PRESENCE_BITS)) - {b.bit_length() - 1 for b in bits.values()})
            new = {}
            for path in leading_paths(self.spec.indexing_policy):
                if path not in bits and free:
                    new[path] = bits[path] = 1 << free.pop(0)
                    conn.execute("INSERT INTO store_meta (container, key, value) VALUES (?, ?, ?)",
                                 (self.spec.name, f"pm:{path}", str(new[path].bit_length() - 1)))
            if new:
                lacking = " | ".join(
                    f"(CASE WHEN json_type(doc, '$.{path}') IS NULL THEN {bit} ELSE 0 END)"
                    for path, bit in new.items())
                conn.execute(f"UPDATE {self.table} SET pm = pm & ~({lacking})")
                done.append(f"presence bits for {', '.join(new)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        wanted = set(leading_paths(self.spec.indexing_policy))
        self._bits = {path: bit for path, bit in bits.items() if path in wanted}
        self._checks = PresenceChecks.of(self._bits)
        remember_bits(self.table, self._bits)
        return done

    def _meta(self, key: str, default: int) -> int:
        conn = self._conn()
        conn.execute(
            "INSERT OR IGNORE INTO store_meta (container, key, value) VALUES (?, ?, ?)",
            (self.spec.name, key, str(default)),
        )
        row = conn.execute(
            "SELECT value FROM store_meta WHERE container=? AND key=?", (self.spec.name, key)
        ).fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ helpers
    def _row_doc(self, row: Sequence[Any]) -> Document:
        doc = orjson.loads(row[0])
        doc["_etag"], doc["_ts"], doc["_lsn"] = row[1], row[2], row[3]
        return doc

    def _expiry(self, doc: Document, now: float) -> float | None:
        ttl = item_ttl(doc, self.spec.default_ttl)
        return None if ttl is None else now + ttl

    def _encode(self, doc: Document) -> tuple[Document, str]:
        body = orjson.dumps({k: v for k, v in doc.items() if not k.startswith("_")})
        return clean_document(doc, len(body)), body.decode()

    def _take_lsns(self, conn: sqlite3.Connection, count: int) -> int:
        """Reserve ``count`` consecutive change-feed positions (one statement for a whole
        batch); returns the first. Inside the write transaction, so a rollback returns them."""
        row = conn.execute(
            "UPDATE store_meta SET value = CAST(value AS INTEGER) + ? "
            "WHERE container=? AND key='lsn' RETURNING value",
            (count, self.spec.name),
        ).fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO store_meta (container, key, value) VALUES (?, 'lsn', ?)",
                (self.spec.name, str(count)),
            )
            return 1
        return int(row[0]) - count + 1

    def _apply(self, conn: sqlite3.Connection, op: BatchOp, now: float,
               lsn: int = 0) -> Document | None:
        """Apply one operation; a write takes change-feed position ``lsn`` (reserved by the
        caller with :meth:`_take_lsns`), a delete takes none."""
        t = self.table
        if op.kind == "delete":
            pk_id = (op.doc_pk, op.doc_id)  # type: ignore[attr-defined]
            sql = f"DELETE FROM {t} WHERE pk=? AND id=? AND {LIVE}"
            args: tuple[Any, ...] = (*pk_id, now)
            if op.if_match is not None:
                sql += " AND etag=?"
                args += (op.if_match,)
            if conn.execute(sql, args).rowcount == 0:
                self._raise_missing_or_stale(conn, *pk_id, now)
            return None

        assert op.doc is not None
        doc, body = op.encoded  # type: ignore[attr-defined]
        pk, doc_id = doc["partitionKey"], doc["id"]
        etag = f'"{self._epoch:08x}-{lsn:x}"'
        ts = int(now)
        exp = self._expiry(doc, now)
        rng = zlib.crc32(pk.encode()) % HASH_SPACE
        q = has_query_fields(doc)
        pm = presence_mask(doc, self._checks)
        values = (pk, doc_id, body, etag, ts, lsn, rng, exp, q, pm)
        cols = ("(pk, id, doc, etag, ts, lsn, rng, exp, q, pm) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        sets = ("doc=excluded.doc, etag=excluded.etag, ts=excluded.ts, lsn=excluded.lsn, "
                "exp=excluded.exp, q=excluded.q, pm=excluded.pm")
        if op.kind == "create":
            cur = conn.execute(
                f"INSERT INTO {t} {cols} ON CONFLICT(pk, id) DO UPDATE SET {sets} "
                f"WHERE {EXPIRED}",  # unqualified columns: the existing row
                (*values, now),
            )
            if cur.rowcount == 0:
                raise errors.Conflict(f"document {doc_id!r} already exists in {pk!r}")
        elif op.kind == "upsert" and op.if_match is None:
            conn.execute(f"INSERT INTO {t} {cols} ON CONFLICT(pk, id) DO UPDATE SET {sets}", values)
        else:  # replace, or upsert guarded by an etag
            sql = (f"UPDATE {t} SET doc=?, etag=?, ts=?, lsn=?, exp=?, q=?, pm=? "
                   f"WHERE pk=? AND id=? AND {LIVE}")
            args = (body, etag, ts, lsn, exp, q, pm, pk, doc_id, now)
            if op.if_match is not None:
                sql += " AND etag=?"
                args += (op.if_match,)
            if conn.execute(sql, args).rowcount == 0:
                if op.kind == "upsert":
                    # As on Cosmos DB, If-Match applies to an upsert only when the document
                    # exists: a missing (or expired) one is created.
                    if self._live(conn, pk, doc_id, now):
                        raise errors.PreconditionFailed(
                            f"document {doc_id!r} is not at the etag given")
                    conn.execute(f"INSERT INTO {t} {cols} ON CONFLICT(pk, id) DO UPDATE SET "
                                 f"{sets}", values)
                else:
                    self._raise_missing_or_stale(conn, pk, doc_id, now)
        out = dict(doc)
        out["_etag"], out["_ts"], out["_lsn"] = etag, ts, lsn
        return out

    def _live(self, conn: sqlite3.Connection, pk: str, doc_id: str, now: float) -> bool:
        return conn.execute(
            f"SELECT 1 FROM {self.table} WHERE pk=? AND id=? AND {LIVE}",
            (pk, doc_id, now),
        ).fetchone() is not None

    def _raise_missing_or_stale(self, conn: sqlite3.Connection, pk: str, doc_id: str,
                                now: float) -> None:
        if not self._live(conn, pk, doc_id, now):
            raise errors.NotFound(f"document {doc_id!r} not found in {pk!r}")
        raise errors.PreconditionFailed(f"document {doc_id!r} in {pk!r} was changed meanwhile")

    def _prepare(self, op: BatchOp, pk: str | None = None) -> BatchOp:
        if op.doc is not None:
            object.__setattr__(op, "encoded", self._encode(op.doc))
        else:
            object.__setattr__(op, "doc_pk", pk)
        return op

    # ------------------------------------------------------------------ single operations
    def read(self, pk: str, doc_id: str) -> Document:
        validate_partition_key(pk)
        validate_id(doc_id)
        row = self._conn().execute(
            f"SELECT doc, etag, ts, lsn FROM {self.table} WHERE pk=? AND id=? AND {LIVE}",
            (pk, doc_id, self.clock()),
        ).fetchone()
        if row is None:
            raise errors.NotFound(f"document {doc_id!r} not found in {pk!r}")
        return self._row_doc(row)

    def _single(self, op: BatchOp, pk: str | None = None) -> Document | None:
        self._prepare(op, pk)
        with self._write() as conn:
            lsn = 0 if op.kind == "delete" else self._take_lsns(conn, 1)
            return self._apply(conn, op, self.clock(), lsn)

    def create(self, doc: Document) -> Document:
        return self._single(BatchOp.create(doc))  # type: ignore[return-value]

    def replace(self, doc: Document, *, if_match: str | None = None) -> Document:
        return self._single(BatchOp.replace(doc, if_match))  # type: ignore[return-value]

    def upsert(self, doc: Document, *, if_match: str | None = None) -> Document:
        return self._single(BatchOp.upsert(doc, if_match))  # type: ignore[return-value]

    def delete(self, pk: str, doc_id: str, *, if_match: str | None = None) -> None:
        validate_partition_key(pk)
        validate_id(doc_id)
        self._single(BatchOp.delete(doc_id, if_match), pk)

    def execute_batch(self, pk: str, ops: Sequence[BatchOp]) -> list[Document | None]:
        validate_batch(pk, ops)
        prepared = [self._prepare(BatchOp(op.kind, op.doc, op.id, op.if_match), pk) for op in ops]
        results: list[Document | None] = []
        now = self.clock()
        writes = sum(op.kind != "delete" for op in prepared)
        with self._write() as conn:
            lsn = self._take_lsns(conn, writes) if writes else 0
            for index, op in enumerate(prepared):
                try:
                    results.append(self._apply(conn, op, now, lsn))
                except errors.StoreError as exc:
                    raise errors.BatchFailed(index, exc) from exc
                if op.kind != "delete":
                    lsn += 1
        return results

    # ------------------------------------------------------------------ queries
    def query(self, pk: str, query: Query, *, page_size: int = 50,
              continuation: str | None = None) -> Page:
        validate_partition_key(pk)
        if page_size < 1:
            raise errors.InvalidRequest("page_size must be at least 1")
        after = decode_token(continuation) if continuation else None
        conn = self._conn()
        with self._snapshot(conn, query):
            now = self.clock()
            terms = self._terms(conn, pk, query)
            segments, n_keys = compile_segments(self.table, query, after, terms)
            rows: list[Any] = []
            for sql, args in segments:
                params = [pk, now, *args, page_size + 1 - len(rows)]
                pinned = (sql if after is None
                          else self._on_first_page_index(conn, query, pk, now, sql, terms))
                try:
                    rows += conn.execute(pinned, params).fetchall()
                except sqlite3.OperationalError as exc:
                    if pinned == sql or "index" not in str(exc):
                        raise
                    self._pinned.clear()  # the policy changed under us: the index is gone
                    rows += conn.execute(sql, params).fetchall()
                if len(rows) > page_size:
                    break
        more = len(rows) > page_size
        rows = rows[:page_size]
        items = [self._row_doc(row) for row in rows]
        token = encode_token(list(rows[-1][4 : 4 + n_keys])) if more and rows else None
        return Page(items=items, continuation=token)

    def count_query(self, pk: str, query: Query) -> int:
        validate_partition_key(pk)
        where_only = Query(where=query.where)
        terms = presence_terms(where_only, self._bits, None)
        [(sql, args)], _ = compile_segments(self.table, where_only, None, terms)
        row = self._conn().execute(f"SELECT COUNT(*) FROM ({sql})",
                                   [pk, self.clock(), *args, -1]).fetchone()  # LIMIT -1: all
        return int(row[0])

    def _needs_masks(self, query: Query) -> bool:
        filtered = {c.path for c in query.where}
        return any(p in self._bits and p not in filtered for p, _ in query.ordering())

    @contextmanager
    def _snapshot(self, conn: sqlite3.Connection, query: Query) -> Iterator[None]:
        """One read transaction around a query whose terms depend on the partition's masks,
        so a row written meanwhile cannot fall between the masks and the rows read."""
        if conn.in_transaction or not self._needs_masks(query):
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def _terms(self, conn: sqlite3.Connection, pk: str, query: Query) -> list[str]:
        """The presence terms of ``query`` in partition ``pk`` (see presence_terms)."""
        masks: list[int] | None = None
        if self._needs_masks(query):
            # The distinct pm values of the partition: one seek per value in the (pk, pm)
            # index, however many rows share it.
            t = self.table
            masks = [row[0] for row in conn.execute(
                f"WITH RECURSIVE m(v) AS (SELECT (SELECT min(pm) FROM {t} WHERE pk = ?1) "
                f"UNION ALL SELECT (SELECT min(pm) FROM {t} WHERE pk = ?1 AND pm > m.v) "
                f"FROM m WHERE m.v IS NOT NULL LIMIT ?2) SELECT v FROM m WHERE v IS NOT NULL",
                (pk, _MAX_MASKS + 1))]
            if len(masks) > _MAX_MASKS:
                masks = None
        return presence_terms(query, self._bits, masks)

    def _on_first_page_index(self, conn: sqlite3.Connection, query: Query, pk: str,
                             now: float, sql: str, terms: list[str]) -> str:
        """``sql`` (a continuation) pinned to the index the query's first page is read from.

        A continuation only narrows the first page's index range, so that index is right for
        it; pinned, SQLite seeks in it even for ``IS NULL`` terms it would otherwise answer
        by scanning the partition. The plan is looked up once per statement text.
        """
        cache = self._pinned
        if sql not in cache:
            [(first, args)], _ = compile_segments(self.table, query, None, terms)
            plan = conn.execute(f"EXPLAIN QUERY PLAN {first}", [pk, now, *args, 1]).fetchall()
            found = _USING_INDEX.search(" ".join(str(row[-1]) for row in plan))
            cache[sql] = None if found is None else found.group(1)
        index = cache[sql]
        if index is None:
            return sql
        return sql.replace(f" FROM {self.table} ", f" FROM {self.table} INDEXED BY {index} ", 1)

    def explain_query(self, pk: str, query: Query, *,
                      continuation: str | None = None) -> list[str]:
        """The SQLite plan of each statement a page of ``query`` runs (tests, diagnosis)."""
        after = decode_token(continuation) if continuation else None
        conn, now, out = self._conn(), self.clock(), []
        terms = self._terms(conn, pk, query)
        segments, _ = compile_segments(self.table, query, after, terms)
        for sql, args in segments:
            if after is not None:
                sql = self._on_first_page_index(conn, query, pk, now, sql, terms)
            plan = conn.execute(f"EXPLAIN QUERY PLAN {sql}", [pk, now, *args, 51]).fetchall()
            out.append(" | ".join(str(row[-1]) for row in plan))
        return out

    # ------------------------------------------------------------------ change feed
    def feed_ranges(self) -> list[str]:
        n = self._range_count
        bounds = [HASH_SPACE * i // n for i in range(n + 1)]
        return [f"{bounds[i]:x}-{bounds[i + 1]:x}" for i in range(n)]

    def read_feed(self, feed_range: str, *, continuation: str | None = None,
                  max_items: int = 1000) -> FeedPage:
        try:
            lo, hi = (int(part, 16) for part in feed_range.split("-"))
            start = int(continuation) if continuation else 0
        except ValueError as exc:
            raise errors.InvalidRequest(f"bad feed range or continuation: {exc}") from exc
        rows = self._conn().execute(
            f"SELECT doc, etag, ts, lsn FROM {self.table} INDEXED BY {self.table}_feed "
            f"WHERE lsn > ? AND rng >= ? AND rng < ? AND {LIVE} "
            "ORDER BY lsn LIMIT ?",
            (start, lo, hi, self.clock(), max_items),
        ).fetchall()
        items = [self._row_doc(row) for row in rows]
        return FeedPage(items=items, continuation=str(rows[-1][3] if rows else start))

    # ------------------------------------------------------------------ maintenance
    def purge_expired(self) -> int:
        conn = self._conn()
        cur = conn.execute(
            f"DELETE FROM {self.table} WHERE {EXPIRED}", (self.clock(),)
        )
        return cur.rowcount

    def move_partitions(self, target: EmbeddedStore, belongs: Callable[[str], bool], *,
                        prefix: str = "", chunk: int = 500) -> int:
        """Move every document whose partition key starts with ``prefix`` and passes
        ``belongs`` into ``target`` (another container, usually in another file); returns
        how many. Etags, timestamps and expiry times are kept, so whatever remembered an
        etag (a tracker, a relay's checkpoint) still matches; each document takes a new
        position in ``target``'s feed. Copies first, then deletes here, a chunk at a time:
        run it with the writers stopped; an interrupted move is finished by running it again.
        """
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"
        moved = 0
        after = ("", "")
        while True:
            rows = self._conn().execute(
                f"SELECT pk, id, doc, etag, ts, rng, exp, q FROM {self.table} "
                "WHERE pk >= ? AND pk < ? AND (pk, id) > (?, ?) ORDER BY pk, id LIMIT ?",
                (prefix, upper, *after, chunk)).fetchall()
            if not rows:
                return moved
            after = (rows[-1][0], rows[-1][1])
            rows = [row for row in rows if belongs(row[0])]
            if not rows:
                continue
            with target._write() as conn:
                first = target._take_lsns(conn, len(rows))
                conn.executemany(
                    f"INSERT INTO {target.table} (pk, id, doc, etag, ts, lsn, rng, exp, q, pm) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(pk, id) DO UPDATE SET "
                    "doc=excluded.doc, etag=excluded.etag, ts=excluded.ts, lsn=excluded.lsn, "
                    "exp=excluded.exp, q=excluded.q, pm=excluded.pm",
                    [(pk, doc_id, doc, etag, ts, first + i, rng, exp, q,
                      presence_mask(orjson.loads(doc), target._checks))
                     for i, (pk, doc_id, doc, etag, ts, rng, exp, q) in enumerate(rows)])
            with self._write() as conn:
                conn.executemany(f"DELETE FROM {self.table} WHERE pk=? AND id=?",
                                 [(row[0], row[1]) for row in rows])
            moved += len(rows)

    def count(self, pk: str | None = None) -> int:
        if pk is None:
            return self._conn().execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]
        return self._conn().execute(
            f"SELECT COUNT(*) FROM {self.table} WHERE pk=?", (pk,)
        ).fetchone()[0]


__all__ = ["EmbeddedStore"]
