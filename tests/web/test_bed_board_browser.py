"""The bed board in a real browser, as a clerk and as a nurse: cards by state, a bed picked
on the board for an admission, a bed marked clean, and the board refreshing itself. Each
flow runs once, at 1024 px; what the board and the form show is checked, and screenshotted,
at 1024 and at 1440 px. Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary
directory)."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.tasks import follow_up
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _register(store, given: str, family: str, born: date, sex: str) -> str:
    return use_cases.register_patient(
        use_cases.RegisterPatient(given, family, born, sex=sex),
        UnitOfWork(store),
        actor=SYSTEM_ACTOR,
    ).patient_id


def _admit(store, pid: str, ward: str, bed: str) -> None:
    use_cases.admit_patient(
        use_cases.AdmitPatient(pid, "MED", ward, "Pneumonia", bed=bed),
        UnitOfWork(store),
        actor=SYSTEM_ACTOR,
    )


@pytest.fixture
def ward(his_store, reference_data) -> dict[str, str]:
    """MED-1: M101 occupied (allergic), M102 being cleaned, M103 occupied; a patient waiting."""
    allergic = _register(his_store, "Ingrid", "Allergisch", date(1944, 4, 4), "female")
    _admit(his_store, allergic, "MED-1", "M101")
    use_cases.add_allergy(
        use_cases.AddAllergy(allergic, "Latex", "Hives", "severe"),
        UnitOfWork(his_store),
        actor=SYSTEM_ACTOR,
    )
    leaving = _register(his_store, "Lars", "Leaving", date(1960, 6, 6), "male")
    _admit(his_store, leaving, "MED-1", "M102")
    use_cases.discharge_patient(
        use_cases.DischargePatient(leaving, "home"), UnitOfWork(his_store), actor=SYSTEM_ACTOR
    )
    _admit(
        his_store, _register(his_store, "Tom", "Thumb", date(1999, 9, 9), "male"), "MED-1", "M103"
    )
    for pid in (allergic, leaving):  # what the relay's follow-up tasks would do
        stream = his_store.read(keys.patient(pid), "stream")["docContents"]["seq"]
        for seq in range(1, stream + 1):
            follow_up(keys.patient(pid), seq)
    waiting = _register(his_store, "Wanda", "Waiting", date(1975, 5, 5), "female")
    return {"allergic": allergic, "waiting": waiting}


def _card(page, bed: str):
    return page.locator(f"#bed-{bed}")



def test_a_clerk_admits_to_a_bed_picked_on_the_board(
    live_server,
    browser,  # noqa: F811
    make_user,
    ward,
    shots,
) -> None:
    make_user("clerk", "clerk")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    login(page, base, "clerk")
    page.goto(f"{base}/admin/wards/")
    page.click("text=Medical Ward 1")
    for width in each_width(page):
        assert _card(page, "M101").get_attribute("data-state") == "occupied", width
        assert "ALLERGISCH, Ingrid" in _card(page, "M101").inner_text(), width
        assert "Allergies" in _card(page, "M101").locator(".bed-flag").inner_text(), width
        assert _card(page, "M102").get_attribute("data-state") == "cleaning", width
        assert "LEAVING" not in page.inner_text("#bed-cards"), width
        assert "2 occupied" in " ".join(page.inner_text("#bed-metrics").split()), width
        page.screenshot(path=str(shots / f"bed-board-clerk-{width}.png"), full_page=True)

    page.goto(f"{base}/admin/patients/{ward['waiting']}/admit/")
    page.select_option("#id_department_id", "SURG")  # htmx re-renders the wards and beds
    page.wait_for_selector("#id_ward_id option[value='SURG-1']", state="attached")
    page.select_option("#id_department_id", "MED")
    page.wait_for_selector("#id_ward_id option[value='MED-1']", state="attached")
    assert page.input_value("#id_ward_id") == "MED-1"
    offered = page.eval_on_selector_all("#id_bed option", "os => os.map(o => o.value)")
    assert "M101" not in offered and "M102" not in offered and "M104" in offered
    page.fill("#id_reason", "Community-acquired pneumonia")
    for width in each_width(page):
        page.screenshot(path=str(shots / f"bed-admit-form-{width}.png"), full_page=True)
    page.click("#pick-on-board")
    for width in each_width(page):
        assert "Choose a free bed" in page.inner_text("#bed-pick"), width
        assert _card(page, "M104").locator("a.button").is_visible(), width
    _card(page, "M104").locator("a.button").click()
    assert page.input_value("#id_bed") == "M104"
    page.fill("#id_reason", "Community-acquired pneumonia")
    page.click("input[name=_save]")
    assert "Admitted." in page.inner_text("ul.messagelist")
    page.goto(f"{base}/admin/wards/MED-1/")
    assert "WAITING, Wanda" in _card(page, "M104").inner_text()


def test_a_nurse_marks_a_bed_clean_and_sees_the_board_change(
    live_server,
    browser,  # noqa: F811
    make_user,
    ward,
    his_store,
    shots,
) -> None:
    make_user("nurse", "nurse")
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900}).new_page()
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith(base) and not r.url.startswith("data:")
            else None
        ),
    )
    login(page, base, "nurse")
    page.goto(f"{base}/admin/wards/MED-1/")
    for width in each_width(page):
        page.screenshot(path=str(shots / f"bed-board-nurse-{width}.png"), full_page=True)
    _card(page, "M102").locator("input[type=submit]").click()
    assert "Bed M102 is clean and free again." in page.inner_text("ul.messagelist")
    assert _card(page, "M102").get_attribute("data-state") == "free"
    assert "1 being cleaned" not in page.inner_text("#bed-metrics")

    # Someone admits a patient elsewhere: the open board shows it within a refresh or two.
    _admit(his_store, ward["waiting"], "MED-1", "M105")
    page.wait_for_selector('#bed-M105[data-state="occupied"]', timeout=10_000)
    assert "WAITING, Wanda" in _card(page, "M105").inner_text()
    assert "updated" in page.inner_text(".freshness")
    for width in each_width(page):
        assert "WAITING, Wanda" in _card(page, "M105").inner_text(), width
        page.screenshot(path=str(shots / f"bed-board-nurse-after-{width}.png"),
                        full_page=True)
    assert outside == []  # every asset is served by the app
