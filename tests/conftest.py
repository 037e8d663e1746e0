"""Project-wide fixtures. The store, the worklist drainer, users, API clients and reference
data come from the test kit (``testkit.fixtures``, the plugin downstream suites use too)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cosmos_backend.store import ContainerSpec
from hisadmin.core import store as handles
from patients import events_check

WIRE_DIR = Path(__file__).resolve().parent / "cosmos_wire"
# The emulator's well-known key; the wire server accepts any key.
WIRE_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@pytest.fixture
def cosmos_container_spec() -> ContainerSpec:
    return handles.container_spec()


@pytest.fixture(scope="session")
def wire_endpoint() -> Iterator[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the Cosmos-protocol test server needs it")
    if not (WIRE_DIR / "node_modules").exists():
        subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=WIRE_DIR,
                       check=True)
    proc = subprocess.Popen(["node", "server.js", "0", "--feed-ranges", "4"], cwd=WIRE_DIR, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening"):
            pytest.fail(f"the Cosmos-protocol server did not start: {line!r}")
        yield f"http://127.0.0.1:{line.split()[1]}/"
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------ areas as markers
# Every test carries its area's marker, taken from its folder, and a test that drives the
# browser or a stack is marked so by the fixtures it uses: `-m` selects an area (make
# test-quick: unit and service) without a module having to remember to say what it is.

AREAS = {"unit": "unit", "service": "service", "web": "web", "a11y": "browser",
         "contract": "contract", "integration": "integration", "bench": "bench"}
BROWSER_FIXTURES = {"browser", "worker_browser"}
STACK_FIXTURES = {"stack", "running_stack", "worklist_stack"}
# The modules that take longest, and about how many seconds a test of each kind takes.
LONG = {"bench": 20, "integration": 8, "browser": 5}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        parts = item.path.relative_to(here).parts if item.path.is_relative_to(here) else ()
        if len(parts) > 1 and parts[0] in AREAS:
            item.add_marker(AREAS[parts[0]])
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker("browser")
        if used & STACK_FIXTURES:
            item.add_marker("integration")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        items[:] = long_modules_first_on_every_worker(items, workers)


def long_modules_first_on_every_worker(items: list[pytest.Item], workers: int
                                       ) -> list[pytest.Item]:
    """The order for ``--dist worksteal``: it gives each worker a contiguous share of the
    collection, and a worker that runs out takes half of what another has left, from the end.
    The long modules are dealt, whole, to the heads of the shares, so they start at once on
    every worker and what is left to take at the end is quick. A module keeps its order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    long_ = [m for m in modules.values()
             if any(item.get_closest_marker(mark) for item in m for mark in LONG)]
    quick = iter([item for m in modules.values() if m not in long_ for item in m])

    def seconds(group: list[pytest.Item]) -> int:
        return sum(max((s for mark, s in LONG.items() if item.get_closest_marker(mark)),
                       default=1) for item in group)

    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for module in sorted(long_, key=seconds, reverse=True):
        min(heads, key=seconds).extend(module)
    order: list[pytest.Item] = []
    left = len(items)
    for n, head in enumerate(heads):  # the shares' sizes as worksteal cuts them
        share = left // (workers - n)
        left -= share
        order.extend(head)
        order.extend(item for _, item in zip(range(share - len(head)), quick, strict=False))
    order.extend(quick)
    return order


# ------------------------------------------------------------------ one browser per worker
# Launching chromium costs about a second; a worker launches it once, on its first browser
# test, and each test gets it through ``browser`` (tests/web/test_browser_flow.py), which
# closes every context the test opened: cookies, storage and pages never outlive a test.

# Debian's chromium-headless-shell: Chromium's headless build, the one Playwright itself runs
# headless. The whole browser in headless mode took twice its CPU (three browser files: 103
# against 46 CPU-seconds). HIS_CHROMIUM names another binary (the whole browser: chromium).
CHROMIUM = (os.environ.get("HIS_CHROMIUM") or shutil.which("chromium-headless-shell")
            or shutil.which("chromium") or "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", *os.environ.get("HIS_CHROMIUM_EXTRA", "").split()]


class WorkerBrowser:
    """This worker's headless chromium, started on first use and kept until the session ends.

    Playwright's sync API marks its event loop as running in the calling thread while it is
    in use. Between browser tests the loop is marked idle again, so that the worker's other
    tests run as in a process without a browser (Django's async-safety check included)."""

    def __init__(self) -> None:
        self._manager: Any = None
        self._browser: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @contextmanager
    def in_use(self) -> Iterator[Any]:
        if self._browser is None or not self._browser.is_connected():
            self._start()
        else:
            asyncio._set_running_loop(self._loop)  # where playwright's sync calls left it
        try:
            yield self._browser
        finally:
            for context in list(self._browser.contexts) if self._browser.is_connected() else ():
                context.close()
            asyncio._set_running_loop(None)

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        self.stop()
        self._manager = sync_playwright()
        playwright = self._manager.start()
        self._browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        self._loop = asyncio.get_running_loop()

    def stop(self) -> None:
        if self._manager is None:
            return
        asyncio._set_running_loop(self._loop)
        try:
            if self._browser is not None and self._browser.is_connected():
                self._browser.close()
        finally:
            self._manager.__exit__(None, None, None)
            asyncio._set_running_loop(None)
            self._manager = self._browser = self._loop = None


@pytest.fixture(scope="session")
def worker_browser() -> Iterator[WorkerBrowser]:
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium-headless-shell is not installed (make test installs it)")
    chromium = WorkerBrowser()
    yield chromium
    chromium.stop()


