"""Project-wide fixtures. The store, the worklist drainer, users, API clients and reference
data come from the test kit (``testkit.fixtures``, the plugin downstream suites use too)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

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


# ------------------------------------------------------------------ events against their schemas
# Every event the suite makes is checked against its published schema as it is made
# (patients.events_check); a test that made an event off its schema fails with the reasons.


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "synthetic_events(why): the test writes made-up events "
                            "to exercise the outbox's mechanics; they are not checked")
    events_check.install()


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
