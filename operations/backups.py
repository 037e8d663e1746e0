"""Backup and restore of the embedded deployment: the document store and Django's database.

A backup is a directory: ``store.sqlite3`` (the document store's clinical container: the
record, its events, reference data), ``views.sqlite3`` (the views container's file: worklist
views, trackers, leases and checkpoints), ``django.sqlite3`` (users, roles, API tokens,
sessions) and ``manifest.json`` (when, what, how many documents, a checksum per file).

The copies use SQLite's online backup API while the system runs, each file inside one read
transaction, so each is its file as of one instant (WAL mode lets writers go on meanwhile):
every batch a command committed is wholly in it or wholly not. The views are copied
**before** the record: their trackers and relay checkpoints then never point past the events
the backup holds (a restored relay re-reads from its checkpoint and projects what came after,
as after any restart). Django's database is copied last; it changes rarely (accounts,
tokens) and the store does not point into it. A backup of a store made before the views had
a file of their own (format 1) has no ``views.sqlite3``: restoring it removes the views file,
and ``cosmos_init`` (``make run`` runs it) moves the views out of the restored store again.

Restore is the reverse, into the configured files, with the services stopped: it checks the
backup first (manifest, checksums, SQLite's own check) and refuses to overwrite a store that
holds documents, or a database that holds users, unless forced. The Azure backend is backed
up by Cosmos DB itself (docs/operations.md).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cosmos_backend.leases import LEASE_PK as LEASE_PARTITION

MANIFEST = "manifest.json"
STORE_FILE = "store.sqlite3"
VIEWS_FILE = "views.sqlite3"
DJANGO_FILE = "django.sqlite3"
FORMAT = 2  # 1: one store file (views inside), no views.sqlite3
FORMATS = (1, 2)  # what restore accepts
FILES = (STORE_FILE, VIEWS_FILE, DJANGO_FILE)
_STEP_PAGES = 1024  # pages per backup step: progress is shown between steps

Progress = Callable[[int, int], object]  # (pages done, pages in all)


class BackupError(Exception):
    """The backup or restore cannot be done; nothing was changed. Says why."""


@dataclass(frozen=True)
class Manifest:
    created_at: str
    documents: int
    users: int | None  # None: Django's database is not in the backup (not SQLite)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "createdAt": self.created_at,
            "documents": self.documents,
            "users": self.users,
        }


# ------------------------------------------------------------------ backup
def backup(
    dest: Path,
    *,
    store_path: Path,
    views_path: Path,
    django_db: sqlite3.Connection | None,
    progress: Progress = lambda done, total: None,
) -> Manifest:
    """Copy the store at ``store_path``, its views at ``views_path`` and Django's database
    (``django_db``, its open connection; None when it is not SQLite) into the new directory
    ``dest``."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError(
            f"{dest} already exists and is not an empty directory; a backup never overwrites one"
        )
    if not store_path.is_file():
        raise BackupError(f"there is no store at {store_path} to back up")
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o700)  # the clinical record: the owner's alone
    try:
        if views_path.is_file():  # first: the views never run ahead of the events copied
            _snapshot(views_path, dest / VIEWS_FILE, lambda done, total: None)
        _snapshot(store_path, dest / STORE_FILE, progress)
        users = None
        if django_db is not None:
            _copy(django_db, dest / DJANGO_FILE, lambda done, total: None)
            users = _users(dest / DJANGO_FILE)
        documents = sum(_documents(dest / name) for name in (STORE_FILE, VIEWS_FILE)
                        if (dest / name).exists())
        manifest = Manifest(datetime.now(UTC).isoformat(timespec="seconds"), documents, users)
        files = {name: _sha256(dest / name) for name in FILES if (dest / name).exists()}
        (dest / MANIFEST).write_text(json.dumps({**manifest.as_dict(), "sha256": files}, indent=2))
        for path in dest.iterdir():
            path.chmod(0o600)
    except (sqlite3.Error, OSError) as exc:
        _discard(dest)
        raise BackupError(f"backup failed, nothing kept: {exc}") from exc
    return manifest


def _snapshot(path: Path, target: Path, progress: Progress) -> None:
    source = _connect(path)
    try:
        # One read transaction for the whole copy: every step reads the same snapshot.
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        _copy(source, target, progress)
        source.execute("COMMIT")
    finally:
        source.close()


def _copy(source: sqlite3.Connection, target: Path, progress: Progress) -> None:
    copy = sqlite3.connect(target)
    try:
        source.backup(
            copy,
            pages=_STEP_PAGES,
            progress=lambda status, remaining, total: progress(total - remaining, total),
        )
        copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    finally:
        copy.close()


def _discard(dest: Path) -> None:
    for name in (*FILES, MANIFEST):
        (dest / name).unlink(missing_ok=True)


