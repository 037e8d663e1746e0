"""`make run` as a ward uses it: the launcher itself (light mode: gunicorn, ONE Celery worker
with the change-feed relay inside it, the embedded Redis and store, the demo data and
logins), driven in chromium by the demo clerk, clinician and nurse through the real forms.
Nothing in this process projects anything: every list below was kept by the launcher's own
worker, and each change reaches a list the nurse already has open, on the list's own refresh.

A clerk registers a patient with a name that needs Unicode and admits them to the demo
nurse's ward; the nurse's open Admitted list shows them. A clinician prescribes a first dose
now; the nurse's Medications due shows it, she gives it from the chart, and her open Active
orders shows the order in progress. The clerk discharges; the Admitted list drops the
patient and the bed goes to cleaning on the bed board. Screenshots of the nurse's lists at
1024 and 1440 px go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from playwright.sync_api import expect

from tests.integration.processes import WAIT_SCALE, free_port, start, stop, wait_for
from tests.web.test_browser_flow import (  # noqa: F401  (the browser fixture)
    browser,
    choose_ward,
    fill_prescription,
    login,
    record_no_known_allergies,
    register_in_form,
)

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(240)]

PASSWORDS = {"clerk": "clerk-demo-2026", "clinician": "clinician-demo-2026",
             "nurse": "nurse-demo-2026"}
WARD = "MED-1"  # the demo nurse's ward (her beds M103 and M104 this shift)
FAMILY, GIVEN = "Ngāti-Łukasiewicz", "Zoë Åse"
SEEN = 30_000 * WAIT_SCALE  # ms: the lists refresh every 2 s; a busy CI machine is slower


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m hisadmin.launcher`` as `make run` starts it, in a data directory of its
    own; stopped with SIGTERM to its group (the launcher stops its children, Redis last)."""
    base: Path = tmp_path_factory.mktemp("make-run")
    port = str(free_port())
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "EMBEDDED_STORE_PATH", "EMBEDDED_VIEWS_PATH",
                        "DJANGO_SETTINGS_MODULE", "HIS_PROCESSES")}
    env.update(PORT=port, HIS_VAR_DIR=str(base / "var"), PYTHONUNBUFFERED="1")
    proc = start([sys.executable, "-m", "hisadmin.launcher"], env, base / "launcher.log")
    url = f"http://127.0.0.1:{port}"
    http = requests.Session()
    http.trust_env = False

    def up() -> bool:
        assert proc.poll() is None, (base / "launcher.log").read_text(errors="replace")
        try:
            return http.get(f"{url}/healthz", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_for(up, 120, interval=0.5, what="make run's web and worker")
        yield url
    finally:
        stop(proc, timeout=30)
        log = (base / "launcher.log").read_text(errors="replace")
        assert "Traceback" not in log, log[-4000:]


def _as(browser: Any, base: str, user: str, width: int = 1280) -> Any:  # noqa: F811
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    login(page, base, user, PASSWORDS[user])
    return page


def _shoot(page: Any, shots: Path, name: str) -> None:
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"make-run-{name}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        # Every column in sight beside the menu, MRNs whole: nothing scrolled out of view.
        spill = page.eval_on_selector(
            "#result_list", "t => t.scrollWidth - t.parentElement.clientWidth")
        assert spill <= 1, f"{name} at {width} px: {spill} px scrolled out of sight"


def _row(page: Any) -> Any:
    return page.locator("#result_list tbody tr", has_text=FAMILY.upper())


def test_a_stay_reaches_the_nurses_open_lists_through_make_runs_own_worker(
        launched: str, browser: Any, tmp_path: Path) -> None:  # noqa: F811
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    base = launched
    nurse = _as(browser, base, "nurse")
    nurse.goto(f"{base}/admin/worklists/admitted/?department=MED&ward={WARD}")
    expect(_row(nurse)).to_have_count(0)

    # The clerk registers and admits, through the forms.
    clerk = _as(browser, base, "clerk")
    chart = register_in_form(clerk, base, GIVEN, FAMILY, "1958-03-29")
    choose_ward(clerk, "MED", WARD)
    beds = [v for v in clerk.eval_on_selector_all("#id_bed option", "os => os.map(o => o.value)")
            if v]
    assert beds, "no free bed on the demo nurse's ward"
    bed = beds[0]
    clerk.select_option("#id_bed", bed)
    clerk.fill("#id_reason", "Community-acquired pneumonia, «CURB-65» 2")
    clerk.click("input[type=submit]")
    clerk.wait_for_selector("text=Admitted.")

    # On the nurse's open list, on its own refresh: the page is not reloaded.
    expect(_row(nurse)).to_have_count(1, timeout=SEEN)
    assert bed in _row(nurse).inner_text()
    assert "stopped" not in nurse.inner_text(".lag")
    _shoot(nurse, shots, "admitted")

    # The clinician: no known allergies, then a first dose now.
    doctor = _as(browser, base, "clinician")
    doctor.goto(chart)
    record_no_known_allergies(doctor)
    doctor.click("#prescribe-link")
    fill_prescription(doctor, "AMOX", "500", "PO", "TDS", unit="mg", first_dose="now")
    doctor.click("input[type=submit]")
    doctor.wait_for_selector("text=order placed")

    # The nurse: the order ready, its dose due on her ward's list.
    orders = nurse.context.new_page()
    orders.goto(f"{base}/admin/worklists/orders/?department=MED")
    nurse.goto(chart)
    nurse.click("#orders button[value=ready]")
    nurse.wait_for_selector("text=Order updated.")
    nurse.goto(f"{base}/admin/worklists/medications-due/?ward={WARD}")
    expect(_row(nurse)).to_have_count(1, timeout=SEEN)
    assert re.search(r"Amoxicillin", _row(nurse).inner_text())
    _shoot(nurse, shots, "medications-due")
    expect(_row(orders)).to_have_count(1, timeout=SEEN)

    # She gives it from the chart; her open Active orders shows it in progress on its own.
    nurse.goto(chart)
    nurse.click("#orders .administer-link")
    nurse.fill("#id_dose", "500,0")  # a decimal comma, as a keyboard set to it types
    nurse.select_option("#id_unit", "mg")
    nurse.click("input[type=submit]")
    said = nurse.locator("text=Dose given recorded").first.inner_text()
    assert re.search(r"Dose given recorded: 500 mg at \d\d:\d\d", said), said  # not 5000
    expect(_row(orders)).to_contain_text("In progress", timeout=SEEN)
    _shoot(orders, shots, "active-orders")

    # The clerk discharges (the confirmation says what it will do); the lists follow.
    nurse.goto(f"{base}/admin/worklists/admitted/?department=MED&ward={WARD}")
    expect(_row(nurse)).to_have_count(1)
    clerk.goto(chart)
    clerk.select_option("#id_disposition", "home")
    clerk.click("#admissions input[type=submit]")
    clerk.wait_for_selector("#discharge-orders")
    clerk.click("#discharge-submit")
    clerk.wait_for_selector("text=Discharged (Home).")
    expect(_row(nurse)).to_have_count(0, timeout=SEEN)
    expect(_row(orders)).to_have_count(0, timeout=SEEN)
    nurse.goto(f"{base}/admin/wards/{WARD}/")
    expect(nurse.locator(f"#bed-{bed}")).to_have_attribute("data-state", "cleaning",
                                                          timeout=SEEN)


def test_its_pages_load_nothing_from_another_host(launched: str, browser: Any) -> None:  # noqa: F811
    nurse = _as(browser, launched, "nurse")
    hosts: set[str] = set()
    nurse.on("request", lambda r: hosts.add(r.url.split("/")[2]))
    for path in ("/admin/", f"/admin/worklists/admitted/?department=MED&ward={WARD}",
                 f"/admin/worklists/medications-due/?ward={WARD}"):
        nurse.goto(f"{launched}{path}")
        nurse.wait_for_load_state("networkidle")
    assert hosts == {launched.split("/")[2]}

