"""Records staff merge a duplicate registration in a real browser: the possible duplicates
with why, a pair that cannot be merged (contradicting allergy statuses) said to be two people,
the merge reviewed side by side and confirmed, the retired record's chart, and the merge
undone. The flow runs once, at 1024 px; what each page shows is checked, and screenshotted, at
1024 and at 1440 px. Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary
directory)."""

from __future__ import annotations

from datetime import date

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.persistence import duplicates
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _register(store, given: str, family: str, born: date, sex: str) -> str:
    return use_cases.register_patient(
        use_cases.RegisterPatient(given, family, born, sex=sex, confirm_not_duplicate=True),
        UnitOfWork(store), actor=SYSTEM_ACTOR).patient_id


@pytest.fixture
def pairs(his_store, reference_data) -> dict[str, str]:
    """Anna Müller admitted with a severe penicillin allergy and a lab test, registered again
    as "MUELLER, anna" with a latex allergy; Zoë O'Brien with no known allergies, registered
    again as "OBRIEN, Zoe" with an active allergy (a conflict a clinician resolves)."""
    uow = lambda: UnitOfWork(his_store)  # noqa: E731
    anna = _register(his_store, "Anna", "Müller", date(1980, 5, 1), "female")
    use_cases.admit_patient(use_cases.AdmitPatient(anna, "MED", "MED-1", "Pneumonia",
                                                   bed="M104"), uow(), actor=SYSTEM_ACTOR)
    use_cases.add_allergy(use_cases.AddAllergy(anna, "Penicillin", "Anaphylaxis", "severe"),
                          uow(), actor=SYSTEM_ACTOR)
    use_cases.place_order(use_cases.PlaceOrder(anna, "lab", test_code="CBC"), uow(),
                          actor=SYSTEM_ACTOR)
    again = _register(his_store, "anna", "MUELLER", date(1980, 5, 1), "female")
    use_cases.add_allergy(use_cases.AddAllergy(again, "Latex", "Hives", "mild"), uow(),
                          actor=SYSTEM_ACTOR)
    zoe = _register(his_store, "Zoë", "O'Brien", date(1992, 12, 24), "female")
    use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(zoe), uow(),
                                        actor=SYSTEM_ACTOR)
    zoe_again = _register(his_store, "Zoe", "OBRIEN", date(1992, 12, 24), "female")
    use_cases.add_allergy(use_cases.AddAllergy(zoe_again, "Peanut", "Swelling", "moderate"),
                          uow(), actor=SYSTEM_ACTOR)
    for pid in (anna, again, zoe, zoe_again):  # the relay's follow-up of each registration
        duplicates.enter(his_store, pid)
    return {"anna": anna, "again": again, "zoe": zoe, "zoe_again": zoe_again}


def test_records_staff_merge_a_duplicate_and_undo_it(live_server, browser,  # noqa: F811
                                                     make_user, pairs, shots) -> None:
    make_user("records", "clerk")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)
    login(page, base, "records")
    page.locator("#content a", has_text="Possible duplicates").first.click()  # the home page
    listed = page.locator("section.pair")
    assert listed.count() == 2
    anna_pair = page.locator("section.pair", has_text="MÜLLER, Anna")
    for width in each_width(page):
        assert "Similar names: " in anna_pair.inner_text(), width
        assert "Same birth date (1 May 1980) and sex (female)" in anna_pair.inner_text(), width
        page.screenshot(path=str(shots / f"duplicates-{width}.png"), full_page=True)

    # Zoë's two records contradict on allergies: the merge page says so, with no form.
    zoe_pair = page.locator("section.pair", has_text="Zoë")
    zoe_pair.locator("a.pair-merge").click()
    conflict = page.locator("#merge-conflicts")
    expect(page.locator("#merge-form")).to_have_count(0)
    for width in each_width(page):
        assert "Allergy statuses contradict" in conflict.inner_text(), width
        assert "(for a clinician)" in conflict.inner_text(), width
        page.screenshot(path=str(shots / f"merge-conflict-{width}.png"), full_page=True)
    # They turn out to be two people (cousins): said with a reason, then not listed again.
    page.go_back()
    page.locator("section.pair", has_text="Zoë").locator("a.pair-not-same").click()
    page.click("#not-same-submit")
    page.fill("#id_reason", "Cousins: different addresses and GPs")
    for width in each_width(page):
        assert "This field is required." in page.inner_text("#not-same-form"), width
        page.screenshot(path=str(shots / f"not-same-person-{width}.png"), full_page=True)
    page.click("#not-same-submit")
    assert "are not the same person" in page.inner_text("ul.messagelist")
    expect(page.locator("section.pair")).to_have_count(1)

    # Anna: the admitted record survives (swap if the list offered the other first).
    page.locator("section.pair", has_text="MÜLLER, Anna").locator("a.pair-merge").click()
    if page.get_attribute("#survivor-head", "data-patient") != pairs["anna"]:
        page.click("#merge-swap")
    assert "MÜLLER, Anna" in page.text_content("#survivor-head")
    assert page.locator("#row-stays").count() == 1 and page.locator("#row-orders").count() == 1
    page.fill("#id_reason", "Registered again at the front desk: same address and phone")
    page.check("#id_confirm")
    for width in each_width(page):
        will = page.inner_text("#row-allergies td.will")
        assert "Penicillin" in will and "Latex" in will and "from " in will, width
        page.screenshot(path=str(shots / f"merge-review-{width}.png"), full_page=True)
    retired_mrn = page.text_content("#retired-head").strip().rsplit("(", 1)[1].rstrip(")")
    page.click("#merge-submit")
    assert f"/admin/patients/{pairs['anna']}/" in page.url
    assert "within a day" in page.inner_text("ul.messagelist")
    for width in each_width(page):
        assert "Latex" in page.inner_text("#patient-banner"), width
        page.screenshot(path=str(shots / f"merge-survivor-{width}.png"), full_page=True)

    page.goto(f"{base}/admin/patients/{pairs['again']}/")
    for action in ("#demographics-link", "#admit-link", "#allergy-link", "#wristband-link"):
        expect(page.locator(action), action).to_have_count(0)
    for width in each_width(page):
        notice = page.inner_text("#merged-into")
        assert "Merged into" in notice and retired_mrn not in notice, width
        page.screenshot(path=str(shots / f"merge-retired-{width}.png"), full_page=True)
    page.click("#merged-into-link")
    assert f"/admin/patients/{pairs['anna']}/" in page.url

    page.goto(f"{base}/admin/patients/{pairs['again']}/")
    page.click("#undo-merge")
    page.fill("#id_reason", "Merged by mistake: a different Anna")
    for width in each_width(page):
        page.screenshot(path=str(shots / f"unmerge-{width}.png"), full_page=True)
    page.click("#unmerge-submit")
    assert "Merge undone" in page.inner_text("ul.messagelist")
    expect(page.locator("#merged-into")).to_have_count(0)
    expect(page.locator("#demographics-link")).to_have_count(1)
    assert outside == []
