"""The separation of duties and the attributed feeds in a real browser, as an admin who is
not a superuser and as a superuser: a superuser's device offers no delete to the one and
does to the other; one's own account shows its roles read only; the feeds' lists show the
last change and their delete confirmations the recorded changes; the security events page
lists them; a user whose password an admin reset is told at login and sent to "Change
password". Each flow runs once, at 1024 px; every page it looks at is screenshot at 1024
and 1440 px (the admin pages also checked for sideways scrolling at each). Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django_otp.plugins.otp_totp.models import TOTPDevice
from playwright.sync_api import expect

from hisadmin.core.actor import Actor
from hisadmin.core.store import get_store
from hl7v2.outbound import use_cases as hl7
from hl7v2.persistence import store as hl7_store
from tests.web.browser_shots import WIDTHS, at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)
from webhooks import use_cases as hooks

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NEW_PASSWORD = "Harbour-lantern-1987-quince"
NARROWEST_LAST = WIDTHS[::-1]  # screenshots the widest first: the flow goes on at the narrowest


@pytest.fixture
def feeds(make_user, monkeypatch) -> dict[str, str]:
    """A destination and a subscription, each added and switched off by another admin."""
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.0/8")
    other = make_user("night-admin", "admin")
    actor = Actor(id=str(other.pk), username="night-admin")
    store = get_store()
    dest = hl7.add_destination(hl7.AddDestination("Ward engine", "127.0.0.1", 2575,
                                                  ["AdmissionStarted"]), store, actor=actor)
    hl7.change_destination(hl7.ChangeDestination(dest.id, dest.version or "", active=False,
                                                 port=2576), store, actor=actor)
    sub, _ = hooks.subscribe(hooks.Subscribe("http://127.0.0.1:9/his-receiver",
                                             ["AdmissionStarted", "PatientTransferred"]),
                             store, actor=actor)
    hooks.set_active(hooks.SetActive(sub.id, False, sub.version or ""), store, actor=actor)
    assert hl7_store.get(store, dest.id).port == 2576
    return {"dest": dest.id, "sub": sub.id}


@pytest.mark.parametrize("who", ["office", "root"])
def test_the_admin_pages_show_the_duties_and_the_recorded_changes(
        live_server, browser, make_user, feeds, tmp_path, who) -> None:  # noqa: F811
    """One walk through the pages at 1024 px; each page screenshot at 1024 and 1440 px, with
    nothing scrolled sideways at either."""
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    me = make_user(f"{who}-admin", "admin")
    if who == "root":
        me.is_superuser = True
        me.save()
    chief = make_user("chief-root")
    chief.is_superuser = True
    chief.save()
    device = TOTPDevice.objects.create(user=chief, name="chief's phone", confirmed=True)
    TOTPDevice.objects.create(user=me, name="my phone", confirmed=True)
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    base = live_server.url
    login(page, base, f"{who}-admin")

    def shot(name: str) -> None:
        for width in NARROWEST_LAST:
            page.set_viewport_size({"width": width, "height": 900})
            page.screenshot(path=str(shots / f"{name}-{who}-{width}.png"), full_page=True)
            overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
            assert overflow <= 0, (name, width, overflow)

    page.goto(f"{base}/admin/otp_totp/totpdevice/{device.pk}/change/")
    deletable = page.locator("a.deletelink").count()
    assert deletable == (1 if who == "root" else 0)
    shot("superusers-device")

    page.goto(f"{base}/admin/auth/user/{me.pk}/change/")
    expect(page.locator("input[name=groups], select[name=groups]")).to_have_count(0)
    assert "admin" in page.locator("#content").inner_text()
    shot("own-account")

    page.goto(f"{base}/admin/hl7/")
    row = page.locator(f"#result_list tbody tr:has(a[href*='{feeds['dest']}'])").inner_text()
    assert "Last change: active: yes → no; port: 2575 → 2576" in row and "by night-admin" in row
    shot("hl7-destinations")
    page.goto(f"{base}/admin/hl7/{feeds['dest']}/delete/")
    history = page.locator("table.receiver-history").inner_text()
    assert "night-admin" in history and "port: 2575 → 2576" in history
    shot("hl7-delete")
    page.goto(f"{base}/admin/webhooks/")
    assert "Last change: active: yes → no" in page.locator(
        f"#result_list tbody tr:has(a[href*='{feeds['sub']}'])").inner_text()
    shot("webhooks")
    page.goto(f"{base}/admin/webhooks/{feeds['sub']}/delete/")
    assert "active: yes → no" in page.locator("table.receiver-history").inner_text()
    shot("webhook-delete")
    page.goto(f"{base}/admin/hisadmin/securityevent/")
    listed = page.locator("#result_list").inner_text()
    assert "feed changed" in listed and "HL7 destination" in listed
    shot("security-events")
    page.context.close()


def test_a_user_whose_password_was_reset_is_told_and_sent_to_change_it(
        live_server, browser, make_user, tmp_path) -> None:  # noqa: F811
    """The reset and the login once at 1024 px; the notice screenshot at 1024 and 1440 px."""
    shots = Path(os.environ.get("SCREENSHOT_DIR", tmp_path))
    make_user("office-admin", "admin")
    nurse = make_user("rn-reset", "nurse")
    TOTPDevice.objects.create(user=make_user("office-admin"), name="phone", confirmed=True)
    base = live_server.url
    admin_page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    login(admin_page, base, "office-admin")
    admin_page.goto(f"{base}/admin/auth/user/{nurse.pk}/password/")
    admin_page.fill("#id_password1", NEW_PASSWORD)
    admin_page.fill("#id_password2", NEW_PASSWORD)
    admin_page.click("input[type=submit]")
    admin_page.wait_for_selector("#content")
    admin_page.context.close()

    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    login(page, base, "rn-reset", NEW_PASSWORD)
    assert page.url.endswith("/admin/password_change/")
    assert "Your password was reset by office-admin" in page.locator("body").inner_text()
    at_widths(page, shots, "password-reset-notice", widths=NARROWEST_LAST)
    page.goto(f"{base}/admin/worklists/")
    assert page.url.endswith("/admin/password_change/")
    page.context.close()