# ------------------------------------------------------------------ events against their schemas
# Every event the suite makes is checked against its published schema as it is made
# (patients.events_check); a test that made an event off its schema fails with the reasons.


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "synthetic_events(why): the test writes made-up events "
                            "to exercise the outbox's mechanics; they are not checked")
    events_check.install()
    own_var_dir(config)
    start_test_clock(config)
    static_files_scanned_once()
    celery_follows_the_broker_setting()
    screenshots_only_where_kept()


# ------------------------------------------------------------------ screenshots, when kept
def screenshots_only_where_kept() -> None:
    """Browser tests photograph their pages at each width for a person to look at, in
    ``$SCREENSHOT_DIR``. Without it the pictures went to a temporary directory nobody opens,
    at a tenth of the browser's time (measured on three browser files: chromium 103 → 92
    CPU-s). Then a screenshot is not taken; every check at every width still runs."""
    if os.environ.get("SCREENSHOT_DIR"):
        return
    from playwright.sync_api import Locator, Page

    def not_kept(self: Any, *args: Any, **kwargs: Any) -> bytes:
        return b""

    Page.screenshot = Locator.screenshot = not_kept  # type: ignore[method-assign]


# ------------------------------------------------------------------ one broker per test
def celery_follows_the_broker_setting() -> None:
    """Tests point ``CELERY_BROKER_URL`` at a Redis of their own. Celery reads the setting
    when it sends, but keeps the connection pool made for the first broker it sent to: a
    message sent in this process (a follow-up sent on alone) went to an earlier test's Redis,
    shut down by then, depending on which tests the worker had run first (run BC). A server
    process's broker never changes; here the pools are dropped whenever the setting does."""
    from django.core.signals import setting_changed

    def dropped(*, setting: str, **_: Any) -> None:
        if setting != "CELERY_BROKER_URL":
            return
        from hisadmin.celery import app

        pool, app._pool = app._pool, None
        amqp = app.__dict__.get("amqp")  # made on first use
        if amqp is not None:
            amqp._producer_pool = None
        if pool is not None:
            pool.force_close_all()

    setting_changed.connect(dropped, weak=False, dispatch_uid="his-tests-celery-broker")


# ------------------------------------------------------------------ static files, scanned once
def static_files_scanned_once() -> None:
    """Django builds its middleware again for every test client, and WhiteNoise then lists
    and stats every static file of every app (about 50 ms; the suite makes thousands of
    clients). A server process builds it once; here the first scan with the same settings
    is kept for the run. The files do not change while the tests run."""
    from django.conf import settings
    from whitenoise.middleware import WhiteNoiseMiddleware

    scan = WhiteNoiseMiddleware.add_files_from_finders
    scanned: dict[tuple[Any, ...], dict[str, Any]] = {}

    def once(self: WhiteNoiseMiddleware) -> None:
        key = (self.static_prefix, self.max_age, self.charset, self.allow_all_origins,
               getattr(settings, "WHITENOISE_IMMUTABLE_FILE_TEST", None),
               tuple(settings.INSTALLED_APPS),
               tuple(map(str, getattr(settings, "STATICFILES_DIRS", ()))))
        found = scanned.get(key)
        if found is None:
            before = set(self.files)
            scan(self)
            found = scanned[key] = {k: v for k, v in self.files.items() if k not in before}
        self.files.update(found)

    WhiteNoiseMiddleware.add_files_from_finders = once  # type: ignore[method-assign]


def start_test_clock(config: pytest.Config) -> None:
    """``HIS_TEST_CLOCK=2026-11-28T23:50:00+00:00`` starts the whole run's clock there (it
    ticks on): a way to look for tests and code that hold only at some times of day. Only
    this process's clock moves, not a worker or relay started apart, nor the browser's."""
    at = os.environ.get("HIS_TEST_CLOCK")
    if not at:
        return
    from datetime import datetime

    import time_machine

    traveller = time_machine.travel(datetime.fromisoformat(at), tick=True)
    traveller.start()
    config.add_cleanup(traveller.stop)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None,
                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """The test database in a file of this worker's own, as the product keeps it, not
    SQLite's in-memory one: the live server then gives each request thread its own
    connection (the in-memory database is one connection shared by every thread, and two
    requests at once, two windows of a test, broke each other's transactions)."""
    from django.db import connections

    found = connections["default"].settings_dict
    if found["ENGINE"].endswith("sqlite3"):
        found.setdefault("TEST", {})["NAME"] = str(
            tmp_path_factory.mktemp("django-db") / "django.sqlite3")


def own_var_dir(config: pytest.Config) -> None:
    """This process's own data directory in place of the checkout's ``var/``: a test that
    reaches the product's default store (rather than ``his_store``'s fresh one) writes into a
    file no other worker shares, and a run leaves nothing in the checkout."""
    from django.conf import settings

    var = Path(tempfile.mkdtemp(prefix="his-var-"))
    config.add_cleanup(lambda: shutil.rmtree(var, ignore_errors=True))
    settings.VAR_DIR = var
    if "EMBEDDED_STORE_PATH" not in os.environ:
        settings.DOCUMENT_STORE = {**settings.DOCUMENT_STORE, "path": str(var / "store.sqlite3")}
    handles.reset_handles()


_reported = [0]  # how many offenders the reports so far have named


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[pytest.TestReport]:
    report = yield
    made = events_check.OFFENDERS[_reported[0]:]
    _reported[0] = len(events_check.OFFENDERS)
    if made and not report.failed and item.get_closest_marker("synthetic_events") is None:
        report.outcome = "failed"
        shown = sorted(set(made))[:20]  # a fixture's event repeats in every test using it
        report.longrepr = "\n".join([f"{len(made)} event(s) off their schema (docs/events.md):",
                                     *shown, *(["…"] if len(set(made)) > len(shown) else [])])
    return report
