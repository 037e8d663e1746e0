"""An admin adds an HL7 destination in a real browser, switches it off, finds a patient's
messages in the log and deletes the destination after confirming. Each flow runs once, at
the narrower of its two widths; its pages are looked at, with a full-page screenshot, at both
(1280 and 1920 px, the held log 1024 and 1440 px), into ``$SCREENSHOT_DIR`` (default: the
test's temporary directory)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from hl7v2.persistence import store
from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1280, 1920)


def looked_at(page, shots, name: str, widths=WIDTHS) -> None:
    """Full-page screenshots ``<name>-<width>.png`` at ``widths``; back to the first after."""
    at_widths(page, shots, name, widths=widths)
    page.set_viewport_size({"width": widths[0], "height": 900})


def admin_page(browser, live_server, make_user, settings, monkeypatch, width: int):  # noqa: F811
    """A signed-in admin's page at ``width`` (no second factor; the engine's network named)."""
    settings.ADMIN_TWO_FACTOR = False
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    make_user("hl7admin", "admin")
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    login(page, live_server.url, "hl7admin")
    return page


def test_an_admin_adds_a_destination_and_reads_the_message_log(
        live_server, browser, make_user, his_store, shots, settings,  # noqa: F811
        monkeypatch) -> None:
    base = live_server.url
    page = admin_page(browser, live_server, make_user, settings, monkeypatch, WIDTHS[0])
    page.goto(f"{base}/admin/")
    page.click("a:text-is('HL7 destinations')")
    assert "No destinations yet." in page.inner_text("#result_list")
    page.click("#content-main a.addlink")
    page.fill("#id_name", "Rhapsody ADT (ward systems)")
    page.fill("#id_host", "127.0.0.1")
    page.check("input[name=events][value=AdmissionStarted]")
    page.check("input[name=events][value=PatientTransferred]")
    page.check("input[name=events][value=AdmissionEnded]")
    looked_at(page, shots, "hl7-add")
    page.click("input[type=submit]")
    [dest] = store.all_destinations(his_store)
    row = page.locator("#result_list tbody tr").first
    assert "Admitted (A01)" in row.inner_text() and "Sending" in row.inner_text()
    for cid, mrn, status, reason in [("7Q3KX2M5VJ4NB6ZC8DRT", "H0000042", "accepted", ""),
                                     ("K2M5VJ4NB6ZC8DRT7Q3X", "H0000042", "dead", "ACK AE"),
                                     ("B6ZC8DRT7Q3KX2M5VJ4N", "H0000043", "retrying",
                                      "no ACK in 10 s")]:
        store.log_attempt(his_store, store.LogEntry(
            control_id=cid, destination_id=dest.id, stream="P_x", seq=2,
            event_type="AdmissionStarted", trigger="A01", mrn=mrn, status=status,
            attempts=8 if status == "dead" else 2, reason=reason, at=store.now_iso()))
    page.reload()
    looked_at(page, shots, "hl7-destinations")
    page.click("button:text('Switch off')")
    assert "Messages switched off." in page.inner_text("ul.messagelist")
    page.goto(f"{base}/admin/hl7-messages/")
    looked_at(page, shots, "hl7-messages")
    page.fill("#id_mrn", "H0000042")
    page.select_option("#id_status", "dead")
    page.click("input[value=Search]")
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    assert "Failed for good" in page.inner_text("#result_list")
    looked_at(page, shots, "hl7-messages-search")
    page.goto(f"{base}/admin/hl7/{dest.id}/delete/")
    looked_at(page, shots, "hl7-delete")
    page.click("input[value='Yes, delete it']")
    assert "Destination deleted." in page.inner_text("ul.messagelist")
    assert store.all_destinations(his_store) == []


def test_the_log_shows_messages_waiting_and_a_patient_held_after_the_retry_budget(
        live_server, browser, make_user, his_store, shots, settings,  # noqa: F811
        monkeypatch) -> None:
    from datetime import UTC, datetime

    from hisadmin.core import held_streams
    from hisadmin.core.actor import Actor
    from hl7v2.outbound import use_cases

    page = admin_page(browser, live_server, make_user, settings, monkeypatch, 1024)
    dest = use_cases.add_destination(use_cases.AddDestination(
        name="Rhapsody ADT", host="127.0.0.1", port=2575, events=["AdmissionStarted"]),
        his_store, actor=Actor(id="1", username="hl7admin", roles=("admin",)))
    for cid, seq, status, reason in [("PENDINGAAAAAAAAAAAAA", 3, "pending", ""),
                                     ("DEADAAAAAAAAAAAAAAAA", 2, "dead", "ACK AE")]:
        store.log_attempt(his_store, store.LogEntry(
            control_id=cid, destination_id=dest.id, stream="P_held", seq=seq,
            event_type="AdmissionStarted", trigger="A01", mrn="H0000042", status=status,
            attempts=0 if status == "pending" else 40, reason=reason, at=store.now_iso()))
    held_streams.hold(his_store, stream_pk="P_held", seq=2, event_type="AdmissionStarted",
                      occurred_at=datetime.now(UTC).isoformat(), reason="Rhapsody ADT: ACK AE",
                      consumer=held_streams.HL7_DELIVERY)
    page.goto(f"{live_server.url}/admin/hl7-messages/")
    notice = page.inner_text(".held-delivery")
    assert "failed for good" in notice and "wait, in order" in notice
    log = page.inner_text("#result_list")
    assert "Waiting to be sent" in log and "Failed for good" in log
    looked_at(page, shots, "hl7-messages-held", widths=(1024, 1440))
