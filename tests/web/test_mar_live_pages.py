"""The medication record keeps itself current: its grid (scheduled and PRN medication) is an
htmx live block, re-fetched every ``MAR_REFRESH_SECONDS`` with the day kept, answered alone
(marked ``X-Mar``) for htmx GETs; a dose recorded meanwhile shows in the next answer."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest

from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.store import new_uow
from patients import use_cases
from patients.pages.mar import MAR_MARKER, MAR_REFRESH_SECONDS
from tests.web.test_mar_pages import world  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _slot_status(html: str, order_id: str, slot_id: str) -> str:
    """The data-status of ``slot_id``'s cell in the grid's HTML."""
    row = html.split(f'data-order="{order_id}"', 1)[1]
    found = re.search(rf'data-slot-id="{re.escape(slot_id)}" data-status="(\w+)"', row)
    assert found, slot_id
    return found.group(1)


def test_the_page_is_a_live_block_for_every_reader(world: dict) -> None:  # noqa: F811
    assert MAR_REFRESH_SECONDS == 10 and MAR_MARKER == "X-Mar"
    day = world["start"].date().isoformat()
    for who in ("nurse", "doc"):
        page = world[who].get(world["base"] + "mar/")
        html = page.content.decode()
        assert page.status_code == 200 and MAR_MARKER not in page
        assert 'hx-trigger="every 10s"' in html and 'data-live-marker="X-Mar"' in html
        # opened without ?date= (today): the refresh still asks for the day shown
        assert f'hx-get="/admin/patients/{world["pid"]}/mar/?date={day}"' in html
        assert "worklists/freshness.js" in html and "worklists/htmx.min.js" in html
        assert "data-loaded-at" in html and "refreshes every 10 s" in html
        # the day's navigation and the banner stay outside the live block
        live = html.split('id="mar-live"', 1)[1]
        assert "mar-nav" not in live and "patient-banner" not in live
        assert 'id="mar-scheduled"' in live and 'id="mar-prn"' in live
    printed = world["nurse"].get(world["base"] + "mar/print/").content.decode()
    assert "hx-trigger" not in printed and "freshness.js" not in printed


def test_an_htmx_get_answers_the_grid_alone_for_the_day_asked(world: dict) -> None:  # noqa: F811
    day = world["start"].date().isoformat()
    for who in ("nurse", "doc"):
        part = world[who].get(world["base"] + f"mar/?date={day}", HTTP_HX_REQUEST="true")
        html = part.content.decode()
        assert part.status_code == 200 and part[MAR_MARKER] == "1"
        assert "HX-Request" in part["Vary"]
        assert "<html" not in html and 'id="patient-banner"' not in html
        assert "mar-nav" not in html and 'id="mar-live"' not in html
        assert 'id="mar-scheduled"' in html and 'id="mar-prn"' in html
        assert "Paracetamol" in html and "data-loaded-at" in html
        assert part.context["day"].isoformat() == day
        assert ('class="button mar-record"' in html) == (who == "nurse")
    # another day is kept too
    yesterday = world["start"] - timedelta(days=1)
    other = world["doc"].get(world["base"] + f"mar/?date={yesterday.date().isoformat()}",
                             HTTP_HX_REQUEST="true")
    assert other.context["day"] == yesterday.date() and other[MAR_MARKER] == "1"
    # only GETs made by htmx: the page otherwise
    assert MAR_MARKER not in world["nurse"].get(world["base"] + "mar/")
    posted = world["nurse"].post(world["base"] + "mar/", HTTP_HX_REQUEST="true")
    assert MAR_MARKER not in posted and "<html" in posted.content.decode()


def test_a_dose_recorded_meanwhile_shows_as_given_in_the_next_refresh(
        world: dict) -> None:  # noqa: F811
    url = world["base"] + f"mar/?date={world['start'].date().isoformat()}"
    before = world["nurse"].get(url, HTTP_HX_REQUEST="true")
    slot = next(s for row in before.context["rows"] if row["orderId"] == world["amox"]
                for cell in row["cells"] for s in cell)  # the first dose time, at the start
    assert _slot_status(before.content.decode(), world["amox"], slot["slotId"]) != "given"
    # a colleague records it elsewhere
    use_cases.administer(use_cases.Administer(world["pid"], world["amox"], Decimal("1"), "g",
                                              scheduled_for=world["start"]),
                         new_uow(), actor=SYSTEM_ACTOR)
    after = world["nurse"].get(url, HTTP_HX_REQUEST="true")
    html = after.content.decode()
    assert after[MAR_MARKER] == "1"
    assert _slot_status(html, world["amox"], slot["slotId"]) == "given"
    assert ">Given<" in html and "1 g at" in html
    # the Record links of the answer still lead to the form
    link = re.search(r'href="([^"]+)">Record</a>', html)
    assert link and world["nurse"].get(link.group(1).replace("&amp;", "&")).status_code == 200
