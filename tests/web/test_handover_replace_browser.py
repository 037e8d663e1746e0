"""Handover in a real browser when one is already written for the shift: reopening one's own
shows its text; a colleague's is shown and replaced only after a confirmation naming its
author, and stays in the chart's history; acknowledgement still goes to someone other than
the author of the version on record. Screenshots at 1024 and 1440 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.browser_shots import at_widths, named_user, signed_in
from tests.web.test_browser_flow import browser, login  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
def _write(page, situation: str) -> None:
    page.fill("#id_situation", situation)
    page.fill("#id_background", "Pneumonia, day 3 — übergabe")
    page.fill("#id_assessment", "Improving; SpO₂ 95 %")
    page.fill("#id_recommendation", "Try weaning oxygen at 10:00")


def test_a_colleagues_handover_is_opened_and_replaced_only_on_purpose(
        live_server, browser, make_user, admit, shots) -> None:  # noqa: F811
    pid = admit("Handwell", bed="M104")
    named_user(make_user, "maria", "Maria", "Charge", "charge_nurse", "nurse")
    named_user(make_user, "dana", "Dana", "Day", "nurse")
    base = live_server.url
    ctx, page = signed_in(browser, base, "maria")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#write-handover")
    _write(page, "Stable on oxygen 2 L")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector(".messagelist")
    page.click("#write-handover")  # her own: opened with its text, to correct it
    assert page.input_value("#id_situation") == "Stable on oxygen 2 L"
    expect(page.locator("#id_confirm_replace")).to_have_count(0)
    assert "Your handover for this shift" in page.inner_text("#content")
    at_widths(page, shots, "handover-own-reopened")
    page.fill("#id_situation", "Stable on oxygen 1 L")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector(".messagelist")
    ctx.clear_cookies()

    login(page, base, "dana")
    page.goto(f"{base}/admin/patients/{pid}/")
    page.click("#write-handover")
    assert page.input_value("#id_situation") == "Stable on oxygen 1 L"  # not a blank form
    assert "Maria Charge's handover" in page.inner_text("#handover-on-record")
    assert page.inner_text("label[for=id_confirm_replace]").startswith(
        "Replace Maria Charge's handover")
    page.fill("#id_situation", "Desaturating at night, on 4 L")
    page.click("input[type=submit][name=_save]")  # not confirmed: asked, text kept
    page.wait_for_selector(".errorlist")
    assert "Tick to confirm that yours replaces Maria Charge's handover" in page.inner_text(
        ".field-confirm_replace")
    assert page.input_value("#id_situation") == "Desaturating at night, on 4 L"
    at_widths(page, shots, "handover-replace-asked")
    page.check("#id_confirm_replace")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector(".messagelist")
    note = page.locator("#handovers .handover-note").first
    assert "Desaturating at night" in note.inner_text()
    assert "Written by Dana Day" in note.inner_text()
    expect(note.locator("input[type=submit]")).to_have_count(0)  # hers now: not acknowledged by her
    note.locator(".handover-earlier summary").click()
    earlier = note.locator(".handover-earlier").inner_text()
    assert "Written by Maria Charge" in earlier and "Stable on oxygen 1 L" in earlier
    assert "Stable on oxygen 2 L" in earlier  # her own correction's first text too
    note.scroll_into_view_if_needed()
    at_widths(page, shots, "handover-replaced-chart")
    ctx.clear_cookies()

    login(page, base, "maria")  # the first note's author may acknowledge the replacement
    page.goto(f"{base}/admin/patients/{pid}/")
    page.locator("#handovers .handover-note").first.locator("input[type=submit]").click()
    page.wait_for_selector(".messagelist")
    assert "Acknowledged by Maria Charge" in page.inner_text("#handovers")
    page.click("#write-handover")  # taken over: it says so before anyone types
    assert "acknowledged by Maria Charge" in page.inner_text("#handover-taken")
    ctx.close()


def test_a_colleagues_handover_saved_meanwhile_is_not_overwritten(
        live_server, browser, make_user, admit, team) -> None:  # noqa: F811
    """Both open an empty form; the colleague saves first: the second save is asked about
    it and keeps what was typed."""
    pid = admit("Racewell", bed="M105")
    named_user(make_user, "dana", "Dana", "Day", "nurse")
    base = live_server.url
    ctx, page = signed_in(browser, base, "dana", width=1440)
    page.goto(f"{base}/admin/patients/{pid}/handovers/new/")
    assert page.input_value("#id_situation") == ""
    _write(page, "Comfortable; pain 2/10")
    sbar = {"situation": "Febrile 38,6 °C at 13:00", "background": "Pneumonia",
            "assessment": "Worse", "recommendation": "Blood cultures"}
    assert team["nurse"].post(f"/api/v1/patients/{pid}/handovers", sbar,
                              content_type="application/json").status_code == 201
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector(".errorlist")
    assert page.input_value("#id_situation") == "Comfortable; pain 2/10"
    assert "Febrile 38,6 °C" in page.inner_text("#handover-on-record")
    page.check("#id_confirm_replace")
    page.click("input[type=submit][name=_save]")
    page.wait_for_selector(".messagelist")
    assert "Comfortable; pain 2/10" in page.inner_text("#handovers .handover-note")
    ctx.close()
