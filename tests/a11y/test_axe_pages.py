"""Accessibility: axe-core on the main pages, as each role sees them, in one browser.

axe-core is the npm package in this folder (``make test-deps`` runs ``npm ci`` here); it is
injected from that file into each page, never fetched from another host. The contexts
bypass the site's Content-Security-Policy for that one injected script only: the pages
themselves run no inline script. No page may have a critical or serious violation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_browser_flow import browser, login  # noqa: F401 - the fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("critical", "serious")
# label-content-name-mismatch is experimental in axe-core (off by default) but what a
# voice-control user meets: "click Admit here" must reach a control whose name holds it.
RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"],
    rules: {"label-content-name-mismatch": {enabled: true}}});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))}));
}"""


def _pages(pid: str, free_pid: str, orders: dict[str, str]) -> dict[str, list[str]]:
    """The pages each role works on (their paths): 24 kinds of page, some seen by two roles."""
    chart = f"/admin/patients/{pid}/"
    order = f"{chart}orders/{orders['medication']}/"
    return {
        "clerk": ["/admin/", "/admin/patients/find/", "/admin/patients/register/",
                  "/admin/worklists/admitted/", "/admin/worklists/patients/?q=Axelsson",
                  chart, f"/admin/patients/{free_pid}/admit/", "/admin/wards/",
                  "/admin/wards/MED-1/"],
        "clinician": ["/admin/", "/admin/worklists/orders/", "/admin/worklists/my-orders/",
                      "/admin/worklists/results-to-review/", chart,
                      f"{chart}orders/new/medication/", order,
                      f"{chart}orders/{orders['lab']}/results/", f"{chart}mar/",
                      "/admin/worklists/at-risk/", f"{chart}spo2-scale/"],
        "nurse": ["/admin/", "/admin/worklists/medications-due/", f"{chart}mar/", order,
                  "/admin/wards/MED-1/", f"{order}administer/", f"{chart}observations/new/",
                  "/admin/worklists/observations-due/"],
        "admin": ["/admin/", "/admin/reference/", "/admin/reference/Medication/",
                  "/admin/webhooks/", "/admin/access-log/", f"{chart}access/",
                  "/admin/auth/user/"],
    }


def _check(page: Any, url: str, found: dict[str, list[dict[str, Any]]], who: str) -> None:
    page.goto(url)
    page.wait_for_selector("#content, #container")
    page.add_script_tag(path=str(AXE))
    blocking = [v for v in page.evaluate(RUN_AXE) if v["impact"] in BLOCKING]
    if blocking:
        found[f"{who} {url}"] = blocking


def test_it_finds_no_serious_violation_on_the_main_pages(
        live_server, browser, his_user: Callable[..., Any],  # noqa: F811
        his_patient: Callable[..., Any]) -> None:
    if not AXE.exists():
        pytest.skip("axe-core is not installed (make test-deps runs npm ci in tests/a11y)")
    seeded = his_patient("Axelsson", given="Ingrid", orders=("medication", "lab"))
    free = his_patient("Berglund", given="Nils", admit=False)
    base = live_server.url
    found: dict[str, list[dict[str, Any]]] = {}

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = ctx.new_page()
    _check(page, f"{base}/admin/login/", found, "anonymous")
    ctx.close()
    for role, urls in _pages(seeded.id, free.id, seeded.orders).items():
        his_user(f"a11y-{role}", role)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = ctx.new_page()
        login(page, base, f"a11y-{role}")
        for url in urls:
            _check(page, base + url, found, role)
            if role == "clerk" and url.startswith("/admin/wards/MED-1/"):
                # the clerk's board was checked with its free beds' "Admit here" on it
                assert page.locator("a.admit-here").count() > 0
        ctx.close()
    report = "\n".join(f"{where}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}"
                       for where, violations in found.items() for v in violations)
    assert not found, "axe-core found:\n" + report