# ------------------------------------------------------------------ restore
def verify(source: Path) -> dict[str, Any]:
    """The backup's manifest, once its files are all there, unchanged and sound."""
    try:
        manifest = json.loads((source / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} is not a backup (no readable {MANIFEST})") from exc
    if manifest.get("format") not in FORMATS:
        raise BackupError(
            f"{source}: backup format {manifest.get('format')!r} is not one this version "
            f"restores ({', '.join(map(str, FORMATS))})"
        )
    for name, digest in (manifest.get("sha256") or {}).items():
        path = source / name
        if name not in FILES or not path.is_file():
            raise BackupError(f"{source}: {name} is missing")
        if _sha256(path) != digest:
            raise BackupError(f"{source}: {name} is damaged (its checksum differs)")
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise BackupError(f"{source}: {name} fails SQLite's integrity check")
        finally:
            conn.close()
    if STORE_FILE not in (manifest.get("sha256") or {}):
        raise BackupError(f"{source}: the backup holds no store")
    return manifest


def holdings(store_path: Path, views_path: Path,
             django_db: sqlite3.Connection | None) -> list[str]:
    """What the restore targets already hold, in words (empty: nothing to overwrite)."""
    held = []
    n = sum(_documents(path) for path in (store_path, views_path) if path.is_file())
    if n:
        held.append(f"the store at {store_path} holds {n} documents")
    if django_db is not None and (n := _count_users(django_db)):
        held.append(f"Django's database holds {n} users")
    return held


def live_leases(paths: tuple[Path, ...], now: float) -> list[str]:
    """The owners of change-feed leases in the store files ``paths`` that have not expired:
    relays that are running (a relay renews its lease every few seconds; a stopped one lets
    it lapse). Leases live in the views file; a store made before it, in the store's."""
    owners: set[str] = set()
    for path in paths:
        if path.is_file():
            owners.update(_lease_owners(path, now))
    return sorted(owners)


def _lease_owners(path: Path, now: float) -> set[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        owners: set[str] = set()
        for table in _tables(conn):
            owners.update(
                str(r[0])
                for r in conn.execute(
                    f"SELECT json_extract(doc, '$.owner') FROM {table} WHERE pk = ? AND "
                    "json_extract(doc, '$.owner') IS NOT NULL AND "
                    "json_extract(doc, '$.expiresAt') > ?",
                    (LEASE_PARTITION, now),
                )
            )
        return owners
    finally:
        conn.close()


def restore(
    source: Path,
    *,
    store_path: Path,
    views_path: Path,
    django_db: sqlite3.Connection | None,
    force: bool,
    progress: Progress = lambda done, total: None,
) -> dict[str, Any]:
    """Replace the store (and Django's database, when the backup has it and it is SQLite)
    with the backup's. Refuses, changing nothing, a damaged backup, or targets that hold
    data unless ``force``. Run it with every web process, worker and relay stopped."""
    manifest = verify(source)
    running = live_leases((store_path, views_path), time.time())
    if running:  # even with --force: rewriting a store under a running relay corrupts it
        raise BackupError(
            f"a relay is running on this store ({', '.join(running)} holds a "
            "lease): stop the web processes, workers and relays first"
        )
    held = holdings(store_path, views_path, django_db)
    if held and not force:
        raise BackupError("; ".join(held) + ": restore overwrites it only with --force")
    if DJANGO_FILE in manifest["sha256"] and django_db is None:
        raise BackupError(
            "the backup holds Django's database, but the configured one is "
            "not SQLite: restore it with that database's own tools"
        )
    store_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        _load(source / STORE_FILE, _connect(store_path), progress, close=True)
        if VIEWS_FILE in manifest["sha256"]:
            _load(source / VIEWS_FILE, _connect(views_path), lambda done, total: None,
                  close=True)
        else:  # format 1: the views are in the store file; cosmos_init moves them out again
            for name in (views_path, Path(f"{views_path}-wal"), Path(f"{views_path}-shm")):
                name.unlink(missing_ok=True)
        if DJANGO_FILE in manifest["sha256"] and django_db is not None:
            _load(source / DJANGO_FILE, django_db, lambda done, total: None, close=False)
    except sqlite3.Error as exc:
        raise BackupError(f"restore failed: {exc}") from exc
    return manifest


def _load(snapshot: Path, target: sqlite3.Connection, progress: Progress, *, close: bool) -> None:
    """Copy ``snapshot`` over the database ``target`` is connected to (SQLite takes the
    write lock and rewrites it page by page; WAL stays as it was)."""
    source = sqlite3.connect(f"file:{snapshot}?mode=ro", uri=True)
    try:
        source.backup(
            target,
            pages=_STEP_PAGES,
            progress=lambda status, remaining, total: progress(total - remaining, total),
        )
    finally:
        source.close()
        if close:
            target.close()


# ------------------------------------------------------------------ helpers
def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _documents(path: Path) -> int:
    """Documents in every container of a store file (its tables ``c_…``)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _tables(conn))
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> list[str]:
    """The store's container tables (``c_…``; see cosmos_backend.embedded)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'c\\_%' ESCAPE '\\'"
        )
    ]


def _count_users(conn: sqlite3.Connection) -> int:
    try:
        return int(conn.execute("SELECT count(*) FROM auth_user").fetchone()[0])
    except sqlite3.OperationalError:  # not migrated yet: no users
        return 0


def _users(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return _count_users(conn)
    finally:
        conn.close()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
