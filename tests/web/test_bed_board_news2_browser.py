"""The bed board's NEWS2 badges in a real browser, as a nurse and as the nurse in charge:
each occupied card says its latest score in words and in its risk colour, "not escalated",
"latest set incomplete" and "overdue" where so, and a set recorded while the board is open
reaches its card through the follow-up task, on the board's own refresh. The flow runs once
for each role, at 1024 px; the badges are checked, and screenshotted, at 1024 and at 1440 px.
Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from patients import use_cases
from patients.tasks import follow_up
from patients.use_cases import observations as obs
from tests.a11y.test_axe_pages import AXE, BLOCKING, RUN_AXE
from tests.web.browser_shots import WIDTHS, each_width
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NURSE = Actor(id="81", username="nurse.b", display_name="Nurse B", roles=("nurse",))
HIGH = {"respiration_rate": "26", "spo2": "93", "on_oxygen": False, "systolic_bp": "104",
        "pulse": "112", "consciousness": "A", "temperature": "38,4"}  # NEWS2 9: high
NOUGHT = {"respiration_rate": 16, "spo2": 97, "on_oxygen": False, "systolic_bp": 124,
          "pulse": 72, "consciousness": "A", "temperature": 36.8}  # NEWS2 0: 12-hourly
LOCAL = timezone(timedelta(hours=1))  # a monitor's or a form's offset, not UTC


def _patient(store, given: str, family: str, bed: str) -> str:
    pid = use_cases.register_patient(
        use_cases.RegisterPatient(given, family, date(1950, 3, 3), sex="female"),
        UnitOfWork(store), actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Sepsis", bed=bed),
                            UnitOfWork(store), actor=SYSTEM_ACTOR)
    return pid


def _observe(store, pid: str, values: dict, ago: timedelta) -> dict:
    taken = (datetime.now(UTC) - ago).astimezone(LOCAL).isoformat()  # with microseconds
    saved = obs.record_observations(obs.RecordObservations(pid, values, taken),
                                    UnitOfWork(store), actor=NURSE)
    seq = store.read(keys.patient(pid), "stream")["docContents"]["seq"]
    follow_up(keys.patient(pid), seq)  # what the relay's follow-up task does
    return saved


@pytest.fixture
def ward(his_store, reference_data) -> dict[str, str]:
    """MED-1: M101 high and not escalated; M102 scored 0 thirteen hours ago (overdue by an
    hour); M103 a low score, then a partial set; M104 nothing yet."""
    high = _patient(his_store, "Hedda", "Hochrisiko", "M101")
    _observe(his_store, high, HIGH, timedelta(minutes=5))
    quiet = _patient(his_store, "Øyvind", "Overdue", "M102")
    # The stay began before the set: the admission is back-dated by taking the set late.
    _observe(his_store, quiet, NOUGHT, timedelta(hours=13, minutes=1))
    partial = _patient(his_store, "Zoë", "Partial", "M103")
    _observe(his_store, partial, {**NOUGHT, "pulse": 95}, timedelta(minutes=30))
    _observe(his_store, partial, {"pulse": 101, "comment": "Monitor lead off — re-check 🙂"},
             timedelta(0))
    fresh = _patient(his_store, "Nils", "Neu", "M104")
    return {"high": high, "quiet": quiet, "partial": partial, "fresh": fresh}


def _badge(page, bed: str) -> str:
    return " ".join(page.inner_text(f"#bed-{bed} .bed-news2").split())



@pytest.mark.parametrize("role", ["nurse", "charge_nurse"])
def test_the_board_shows_each_beds_news2_in_words_and_colour(
    live_server, browser, make_user, ward, his_store, role, shots,  # noqa: F811
) -> None:
    make_user(role, *({"nurse": ("nurse",), "charge_nurse": ("charge_nurse", "nurse")}[role]))
    base = live_server.url
    page = browser.new_context(viewport={"width": WIDTHS[0], "height": 900},
                               bypass_csp=True).new_page()  # axe is injected below
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url)
            if not r.url.startswith(base) and not r.url.startswith("data:") else None)
    login(page, base, role)
    page.goto(f"{base}/admin/wards/MED-1/")

    if AXE.exists():
        page.add_script_tag(path=str(AXE))
    for width in each_width(page):
        assert _badge(page, "M101").startswith("NEWS2 9 High risk · not escalated"), width
        colour = page.eval_on_selector("#bed-M101 .news2-badge",
                                       "e => getComputedStyle(e).backgroundColor")
        assert colour == "rgb(179, 0, 0)", width  # the chart's high-risk red
        assert "NEWS2 0 Low risk" in _badge(page, "M102"), width
        assert "Observations overdue by 1 h" in _badge(page, "M102"), width
        assert "NEWS2 1 Low risk · latest set incomplete" in _badge(page, "M103"), width
        assert "Next set due" in _badge(page, "M103"), width
        assert "No score yet" in _badge(page, "M104"), width
        assert "high" not in _badge(page, "M104").lower(), width
        page.screenshot(path=str(shots / f"bed-board-news2-{role}-{width}.png"),
                        full_page=True)
        if AXE.exists():  # the badges in every state, checked as the other pages are
            blocking = [v for v in page.evaluate(RUN_AXE) if v["impact"] in BLOCKING]
            assert blocking == [], width

    # A set recorded while the board is open reaches the card on its own refresh.
    _observe(his_store, ward["fresh"], HIGH, timedelta(seconds=1))
    page.wait_for_function(
        "() => (document.querySelector('#bed-M104 .bed-news2') || {}).innerText"
        "?.includes('NEWS2 9')", timeout=15_000)
    assert "not escalated" in _badge(page, "M104")
    for width in each_width(page):
        page.screenshot(path=str(shots / f"bed-board-news2-{role}-after-{width}.png"),
                        full_page=True)
    assert outside == []  # every asset is served by the app
