"""The checks the API state machine runs after every step and at the end of each example.

After a step: the patient's reads (API, FHIR ``$everything``, the chart and MAR pages) answer;
the worklists, read with the command's ``X-Consistency-Token``, show the record as the API
reads it; no dead letters. At the end: ``check_worklists`` finds no drift once the worker
caught up, and ``rebuild_worklists`` builds the very rows the projections had written.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from django.core.management import call_command

from cosmos_backend.store import DocumentStore
from hisadmin.core.consistency import HEADER
from tests.integration.api_machine_support import Api, Pages, Transcript, pages_of
from tests.integration.processes import wait_for
from webhooks.persistence import deadletters as webhook_letters
from worklists.ops import maintenance
from worklists.persistence import deadletters as projection_letters
from worklists.persistence import generations, view_rows
from worklists.persistence.trackers import read_tracker
from worklists.projection.state import RowKey

ACTIVE = ("created", "ready", "in_progress")


@dataclass
class Reference:
    """The codes a realistic command names, read from the API (and, where the API has no
    list, the reference data the API checks against)."""

    medications: list[dict[str, Any]]
    allergens: list[str]
    lab_tests: dict[str, list[dict[str, Any]]]  # test code → its analytes
    wards: dict[str, dict[str, Any]]  # ward code → {department, beds}
    frequencies: list[str]
    modalities: list[str]
    body_parts: list[str]


@dataclass
class Context:
    """What every example of the machine shares: the store, the roles' API clients and
    browser sessions, the reference codes, the request schemas and the hospital's zone."""

    store: DocumentStore
    apis: dict[str, Api]  # clerk, clinician, nurse
    pages: dict[str, Pages]  # clinician, nurse
    reference: Reference
    bodies: Any  # api_machine_support.Bodies
    tz: tzinfo
    nurse_id: str
    nurse_username: str
    transcript: Transcript


@dataclass
class Chart:
    """A patient as the API last read it."""

    id: str
    mrn: str
    patient: dict[str, Any] = field(default_factory=dict)
    etags: list[str] = field(default_factory=list)  # every version seen, oldest first
    admission: dict[str, Any] | None = None  # the active one
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    head: int = 0  # the last event's sequence number
    mar: dict[str, Any] = field(default_factory=dict)

    def active_allergies(self) -> list[str]:
        return [a["allergy_id"] for a in self.patient.get("allergies", [])
                if a["status"] == "active"]

    def active_orders(self) -> dict[str, dict[str, Any]]:
        return {k: o for k, o in self.orders.items() if o["status"] in ACTIVE}


def read_chart(ctx: Context, chart: Chart) -> None:
    """Every read of the patient, API and pages; ``chart`` brought up to date."""
    api, base = ctx.apis["clinician"], f"/api/v1/patients/{chart.id}"
    chart.patient = api.ok(base)
    if not chart.etags or chart.etags[-1] != chart.patient["etag"]:
        chart.etags.append(chart.patient["etag"])
    chart.orders = {o["order_id"]: o for o in api.ok(f"{base}/orders")}
    stays = [a for a in api.ok(f"{base}/admissions") if a["ended_at"] is None]
    chart.admission = stays[0] if stays else None
    events = api.ok(f"{base}/events")["items"]
    chart.head = events[0]["seq"] if events else 0
    chart.mar = api.ok(f"{base}/mar")
    api.ok(f"{base}/results")
    api.ok(f"/fhir/R4/Patient/{chart.id}/$everything")
    for role in ("clinician", "nurse"):
        ctx.pages[role].open(f"/admin/patients/{chart.id}/")
        ctx.pages[role].open(f"/admin/patients/{chart.id}/mar/")


