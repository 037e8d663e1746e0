"""The site's chrome in a real browser: the API docs with no network, the error pages, each
role's chart actions, and the chart heading at 1024-1920 px. Each flow runs once, at its
narrowest width; the pages it looks at are checked and screenshot at each of its widths.
Screenshots go to ``$SCREENSHOT_DIR`` (default: the test's temporary directory)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.policy import allows
from patients import use_cases
from tests.web.browser_shots import WIDTHS, at_widths
from tests.web.test_browser_flow import browser, login  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROLES = ("clerk", "clinician", "nurse")
NARROWEST_LAST = WIDTHS[::-1]  # screenshots the widest first: the flow goes on at the narrowest
HEADING_WIDTHS = (1024, 1280, 1440, 1920)

# The chart's action controls and the policy action each one takes.
CHART_ACTIONS = {
    "#demographics-link": "update_demographics",
    "#admit-link": "admit",
    "#transfer-link": "transfer",
    '#discharge-link, input[value="Discharge"], a[href$="/discharge/"]': "discharge",
    "#allergy-link, #nka-link": "add_allergy",
    ".allergy-remove-link": "remove_allergy",
    "#prescribe-link, #imaging-link, #lab-link": "place_order",
    "button[value=ready], button[value=start], button[value=complete], .results-link":
        "progress_order",
    "button[value=cancel], a.cancel-link, a[href$='/cancel/']": "cancel_order",
    "button[value=assign], button[value=unassign]": "assign_order",
    ".administer-link": "administer",
    "button.acknowledge": "acknowledge_result",
}
# Actions every role that holds them must find on this patient's chart (admitted, with an
# order ready to give and an allergy).
ALWAYS_SHOWN = ("update_demographics", "transfer", "discharge", "add_allergy", "place_order",
                "progress_order", "assign_order")


def shots_dir(shots: Path) -> Path:
    return shots


@pytest.fixture
def on_the_ward(his_store: Any, reference_data: None) -> str:
    """A long-named patient admitted with a ready medication order and an allergy."""
    uow: Callable[[], UnitOfWork] = lambda: UnitOfWork(his_store)  # noqa: E731
    pid = use_cases.register_patient(use_cases.RegisterPatient(
        "Maximiliana Alexandra", "García-Fernández de la Rosa", date(1951, 4, 30),
        sex="female"), uow(), actor=SYSTEM_ACTOR).patient_id
    use_cases.admit_patient(use_cases.AdmitPatient(pid, "MED", "MED-1", "Pneumonia"),
                            uow(), actor=SYSTEM_ACTOR)
    use_cases.add_allergy(use_cases.AddAllergy(pid, substance="Latex", severity="mild"),
                          uow(), actor=SYSTEM_ACTOR)  # asked before anything is prescribed
    order = use_cases.place_order(use_cases.PlaceOrder(
        patient_id=pid, kind="medication", medication_code="PARA", dose=Decimal("1"),
        unit="g", route="PO", frequency="Q6H"), uow(), actor=SYSTEM_ACTOR)
    use_cases.progress_order(use_cases.ProgressOrder(pid, order.order_id, "ready"), uow(),
                             actor=SYSTEM_ACTOR)
    return pid


def _page(chromium: Any, width: int = 1280) -> tuple[Any, Any]:
    ctx = chromium.new_context(viewport={"width": width, "height": 900})
    return ctx, ctx.new_page()


def test_the_api_docs_render_with_no_network(live_server, browser, make_user,  # noqa: F811
                                             tmp_path) -> None:
    make_user("clerk", "clerk")
    base = live_server.url
    ctx, page = _page(browser)
    outside: list[str] = []

    def block_other_hosts(route: Any) -> None:
        if route.request.url.startswith(base) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", block_other_hosts)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text)
            if "Content Security Policy" in m.text else None)
    login(page, base, "clerk")
    page.goto(f"{base}/api/v1/docs")
    page.wait_for_selector(".opblock", timeout=20_000)
    assert page.locator(".opblock").count() > 10  # the operations are listed
    assert "Hospital back office API" in page.inner_text(".info")
    page.screenshot(path=str(shots_dir(tmp_path) / "api-docs-offline.png"))
    assert outside == [] and violations == []
    ctx.close()


def test_the_error_pages_have_the_admin_look_and_a_way_back(
        live_server, browser, make_user, on_the_ward, tmp_path) -> None:  # noqa: F811
    """Each error page opened once at 1024 px; its frame checked and screenshot at 1024 and
    1440 px."""
    make_user("nurse", "nurse")
    make_user("desk", "clerk")
    base = live_server.url
    shots = shots_dir(tmp_path)
    ctx, page = _page(browser, WIDTHS[0])
    login(page, base, "nurse")
    cases = (
        (f"/admin/patients/{on_the_ward}/discharge/", 403, "Not allowed", "nurse"),
        ("/admin/patients/no-such-patient/", 404, "Page not found", "nurse"),
        ("/admin/worklists/admitted/?page=not-a-token", 400, "Bad request", "desk"),
    )
    for path, status, title, user in cases:
        if user != "nurse":
            ctx.clear_cookies()
            login(page, base, user)
        response = page.goto(f"{base}{path}")
        assert response is not None and response.status == status, path
        assert page.inner_text("#content h1") == title
        for width in NARROWEST_LAST:
            page.set_viewport_size({"width": width, "height": 900})
            expect(page.locator("#site-name")).to_be_visible()
            expect(page.locator("#nav-sidebar")).to_be_visible()
            assert page.locator("#nav-sidebar a").count() > 2  # the menu, not an empty frame
            page.screenshot(path=str(shots / f"error-{status}-{width}.png"), full_page=True)
    page.click("#error-home")
    page.wait_for_selector("#home-worklists")
    ctx.close()


@pytest.mark.parametrize("role", ROLES)
def test_each_role_sees_only_the_chart_actions_the_policy_allows(
        live_server, browser, make_user, on_the_ward, role, tmp_path) -> None:  # noqa: F811
    user = make_user(role, role)
    base = live_server.url
    ctx, page = _page(browser, 1280)
    login(page, base, role)
    assert "Recent actions" not in page.inner_text("#content")  # the home page
    page.screenshot(path=str(shots_dir(tmp_path) / f"home-{role}.png"), full_page=True)
    page.goto(f"{base}/admin/patients/{on_the_ward}/")
    page.wait_for_selector("#patient-banner")
    shown = {action for selector, action in CHART_ACTIONS.items()
             if page.locator(selector).count() > 0}
    refused = {action for action in shown if not allows(user, action)}
    assert not refused, f"{role} is shown {sorted(refused)}"
    missing = {a for a in ALWAYS_SHOWN if allows(user, a)} - shown
    assert not missing, f"{role} misses {sorted(missing)}"
    page.screenshot(path=str(shots_dir(tmp_path) / f"chart-actions-{role}.png"),
                    full_page=True)
    ctx.close()


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_the_action_buttons_never_cover_the_chart_heading(
        live_server, browser, make_user, on_the_ward, tmp_path) -> None:  # noqa: F811
    """The chart opened once; at each width its action buttons checked against the heading,
    and screenshot."""
    make_user("doc", "clinician", "clerk")  # the most buttons at once
    base = live_server.url
    ctx, page = _page(browser, HEADING_WIDTHS[0])
    login(page, base, "doc")
    page.goto(f"{base}/admin/patients/{on_the_ward}/")
    page.wait_for_selector("#patient-banner")
    heading = page.locator("#content h1")
    assert "GARCÍA-FERNÁNDEZ DE LA ROSA" in heading.inner_text()
    covered = [heading, page.locator("#banner-mrn"), page.locator("#patient-banner .pb-name")]
    buttons = page.locator("#content .object-tools li")
    assert buttons.count() >= 5
    for width in HEADING_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for i in range(buttons.count()):
            button = buttons.nth(i).bounding_box()
            assert button is not None
            for target in covered:
                box = target.bounding_box()
                assert box is not None
                assert not _overlap(button, box), (width, buttons.nth(i).inner_text())
        page.screenshot(path=str(shots_dir(tmp_path) / f"chart-heading-{width}.png"))
    ctx.close()


@pytest.mark.parametrize("role", ROLES)
def test_no_page_loads_from_another_host_or_breaks_the_policy(
        live_server, browser, make_user, on_the_ward, role, tmp_path) -> None:  # noqa: F811
    """Home, every menu page and the chart's pages, in the browser: no request leaves the
    server, and the Content-Security-Policy blocks nothing the pages need."""
    make_user(role, role)
    base = live_server.url
    ctx, page = _page(browser, 1280)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base)
            and not r.url.startswith("data:") else None)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(f"{page.url}: {m.text}")
            if "Content Security Policy" in m.text else None)
    login(page, base, role)
    menu = page.eval_on_selector_all("#content a[href^='/admin/']",
                                     "links => links.map(a => a.getAttribute('href'))")
    chart = f"/admin/patients/{on_the_ward}/"
    for path in [*dict.fromkeys(menu), chart, f"{chart}mar/", "/api/v1/docs"]:
        page.goto(f"{base}{path}")
        page.wait_for_load_state("load")
    assert outside == [], outside
    assert violations == [], "\n".join(violations)
    ctx.close()


def test_the_patient_and_worklist_indexes_lead_to_the_work(
        live_server, browser, make_user, on_the_ward, his_store, tmp_path) -> None:  # noqa: F811
    """The indexes walked once at 1024 px; each screenshot (and the register button checked
    visible) at 1024 and 1440 px."""
    make_user("desk", "clerk")
    base = live_server.url
    shots = shots_dir(tmp_path)
    ctx, page = _page(browser, WIDTHS[0])
    login(page, base, "desk")
    assert page.get_attribute("link[rel=icon]", "href").endswith("favicon.svg")
    page.goto(f"{base}/admin/worklists/")
    assert page.inner_text("#content h1") == "Worklists"
    at_widths(page, shots, "worklists-index", widths=NARROWEST_LAST)
    page.click("#section-pages a:text('Admitted patients')")
    page.wait_for_url("**/admin/worklists/admitted/**")
    page.goto(f"{base}/admin/patients/")
    for width in NARROWEST_LAST:
        page.set_viewport_size({"width": width, "height": 900})
        expect(page.locator("#find-register")).to_be_visible()  # a clerk may register from here
        page.screenshot(path=str(shots / f"patients-index-{width}.png"), full_page=True)
    page.fill("#id_q", "H0000001")
    page.click("form:has(#id_q) input[type=submit]")  # not the wristband scan's button
    page.wait_for_selector("#patient-banner")
    assert f"/admin/patients/{on_the_ward}/" in page.url
    ctx.close()
