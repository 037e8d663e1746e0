"""An admin adds a webhook in a real browser: the form with events by name, the secret shown
once after saving, the list with its switch-off and delete buttons, the dead letters page.
The flow runs once, at 1024 px; each page it stops at is photographed at 1024 and 1440 px.
Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary
directory)."""

from __future__ import annotations

import pytest

from tests.web.browser_shots import at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from webhooks.persistence import deadletters, subscriptions

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FLOW_WIDTH = 1024
# The screenshots' widths, the flow's last: each ends back at the width the flow runs at.
SHOT_WIDTHS = (1440, FLOW_WIDTH)


def test_an_admin_adds_switches_off_and_deletes_a_webhook(
    live_server,
    browser,  # noqa: F811
    make_user,
    his_store,
    shots,
    settings,
) -> None:
    settings.ADMIN_TWO_FACTOR = False  # the password alone: two-factor login is tested apart
    make_user("hookadmin", "admin")
    base = live_server.url
    ctx = browser.new_context(viewport={"width": FLOW_WIDTH, "height": 900})
    page = ctx.new_page()
    login(page, base, "hookadmin")
    page.goto(f"{base}/admin/webhooks/")
    assert "No subscriptions yet." in page.inner_text("#result_list")
    page.click("#content-main a.addlink")
    page.fill("#id_url", "https://integration.example.org/his/events")
    page.check("input[name=events][value=AdmissionStarted]")
    page.check("input[name=events][value=AdmissionEnded]")
    page.check("input[name=events][value=OrderReady]")
    at_widths(page, shots, "webhook-add", widths=SHOT_WIDTHS)
    page.click("input[type=submit]")

    secret = page.inner_text("#webhook-secret")
    [sub] = subscriptions.all_subscriptions(his_store)
    assert secret == subscriptions.secret_of(his_store, sub.id) and len(secret) >= 16
    at_widths(page, shots, "webhook-created", widths=SHOT_WIDTHS)

    page.goto(f"{base}/admin/webhooks/")
    row = page.locator("#result_list tbody tr").first
    assert "Admitted" in row.inner_text() and "Delivering" in row.inner_text()
    assert secret not in page.content()
    # A failed delivery, as the workers would leave it, to show on the dead letters page.
    deadletters.record(
        his_store,
        subscription_id=sub.id,
        stream="P_0a1b2c",
        seq=3,
        event_type="OrderReady",
        reason="HTTP 503",
        attempts=8,
    )
    at_widths(page, shots, "webhook-list", widths=SHOT_WIDTHS)
    row.locator("button[value=disable]").click()
    assert "Deliveries switched off." in page.inner_text("ul.messagelist")
    assert "Switched off" in page.inner_text("#result_list")

    page.click("text=failed delivery")
    assert "Order ready" in page.inner_text("#result_list")
    at_widths(page, shots, "webhook-dead-letters", widths=SHOT_WIDTHS)

    page.goto(f"{base}/admin/webhooks/")
    page.locator("#result_list a.deletelink").first.click()
    assert "integration.example.org/his/events" in page.inner_text("#delete-summary")
    assert subscriptions.all_subscriptions(his_store) != []  # asked first
    at_widths(page, shots, "webhook-delete", widths=SHOT_WIDTHS)
    page.click("input[value='Yes, delete it']")
    assert "Subscription deleted." in page.inner_text("ul.messagelist")
    assert subscriptions.all_subscriptions(his_store) == []
    ctx.close()
