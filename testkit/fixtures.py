"""The test kit's fixtures, for suites that test this product from outside (and its own).

Registered by :mod:`testkit.plugin` once Django is set up. It builds on
``cosmos_backend.pytest_plugin`` (``doc_store``, ``uow_factory``, ``feed_drainer``). Fixtures:

* ``his_store`` — the product's own store handle pointed at a fresh embedded store in the
  test's tmp dir (``his_store_path`` is its clinical file; the views container's file is
  beside it, ``hisadmin.core.store.views_path(his_store_path)``);
* ``drain_worklists`` — ``drain_worklists()`` projects every event written since the last call
  through the real projection code, in-process; returns how many;
* ``his_reference_data`` — the shipped reference data (departments, wards, medications…);
* ``his_user`` — ``his_user("alice", "clinician")``: a user with those roles (a fast hasher;
  the password is :data:`TEST_PASSWORD`);
* ``his_api_client`` — ``his_api_client("nurse")``: a Django test client sending a bearer
  token of a user with that role;
* ``his_patient`` — ``his_patient(family="Doe", ward="MED-1", orders=("medication", "lab"))``:
  a patient registered, admitted and (optionally) ordered for through the API, as a
  :class:`SeededPatient` (ids, and the clients used).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client

from accounts.models import ApiToken
from cosmos_backend.outbox import event_seq, event_stream, is_event
from cosmos_backend.pytest_plugin import FeedDrainer
from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core import store as handles
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.roles import ensure_groups
from patients import use_cases
from worklists.delivery.projector import project_event
from worklists.persistence import generations

JSON = "application/json"
# What each kind of order needs beyond its kind, valid with the shipped reference data.
ORDER_BODIES: dict[str, dict[str, Any]] = {
    "medication": {"medication_code": "AMOX", "dose": "500", "unit": "mg", "route": "PO",
                   "frequency": "Q8H"},
    "lab": {"test_code": "CBC"},
    "imaging": {"modality": "CR", "body_part": "CHEST"},
}

# Every test user's password: one for all, so a test logs anyone in through the form, and
# one that passes the password validators (hisadmin.settings) for any username.
TEST_PASSWORD = "Tq7#Vx2@Wz9!Kj4$"


# ------------------------------------------------------------------ the reference data, once
# Loading the shipped reference data is some 180 edits, each with its event: about a quarter
# of a second, and a thousand tests of this suite start from it. A test process loads it once,
# into store files of its own, before any test's clock is moved; a test that asks for the
# data starts from a copy of those files (a millisecond). The copy is the store the load
# makes (entries, events, feed positions), written at the copy's time (_ts: the views' lag
# counts from it), with an epoch of its own for the etags it makes.
_STORE_KEYS = ("feed_range_count", "synchronous")  # the settings that shape a store's files


@dataclass
class ReferenceTemplate:
    """The clinical and views files of an embedded store holding the shipped reference
    data, and the store settings they were made with."""

    clinical: Path
    settings: dict[str, Any]

    def fits(self, cfg: dict[str, Any]) -> bool:
        return all(cfg.get(k) == self.settings.get(k) for k in _STORE_KEYS)

    def copy_to(self, path: Path) -> None:
        for source, target in ((self.clinical, path),
                               (Path(handles.views_path(str(self.clinical))),
                                Path(handles.views_path(str(path))))):
            shutil.copyfile(source, target)
            with closing(sqlite3.connect(target)) as conn, conn:
                conn.execute("UPDATE store_meta SET value = ? WHERE key = 'epoch'",
                             (int.from_bytes(os.urandom(4), "big"),))
                # Written now, as far as the store's clock says (_ts): the views' lag counts
                # events the relay has yet to send from when they were written.
                tables = [name for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")
                    if "ts" in {c[1] for c in conn.execute(f"PRAGMA table_info({name})")}]
                for table in tables:
                    conn.execute(f"UPDATE {table} SET ts = ?", (int(time.time()),))


@pytest.fixture(scope="session")
def his_reference_template(tmp_path_factory: pytest.TempPathFactory) -> ReferenceTemplate:
    base = tmp_path_factory.mktemp("his-reference")
    cfg = dict(settings.DOCUMENT_STORE)
    loaded = handles.open_embedded(base / "loaded.sqlite3")
    try:
        list(use_cases.load_reference_data(UnitOfWork(loaded), actor=SYSTEM_ACTOR))
    finally:
        loaded.close()
    clinical = base / "reference.sqlite3"
    for source, target in ((base / "loaded.sqlite3", clinical),
                           (Path(handles.views_path(str(base / "loaded.sqlite3"))),
                            Path(handles.views_path(str(clinical))))):
        # One self-contained file each (no write-ahead log beside it) to copy from.
        with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
            src.backup(dst)
    return ReferenceTemplate(clinical, {k: cfg.get(k) for k in _STORE_KEYS})


@pytest.fixture
def his_store_path(tmp_path: Path, settings: Any, request: pytest.FixtureRequest,
                   his_reference_template: ReferenceTemplate) -> Iterator[Path]:
    """Point the product's store handles at a fresh embedded store for this test (holding
    the shipped reference data already when the test asks for ``his_reference_data``)."""
    path = tmp_path / "his-store.sqlite3"
    cfg = dict(settings.DOCUMENT_STORE)
    cfg.update(backend="embedded", path=str(path))
    # The template is a session fixture, made before any test's clock is moved.
    if "his_reference_data" in request.fixturenames and his_reference_template.fits(cfg):
        his_reference_template.copy_to(path)
        _FROM_TEMPLATE.add(str(path))
    settings.DOCUMENT_STORE = cfg
    handles.reset_handles()
    generations.forget()
    yield path
    handles.reset_handles()
    generations.forget()


@pytest.fixture
def his_store(his_store_path: Path) -> DocumentStore:
    return handles.get_store()


@pytest.fixture
def drain_worklists(his_store: DocumentStore) -> Callable[[], int]:
    """``drain_worklists()`` projects every event written since the last call, in-process,
    through the real projection code (no broker, no Celery eager mode); returns the count."""
    drainer = FeedDrainer(his_store)

    def drain() -> int:
        return drainer(lambda doc: project_event(his_store, event_stream(doc), event_seq(doc)),
                       only=is_event)

    return drain


_FROM_TEMPLATE: set[str] = set()  # the stores that started as a copy of the template


@pytest.fixture
def his_reference_data(his_store: DocumentStore, his_store_path: Path) -> None:
    if str(his_store_path) in _FROM_TEMPLATE:
        _FROM_TEMPLATE.discard(str(his_store_path))
        return  # the store started as a copy of the loaded data
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))


@pytest.fixture
def his_user(db: None, settings: Any) -> Callable[..., Any]:
    # A fast hasher: test users need a password, not a strong one (PBKDF2 costs ~0.3 s each).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    ensure_groups()

    def make(username: str, *roles: str) -> Any:
        user = User.objects.filter(username=username).first() or \
            User.objects.create_user(username, password=TEST_PASSWORD)
        user.groups.add(*Group.objects.filter(name__in=roles))
        return user

    return make


@pytest.fixture
def his_api_client(his_user: Callable[..., Any]) -> Callable[..., Any]:
    """``his_api_client("clerk")`` → a test client sending a bearer token of a user with
    that role (one user per role combination)."""
    def make(*roles: str) -> Any:
        user = his_user("api-" + "-".join(roles or ("none",)), *roles)
        _, raw = ApiToken.issue(user, "tests")
        return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    return make


@dataclass
class SeededPatient:
    """A patient made through the API: its id, MRN, admission and orders by kind."""

    id: str
    mrn: str
    admission_id: str | None
    orders: dict[str, str] = field(default_factory=dict)
    clients: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def his_patient(his_api_client: Callable[..., Any], his_reference_data: None
                ) -> Callable[..., SeededPatient]:
    """``his_patient(family="Doe", given="Jo", birth_date="1960-01-01", department="MED",
    ward="MED-1", admit=True, orders=("medication", "lab", "imaging"),
    allergies_asked=True)``: an admitted patient's allergies are asked (no known
    allergies recorded) unless ``allergies_asked=False``."""
    clients = {"clerk": his_api_client("clerk"), "clinician": his_api_client("clinician"),
               "nurse": his_api_client("nurse")}

    def make(family: str = "Doe", *, given: str = "Jo", birth_date: str = "1960-01-01",
             department: str = "MED", ward: str = "MED-1", admit: bool = True,
             orders: tuple[str, ...] = (), allergies_asked: bool = True) -> SeededPatient:
        created = clients["clerk"].post("/api/v1/patients", {
            "given_name": given, "family_name": family, "birth_date": birth_date,
            "confirm_not_duplicate": True}, content_type=JSON)
        assert created.status_code == 201, created.content
        body = created.json()
        seeded = SeededPatient(body["id"], body["mrn"], None, clients=clients)
        if not admit:
            return seeded
        admitted = clients["clerk"].post(f"/api/v1/patients/{seeded.id}/admissions", {
            "department_id": department, "ward_id": ward, "reason": "Observation"},
            content_type=JSON)
        assert admitted.status_code == 201, admitted.content
        seeded.admission_id = admitted.json()["id"]
        if allergies_asked:  # else a medication order needs an allergy-status override
            asked = clients["clinician"].post(f"/api/v1/patients/{seeded.id}/allergies/none",
                                              content_type=JSON)
            assert asked.status_code in (200, 201), asked.content
        for kind in orders:
            placed = clients["clinician"].post(f"/api/v1/patients/{seeded.id}/orders", {
                "kind": kind, **ORDER_BODIES[kind]}, content_type=JSON)
            assert placed.status_code == 201, placed.content
            seeded.orders[kind] = placed.json()["order_id"]
        return seeded

    return make
