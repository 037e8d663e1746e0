"""A whole stay's pages say everything in words and in the hospital's time: the chart with its
audit trail, the MAR, each order's page, a refused order's duplicate warning, a dose's
interval warning, the discharge page. No ISO timestamp, no route, modality, status or
disposition code, and people by their full names."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
GOOD = "Breakthrough pain, agreed with the ward doctor"
ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?|\d{2}:\d{2}:\d{2}|[+-]\d{2}:\d{2}\b")
# Raw forms once seen on these pages (issue 27): none may come back.
RAW = (r"\(created\b", r"\bin_progress\b", r"\bcreated,",
       r"Discharged: home\b", r"\broutes PO\b", r"\bCR Chest\b")


def content(html: str) -> str:
    """The text of the page's content as a reader sees it (no tags, scripts, styles or the
    options of a select, which are form values)."""
    main = html.split('id="content-main"', 1)[-1]
    main = re.sub(r"(?s)<(script|style|select)\b.*?</\1>", " ", main)
    return " ".join(re.sub(r"<[^>]+>", " ", main).split())


def named(client: Client, username: str, first: str, last: str, *roles: str,
          make_user: Any) -> Client:
    user = make_user(username, *roles)
    User.objects.filter(pk=user.pk).update(first_name=first, last_name=last)
    client.force_login(user)
    return client


@pytest.fixture
def stay(team, admit, make_user) -> dict[str, Any]:
    """A patient admitted, given paracetamol as needed twice (the second too soon, with a
    reason), a chest X-ray and a blood test with typed values, then seen to discharge."""
    for username, first, last in (("api-nurse", "Nia", "Okafor"),
                                  ("api-clinician", "Cal", "Idris")):
        User.objects.filter(username=username).update(first_name=first, last_name=last)
    nurse = named(Client(), "rn-words", "Rosa", "Walker", "nurse", make_user=make_user)
    doctor = named(Client(), "dr-words", "Dana", "Reed", "clinician", make_user=make_user)
    clerk = named(Client(), "clerk-words", "Cleo", "Marsh", "clerk", make_user=make_user)
    pid = admit("Wordsworth", bed="M104")
    base = f"/admin/patients/{pid}/"
    para = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "500", "unit": "mg",
        "route": "PO", "frequency": "PRN", "as_needed": True}, content_type=J).json()
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{para['order_id']}/ready",
                              content_type=J).status_code == 200
    first = team["nurse"].post(
        f"/api/v1/patients/{pid}/orders/{para['order_id']}/administrations",
        {"dose": "500", "unit": "mg"}, content_type=J)
    assert first.status_code in (200, 201), first.content
    imaging = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "imaging", "modality": "CR", "body_part": "CHEST"}, content_type=J)
    assert imaging.status_code == 201, imaging.content
    lab = team["doc"].post(f"/api/v1/patients/{pid}/orders", {
        "kind": "lab", "test_code": "BMP"}, content_type=J).json()["order_id"]
    assert team["nurse"].post(f"/api/v1/patients/{pid}/orders/{lab}/start",
                              content_type=J).status_code == 200
    values = {"NA": "128", "K": "5.0", "CREAT": "80", "UREA": "9.0", "GLU": "5.50"}
    done = team["nurse"].post(f"/api/v1/patients/{pid}/orders/{lab}/complete", {
        "results": [{"analyte_code": c, "value": v} for c, v in values.items()]}, content_type=J)
    assert done.status_code == 200, done.content
    pages: dict[str, str] = {}

    # a second paracetamol from the order form: the duplicate warning
    dup = doctor.post(base + "orders/new/medication/", {
        "medication_code": "PARA", "dose": "500", "unit": "mg", "route": "PO",
        "frequency": "PRN", "urgency": "routine", "note": "", "first_dose": "next"})
    assert dup.status_code == 200
    pages["duplicate warning"] = dup.content.decode()
    assert 'name="override_duplicate_order"' in pages["duplicate warning"]
    pages["prescribe form"] = doctor.get(base + "orders/new/medication/").content.decode()

    # a second dose too soon on the MAR's Record: the interval warning, then its reason
    url = base + f"mar/{para['order_id']}/record/"
    form = nurse.get(url).context["form"]
    fields = {"status": "given", "dose": "500", "unit": "mg", "administered_at": "",
              "etag": form.initial["etag"], "reason": "", "note": "",
              "slot_id": form.initial.get("slot_id") or ""}
    warned = nurse.post(url, fields)
    assert warned.status_code == 200
    pages["interval warning"] = warned.content.decode()
    assert 'data-check="dose-interval"' in pages["interval warning"]
    signature = warned.context["guards"]["signature"].value()
    given = nurse.post(url, {**fields, "signature": signature,
                             "override_dose_interval": GOOD})
    assert given.status_code == 302, given.content.decode()[:2000]

    for oid in (para["order_id"], imaging.json()["order_id"], lab):
        pages[f"order {oid}"] = nurse.get(base + f"orders/{oid}/").content.decode()
    pages["mar"] = nurse.get(base + "mar/").content.decode()
    pages["discharge"] = clerk.get(base + "discharge/").content.decode()
    sent = team["clerk"].post(f"/api/v1/patients/{pid}/discharge", {
        "disposition": "home", "note": "Home with family"}, content_type=J)
    assert sent.status_code == 200, sent.content
    pages["chart"] = nurse.get(base).content.decode()
    return {"pid": pid, "pages": pages}


def test_no_page_of_the_stay_shows_a_machine_time_or_a_code(stay) -> None:
    for name, html in stay["pages"].items():
        shown = content(html)
        assert not ISO.search(shown), (name, ISO.search(shown).group(0),
                                       shown[max(0, ISO.search(shown).start() - 80):][:160])
        for raw in RAW:
            found = re.search(raw, shown)
            assert not found, (name, raw, shown[max(0, found.start() - 80):][:160])


def test_people_are_named_and_reference_data_by_its_names(stay) -> None:
    pages = {k: content(v) for k, v in stay["pages"].items()}
    for name in ("mar", *(k for k in pages if k.startswith("order"))):
        assert "rn-words" not in pages[name] and "api-nurse" not in pages[name], name
    assert "Rosa Walker" in pages["mar"] and "Nia Okafor" in pages["mar"]
    chart = pages["chart"]
    assert "Computed radiography (X-ray)" in chart and "Chest" in chart
    assert "Discharged home" in chart
    assert "K 5.0" in chart or "5.0 mmol/L" in chart
    duplicate = pages["duplicate warning"]
    assert re.search(r"Paracetamol 500 mg PO PRN \(In progress, placed \w{3} \d{2} \w{3}, \d{2}:\d{2}\)", duplicate)
    assert "Oral" in pages["prescribe form"] or '"routeNames"' in stay["pages"]["prescribe form"]
