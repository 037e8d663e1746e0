"""No raw code on the patient pages for the demo hospital: every chart (with its audit trail),
medication record and order page shows statuses, dispositions, urgencies and events by their
labels, after the demo's orders have moved through their states and a patient went home."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.policy import actor_for
from patients import demo, use_cases
from patients.domain import mar
from patients.domain.checks import CHECK_TYPES
from patients.domain.events import EventType
from patients.domain.orders import STATUS_LABELS, URGENCY_LABELS, OrderStatus
from patients.domain.records import (
    ADMISSION_STATUS_LABELS,
    CRITICALITIES,
    DISPOSITION_LABELS,
    DISPOSITIONS,
    REMOVAL_REASONS,
)
from patients.domain.results import GivenValue
from patients.persistence import mrn, queries, reference
from tests.web.fixed_clock import Clock, fixed_clock  # noqa: F401

pytestmark = pytest.mark.django_db
# Codes of more than one word: never a word of a sentence, so nowhere in a page's text.
SPELLED_CODES = sorted(
    {
        *(str(s) for s in OrderStatus),
        *mar.SLOT_STATUSES,
        *DISPOSITIONS,
        *CRITICALITIES,
        *REMOVAL_REASONS,
        *CHECK_TYPES,
        *mar.NOT_GIVEN_REASONS,
    }
    - {"", None},
    key=len,
    reverse=True,
)
SPELLED_CODES = [c for c in SPELLED_CODES if "_" in c or "-" in c]
EVENT_NAMES = [str(t) for t in EventType]


def text(html: str) -> str:
    """What a reader sees: no tags or attributes, no styles or scripts."""
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def cells(html: str, css_class: str) -> list[str]:
    return [
        text(m)
        for m in re.findall(
            rf'<(?:td|span|th)[^>]*class="[^"]*\b{css_class}\b[^"]*"[^>]*>(.*?)</(?:td|span|th)>',
            html,
            re.S,
        )
    ]


@pytest.fixture
def hospital(his_store: DocumentStore, make_user,
             fixed_clock: Callable[[str, str], Clock]) -> list[str]:  # noqa: F811
    """The demo hospital (fast password hashing through ``make_user``'s settings), its
    orders moved on: ready, started, given, not given, resulted, cancelled; one patient sent
    to a care home. On a fixed clock: set up at 07:50 in London, when each medication has a
    dose time due (OD and Q12H at 08:00, the first dose now), given then; each is not given
    at 08:00 the next day."""
    fixed_clock("2026-06-10", "07:50")
    make_user("setup")  # the fast hasher for the demo accounts
    list(demo.setup(his_store))
    nurse, doctor = (actor_for(User.objects.get(username=u)) for u in ("nurse", "clinician"))
    ids = [mrn.lookup(his_store, demo.demo_mrn(n)) for n in range(1, len(demo.DEMO_PATIENTS) + 1)]
    moved = {"cancelled": False}
    not_given: list[tuple[str, str]] = []
    for pid in ids:
        for o in queries.orders(his_store, pid, active_only=True):
            oid = o["orderId"]

            def run(fn, cmd, actor=nurse) -> None:
                fn(cmd, UnitOfWork(his_store), actor=actor)

            if o["kind"] == "medication":
                run(use_cases.progress_order, use_cases.ProgressOrder(pid, oid, "ready"))
                run(
                    use_cases.administer,
                    use_cases.Administer(pid, oid, dose=Decimal(o["dose"]), unit=o["unit"]),
                )
                not_given.append((pid, oid))
            elif o["kind"] == "lab" and o["testCode"] == "TROP":
                run(use_cases.progress_order, use_cases.ProgressOrder(pid, oid, "start"))
            elif o["kind"] == "lab":
                run(use_cases.progress_order, use_cases.ProgressOrder(pid, oid, "start"))
                test = reference.all_of(his_store, "LabTest")[o["testCode"]]
                run(
                    use_cases.progress_order,
                    use_cases.ProgressOrder(
                        pid,
                        oid,
                        "complete",
                        results=tuple(
                            GivenValue(a["code"], Decimal("1")) for a in test["analytes"]
                        ),
                    ),
                )
            elif not moved["cancelled"]:
                run(
                    use_cases.progress_order,
                    use_cases.ProgressOrder(pid, oid, "cancel", reason="Not needed"),
                    doctor,
                )
                moved["cancelled"] = True
    fixed_clock("2026-06-11", "08:00")  # the next day's 08:00 dose times are due
    for pid, oid in not_given:
        use_cases.administer(
            use_cases.Administer(pid, oid, status=mar.NOT_GIVEN, reason="patient-absent"),
            UnitOfWork(his_store),
            actor=nurse,
        )
    sent_home = ids[0]
    use_cases.discharge_patient(
        use_cases.DischargePatient(sent_home, "care-home", note="Care home bed from Monday"),
        UnitOfWork(his_store),
        actor=actor_for(User.objects.get(username="clerk")),
    )
    return ids


def test_no_patient_page_shows_a_raw_code_for_the_demo_data(hospital, his_store) -> None:
    client = Client()
    client.force_login(User.objects.get(username="nurse"))
    order_statuses = set(STATUS_LABELS.values())
    seen_statuses: set[str] = set()
    seen_doses: set[str] = set()
    pages = 0
    for pid in hospital:
        urls = [
            f"/admin/patients/{pid}/",
            f"/admin/patients/{pid}/mar/",
            *(
                f"/admin/patients/{pid}/orders/{o['orderId']}/"
                for o in queries.orders(his_store, pid)
            ),
        ]
        for url in urls:
            r = client.get(url)
            assert r.status_code == 200, url
            html = r.content.decode()
            shown = text(html)
            pages += 1
            for code in SPELLED_CODES:
                assert not re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", shown), (url, code)
            for name in EVENT_NAMES:
                assert not re.search(rf"\b{name}\b", shown), (url, name)
            for status in cells(html, "order-status") + cells(html, "order-status-badge"):
                assert status in order_statuses, (url, status)
                seen_statuses.add(status)
            for status in cells(html, "mar-status") + cells(html, "dose-status"):
                assert status in mar.STATUS_LABELS.values(), (url, status)
                seen_doses.add(status)
            for row in re.findall(r'<tr class="admission-row".*?</tr>', html, re.S):
                first = re.search(r"<td>(.*?)</td>", row, re.S)
                assert first and text(first.group(1)) in ADMISSION_STATUS_LABELS.values(), url
                disposition = cells(row, "admission-disposition")
                assert disposition[0] in ("", *DISPOSITION_LABELS.values()), (url, disposition)
            for urgency in re.findall(r"<th scope=\"row\">Urgency</th><td>(.*?)</td>", html):
                assert text(urgency) in URGENCY_LABELS.values(), (url, urgency)
    assert pages > 20
    # the demo's orders really were in every state the test means to cover
    assert {"Created", "In progress", "Completed", "Cancelled"} <= seen_statuses
    assert {"Given", "Not given"} <= seen_doses
    chart = text(client.get(f"/admin/patients/{hospital[0]}/").content.decode())
    assert "Care home" in chart and "Discharged to a care home (Care home bed from Monday)" in chart
    assert "Discharge note: Care home bed from Monday" in chart
