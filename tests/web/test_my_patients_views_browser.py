"""My patients as a nurse, in a real browser, read from the views alone: the beds come from
the ward's projected shift row, the allergies' names and who took over the shift's note
from the patients' rows; nothing of the record is read while the page is served.
Screenshots at 1024 and 1440 px."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from patients.domain.shifts import Nurse, Shift, ShiftHours
from patients.persistence import assignments, handovers, queries
from patients.use_cases.assignments import AssignNurses, assign_nurses
from patients.use_cases.beds import ward_entry
from patients.use_cases.handovers import (
    AcknowledgeHandover,
    WriteHandover,
    acknowledge_handover,
    write_handover,
)
from tests.web.browser_shots import at_widths, named_user, signed_in
from tests.web.test_browser_flow import browser  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
J = "application/json"
SBAR = {"situation": "Stable overnight", "background": "Pneumonia, day 2",
        "assessment": "Improving", "recommendation": "Wean oxygen to 1 L"}
CHARGE = Actor(id="1", username="charge", display_name="Maria Charge", roles=("charge_nurse",))


def test_my_patients_reads_its_views_alone(live_server, browser, make_user, team, admit,  # noqa: F811
                                           his_store, drain_worklists, shots,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    allergic = admit("Ní Bhriain-Müller", given="Zoë", bed="M101", allergies_asked=False)
    for body in ({"allergen_code": "LATEX", "severity": "mild"},
                 {"allergen_code": "PENICILLINS", "reaction": "Anaphylaxis",
                  "severity": "severe", "criticality": "high"}):
        assert team["nurse"].post(f"/api/v1/patients/{allergic}/allergies", body,
                                  content_type=J).status_code == 200
    admit("O'Brien", given="Seán", bed="M102")
    dana = named_user(make_user, "dana", "Dana", "Day", "nurse")
    named_user(make_user, "nico", "Nico", "Night", "nurse")
    tz = timezone.get_current_timezone()
    shift = Shift.at(datetime.now(UTC), ShiftHours.of_ward(ward_entry(his_store, "MED-1")), tz)
    # this shift's note (admitted now: the last shift was before the stay), taken over
    write_handover(WriteHandover(allergic, SBAR, shift), UnitOfWork(his_store), actor=CHARGE)
    acknowledge_handover(AcknowledgeHandover(allergic, shift.name), UnitOfWork(his_store),
                         actor=Actor(str(dana.pk), "dana", "Dana Day"))
    me = Nurse(str(dana.pk), "Dana Day")
    assign_nurses(AssignNurses("MED-1", shift, {"M101": me, "M102": me}),
                  UnitOfWork(his_store), actor=CHARGE)
    drain_worklists()  # the relay's work: the patients' and the ward's events

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("My patients read the record, not its views")

    for module, name in ((assignments, "read_sheet"), (queries, "patient"),
                         (handovers, "latest"), (handovers, "of_shift")):
        monkeypatch.setattr(module, name, refuse)  # the live server runs in this process

    base = live_server.url
    ctx, page = signed_in(browser, base, "dana")
    page.goto(f"{base}/admin/worklists/my-patients/")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2
    first, second = rows.nth(0).inner_text(), rows.nth(1).inner_text()
    assert "NÍ BHRIAIN-MÜLLER, Zoë" in first
    assert "Allergies: Penicillins, Latex" in first  # named, the severe one first
    assert "Acknowledged by Dana Day" in first
    assert "O'BRIEN, Seán" in second and "No known allergies" in second
    assert "Acknowledged" not in second
    freshness = page.inner_text(".freshness")
    assert "updated" in freshness and ("behind" in freshness or "up to date" in freshness)
    # how fresh, as every worklist says it
    at_widths(page, shots, "my-patients-from-views")
    # At 1024 px the row's actions are past the table's right edge: the table scrolls to them.
    page.set_viewport_size({"width": 1024, "height": 900})
    write = page.locator("#result_list a.button", has_text="Write handover")
    assert write.count() == 2
    write.first.scroll_into_view_if_needed()
    box = write.first.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1024

    # Reassigned: the bed leaves her list on the next refresh, from the ward's event alone.
    monkeypatch.undo()
    assign_nurses(AssignNurses("MED-1", shift, {"M101": me,
                                                "M102": Nurse("nico-id", "Nico Night")}),
                  UnitOfWork(his_store), actor=CHARGE)
    drain_worklists()
    page.reload()
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    assert "O'BRIEN" not in page.inner_text("#result_list")
    at_widths(page, shots, "my-patients-reassigned")
    ctx.close()
