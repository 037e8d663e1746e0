"""The lists' freshness notice says how far the views are behind, end to end, in words a
ward's staff read at a glance; in a real browser, as a clerk and a nurse, each flow run once
at 1024 px and the notice looked at at 1024 and 1440 px (the count of events not yet sent is
an admin's detail: test_views_lag_notice.py). Screenshots go to ``$SCREENSHOT_DIR``
(default: the test's temporary directory)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hisadmin.core import views_lag
from hisadmin.embedded_redis import EmbeddedRedis
from tests import worklist_data as data
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LIST = "/admin/worklists/admitted/?department=CARD"
WIDTHS = (1024, 1440)  # the flow runs at the first, the narrowest
HEIGHT = 700


class Publishing:
    """A relay's published lag, as a running relay keeps it: again every half second (a
    figure not renewed for ``views_lag.FRESH_SECONDS`` is a stopped relay's, and a busy
    machine can take that long to log in and open a page)."""

    def __init__(self, relay: str, ms: float) -> None:
        self.relay, self.ms = relay, ms
        self.done = threading.Event()

    def set(self, ms: float) -> None:
        self.ms = ms
        views_lag.publish_lag(self.relay, ms)

    def run(self) -> None:
        while not self.done.is_set():
            views_lag.publish_lag(self.relay, self.ms)
            self.done.wait(0.5)


@contextmanager
def publishing(relay: str, ms: float) -> Iterator[Publishing]:
    lag = Publishing(relay, ms)
    thread = threading.Thread(target=lag.run, daemon=True)
    thread.start()
    try:
        yield lag
    finally:
        lag.done.set()
        thread.join(5)
        views_lag.withdraw(relay)


def _open_list(browser, live_server, his_store, make_user, drain_worklists,  # noqa: F811
               username: str, role: str, family: str, given: str, width: int):
    """A patient admitted to Cardiology and projected, and the list open in a browser as
    ``username`` (the lag published meanwhile, see :func:`publishing`): the page."""
    make_user(username, role)
    pid = data.register(his_store, family, given)
    data.admit(his_store, pid, "CARD", "CARD-A")
    drain_worklists()
    page = browser.new_context(viewport={"width": width, "height": HEIGHT}).new_page()
    login(page, live_server.url, username)
    page.goto(live_server.url + LIST)
    page.wait_for_selector("#result_list tbody tr")
    return page


@pytest.mark.parametrize("role", ["clerk", "nurse"])
def test_the_list_says_how_far_behind_the_views_are(
        live_server, browser, his_store, reference_data, make_user, drain_worklists,  # noqa: F811
        settings, tmp_path: Path, shots: Path, role: str) -> None:
    """The list opened once at 1024 px; the notice read and photographed at each width."""
    redis = EmbeddedRedis(tmp_path / "redis")
    settings.CELERY_BROKER_URL = redis.celery_url
    try:
        with publishing("relay-shot", 420.0):
            page = _open_list(browser, live_server, his_store, make_user, drain_worklists,
                              f"lag-{role}", role, "Łapińska", "Zoë", WIDTHS[0])
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": HEIGHT})
                notice = page.inner_text("#worklist .freshness .lag")
                # Staff read how far behind in time; the count of events not yet sent (no relay
                # runs here, so every event counts) is an operator's detail, shown to admins only.
                assert notice == "420 ms behind"
                page.screenshot(path=str(shots / f"views-lag-{role}-{width}.png"))
            page.context.close()
    finally:
        redis.shutdown()


def test_an_open_list_says_its_updates_stopped_when_a_page_goes_unprojected_and_clears(
        live_server, browser, his_store, reference_data, make_user, drain_worklists,  # noqa: F811
        settings, tmp_path: Path, shots: Path) -> None:
    """A nurse has the list open; no worker projects a page the relay handed over (every
    worker dead): on its next refresh the list says its updates stopped, not merely that it
    is behind (read and photographed at 1024 and 1440 px); once the views catch up the notice
    goes by itself. The flow runs once, at 1024 px."""
    redis = EmbeddedRedis(tmp_path / "redis")
    settings.CELERY_BROKER_URL = redis.celery_url
    try:
        with publishing("relay-stop", 40.0) as lag:
            page = _open_list(browser, live_server, his_store, make_user, drain_worklists,
                              "stop-nurse", "nurse", "Þórsdóttir", "Ása", WIDTHS[0])
            assert page.query_selector("#updates-stopped") is None  # behind a little: no stop

            lag.set(45_000.0)
            page.wait_for_selector("#updates-stopped", timeout=10_000)  # the list's next refresh
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": HEIGHT})
                # 45 s when shown, counting on while it stays (a slow machine's second width)
                said = re.match(r"⚠ Updates stopped (\d+) s ago",
                                page.inner_text("#updates-stopped"))
                assert said and 45 <= int(said.group(1)) < 60, width
                page.screenshot(path=str(shots / f"views-stopped-nurse-{width}.png"))
            page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})  # back to the flow's

            lag.set(0.0)  # a worker again: the views caught up
            page.wait_for_selector("#updates-stopped", state="detached", timeout=10_000)
            page.context.close()
    finally:
        redis.shutdown()