def check_worklists(ctx: Context, chart: Chart, token: str | None) -> None:
    """Each worklist, read with the command's token (so it waits for that command), shows
    the record the API reads; every worklist answers, API and page."""
    clerk, doc, nurse = ctx.apis["clerk"], ctx.apis["clinician"], ctx.apis["nurse"]
    waited = {HEADER: token} if token else None
    found = [r for r in pages_of(clerk, "/api/v1/worklists/patients", {"mrn": chart.mrn},
                                 waited) if r["patient_id"] == chart.id]
    p = chart.patient
    clerk.expect([r["name"] for r in found] == [f"{p['family_name'].upper()}, {p['given_name']}"],
                 f"patient search shows {found}, the record {p}")
    admitted = [r for r in pages_of(clerk, "/api/v1/worklists/admitted", {"q": chart.mrn})
                if r["patient_id"] == chart.id]
    stay = chart.admission
    want = [] if stay is None else [(stay["ward_id"], stay["bed"] or None)]
    clerk.expect([(r["ward_id"], r["bed"] or None) for r in admitted] == want,
                 f"Admitted shows {admitted}, the admission is {stay}")
    rows = [r for r in pages_of(doc, "/api/v1/worklists/orders", {})
            if r["patient_id"] == chart.id]
    active = chart.active_orders()
    doc.expect({r["order_id"]: r["status"] for r in rows}
               == {k: o["status"] for k, o in active.items()},
               f"Active orders shows {rows}, the record's active orders are {active}")
    mine = {r["order_id"] for r in pages_of(nurse, "/api/v1/worklists/my-orders", {})
            if r["patient_id"] == chart.id}
    nurse.expect(mine == {k for k, o in active.items() if o["assignee_id"] == ctx.nurse_id},
                 f"My orders shows {mine}, the record {active}")
    reviews = {r["order_id"] for r in pages_of(doc, "/api/v1/worklists/results-to-review", {})
               if r["patient_id"] == chart.id}
    unread = {k for k, o in chart.orders.items() if o["status"] == "completed"
              and o.get("results") and not o["results"].get("acknowledged_at")}
    doc.expect(reviews == unread, f"Results to review shows {reviews}, unacknowledged {unread}")
    ward = stay["ward_id"] if stay else "MED-1"
    nurse.ok("/api/v1/worklists/medications-due", {"ward": ward})
    for page, query in (("admitted", {}), ("orders", {}), ("patients", {"q": chart.mrn}),
                        ("results-to-review", {})):
        ctx.pages["clinician"].open(f"/admin/worklists/{page}/", query)
    ctx.pages["nurse"].open("/admin/worklists/my-orders/")
    ctx.pages["nurse"].open("/admin/worklists/medications-due/", {"ward": ward})


def check_dead_letters(ctx: Context) -> None:
    """No projection and no webhook delivery failed for good."""
    letters = [letter.as_dict() for letter in projection_letters.all_letters(ctx.store)]
    ctx.apis["clerk"].expect(not letters, f"projection dead letters: {letters}")
    hooks = webhook_letters.all_letters(ctx.store)
    ctx.apis["clerk"].expect(not hooks, f"webhook dead letters: {hooks}")


Rows = dict[RowKey, tuple[dict[str, Any], dict[str, Any]]]


def view_rows_of(store: DocumentStore, ids: list[str]) -> Rows:
    """Every patient's rows in the active generation, volatile fields aside."""
    gen = generations.pointer(store)["active"]
    out: Rows = {}
    for patient_id in ids:
        for key in read_tracker(store, patient_id, gen).rows:
            row = view_rows.read_row(store, gen, key)
            if row is not None:
                shown = {k: v for k, v in row.contents.items() if k not in view_rows.VOLATILE}
                out[key] = (shown, row.query)
    return out


def settle_check_and_rebuild(ctx: Context) -> None:
    """Once the worker caught up: no drift (``check_worklists``), and a rebuild
    (``rebuild_worklists``) gives the rows the projections wrote."""
    store = ctx.store
    ids = sorted(set(maintenance.patient_ids(store)))

    def caught_up() -> bool:
        return not maintenance.check(store, ids).behind

    wait_for(caught_up, 30, interval=0.2, what="the worklists to catch up")
    report = maintenance.check(store, ids)
    ctx.apis["clerk"].expect(not report.drifted, f"drift: {report.drifted}")
    out = io.StringIO()
    call_command("check_worklists", stdout=out)  # raises CommandError on drift
    before = view_rows_of(store, ids)
    call_command("rebuild_worklists", stdout=io.StringIO())
    after = view_rows_of(store, ids)
    changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()
               if before.get(k) != after.get(k)}
    ctx.apis["clerk"].expect(not changed, f"the rebuild changed rows: {changed}")
    check_dead_letters(ctx)
