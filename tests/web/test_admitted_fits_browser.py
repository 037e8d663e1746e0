"""The Admitted patients list at 1024 px, where a ward's desk screens often are: every column
(Attending and Stay among them) shows beside the menu without scrolling the table sideways,
for a patient with a long double-barrelled name and an attending with one too; at 1440 px
likewise; and the menu still holds its longest entry on one line. Screenshots go to
``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from tests import worklist_data as data
from tests.web.browser_shots import WIDTHS, signed_in
from tests.web.test_browser_flow import browser  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# How far the table sticks out of its scrolling box (0: it fits).
HIDDEN = "() => { const b = document.querySelector('#worklist .results');" \
         " return b.scrollWidth - b.clientWidth; }"
# Menu entries wrapped onto a second line.
WRAPPED_MENU = "() => [...document.querySelectorAll('#nav-sidebar th a, #nav-sidebar td a')]" \
               ".filter(a => a.getClientRects().length > 1).map(a => a.textContent.trim())"


@pytest.mark.parametrize("role", ["nurse", "clinician", "clerk"])
def test_every_column_of_admitted_patients_shows_at_1024_px(
        live_server, browser, his_store, reference_data, make_user, drain_worklists,  # noqa: F811
        shots: Path, role: str) -> None:
    make_user(f"fit-{role}", role)
    pid = data.register(his_store, "Þórsdóttir-Ødegård", "Ása-Björk")
    use_cases.admit_patient(use_cases.AdmitPatient(
        patient_id=pid, department_id="CARD", ward_id="CARD-A", reason="Chest pain",
        attending_id="77", attending_name="Ngozi Adebayo-Okonkwo"),
        UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    drain_worklists()
    ctx, page = signed_in(browser, live_server.url, f"fit-{role}")
    page.goto(f"{live_server.url}/admin/worklists/admitted/?department=CARD")
    page.wait_for_selector("#result_list tbody tr")
    headers = [h.strip() for h in page.locator("#result_list thead th").all_inner_texts()]
    assert any(h.startswith("ATTENDING") or h.startswith("Attending") for h in headers)
    row = page.inner_text("#result_list tbody tr")
    assert "Ngozi Adebayo-Okonkwo" in row and "Þórsdóttir-Ødegård".upper() in row.upper()
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(shots / f"admitted-fits-{role}-{width}.png"))
        assert page.evaluate(HIDDEN) <= 0, (width, "the table scrolls sideways")
        assert page.evaluate(WRAPPED_MENU) == [], width
    ctx.close()
