"""Edit conflicts and possible duplicates in a real browser: two clerks correct the same
patient; the second sees the conflict side by side, keeps what they typed and saves it on the
second submit (once, at 1024 px; the conflict's layout is checked at 1024 and 1440 px).
Registering a second "John Smith, 1970-01-01" shows the first before saving. Screenshots at
1024 and 1440 px go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.persistence import queries
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_second_of_two_editors_keeps_their_text_and_saves_it_on_the_second_submit(
    live_server,
    browser,  # noqa: F811
    make_user,
    his_store,
    reference_data,
    shots,
) -> None:
    pid = use_cases.register_patient(
        use_cases.RegisterPatient("Edda", "Editor", date(1966, 6, 6), sex="female"),
        UnitOfWork(his_store),
        actor=SYSTEM_ACTOR,
    ).patient_id
    make_user("desk-a", "clerk")
    make_user("desk-b", "clerk")
    base = live_server.url
    url = f"{base}/admin/patients/{pid}/demographics/"
    first = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
    second = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
    login(first, base, "desk-a")
    login(second, base, "desk-b")
    first.goto(url)
    second.goto(url)  # both forms carry the same version

    first.fill("#id_family_name", "Editor-Smith")
    first.click("input[type=submit]")
    first.wait_for_selector("text=Demographics saved.")

    second.fill("#id_given_name", "Edith")
    second.select_option("#id_sex", "other")
    second.click("input[type=submit]")
    second.wait_for_selector("#edit-conflict")
    assert "changed by someone else meanwhile" in second.inner_text(".errornote")
    assert second.input_value("#id_given_name") == "Edith"  # what was typed is kept
    assert second.input_value("#id_sex") == "other"
    family = second.locator("#edit-conflict tr.conflict-differs", has_text="Family name")
    assert family.locator(".conflict-yours").inner_text() == "Editor"
    assert family.locator(".conflict-now").inner_text() == "Editor-Smith"
    given = second.locator("#edit-conflict tr", has_text="Given name")
    assert given.locator(".conflict-yours").inner_text() == "Edith"
    assert given.locator(".conflict-now").inner_text() == "Edda"
    assert queries.patient(his_store, pid)["givenName"] == "Edda"  # nothing written yet
    for width in (1024, 1440):
        second.set_viewport_size({"width": width, "height": 900})
        assert second.evaluate("document.documentElement.scrollWidth") <= width, width
        second.screenshot(path=str(shots / f"edit-conflict-{width}.png"), full_page=True)
    second.set_viewport_size({"width": 1024, "height": 900})

    second.fill("#id_family_name", "Editor-Smith")  # they take the other clerk's change too
    second.click("input[type=submit]")
    second.wait_for_selector("text=Demographics saved.")
    stored = queries.patient(his_store, pid)
    assert (stored["givenName"], stored["familyName"], stored["sex"]) == (
        "Edith",
        "Editor-Smith",
        "other",
    )


def test_a_clerk_sees_a_possible_duplicate_before_registering(
    live_server,
    browser,  # noqa: F811
    make_user,
    his_store,
    reference_data,
    shots,
) -> None:
    john = use_cases.register_patient(
        use_cases.RegisterPatient("John", "Smith", date(1970, 1, 1), sex="male"),
        UnitOfWork(his_store),
        actor=SYSTEM_ACTOR,
    )
    make_user("desk", "clerk")
    base = live_server.url
    page = browser.new_context(viewport={"width": 1024, "height": 900}).new_page()
    login(page, base, "desk")
    page.goto(f"{base}/admin/patients/register/")
    page.fill("#id_given_name", "JOHN")
    page.fill("#id_family_name", "Smíth")
    page.fill("#id_birth_date", "1970-01-01")
    page.click("input[type=submit]")
    page.wait_for_selector("#possible-duplicates")
    candidate = page.locator("#possible-duplicates tr.duplicate-candidate")
    assert candidate.count() == 1
    assert john.mrn in candidate.inner_text()
    assert "SMITH, John" in candidate.inner_text()
    assert candidate.locator("a").get_attribute("href").endswith(f"/{john.patient_id}/")
    page.screenshot(path=str(shots / "register-duplicate-1024.png"), full_page=True)
    page.check("#id_confirm_not_duplicate")
    page.click("input[type=submit]")
    page.wait_for_selector("#mrn")
    assert john.patient_id not in page.url
