"""Bed board pages and the admit / transfer forms' choice of ward and bed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from hisadmin.core import keys
from patients.tasks import follow_up

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def login(make_user, reference_data) -> Callable[[str], Client]:
    def login(role: str) -> Client:
        client = Client()
        client.force_login(make_user(f"page-{role}", role))
        return client

    return login


def _cleaning(team, his_store, pid: str) -> None:
    team["clerk"].post(f"/api/v1/patients/{pid}/discharge", {"disposition": "home"}, content_type=J)
    follow_up(keys.patient(pid), his_store.read(keys.patient(pid), "stream")["docContents"]["seq"])


def test_it_shows_every_bed_as_a_card_with_the_ward_counts(login, team, admit, his_store) -> None:
    admit("Cardholder", bed="M101", allergies_asked=False)
    _cleaning(team, his_store, admit("Leaver", bed="M102"))
    page = login("nurse").get("/admin/wards/MED-1/")
    assert page.status_code == 200
    html = page.content.decode()
    cards = page.context["cards"]
    assert [c["state"] for c in cards[:3]] == ["occupied", "cleaning", "free"]
    assert len(cards) == 10
    occupied = cards[0]
    assert occupied["name"] == "CARDHOLDER, Ann" and occupied["sex"] == "Sex unknown"
    assert occupied["allergy_label"] == "Allergies not yet asked"
    assert "Leaver".upper() not in html  # a cleaning card names nobody
    m = page.context["metrics"]
    assert (m.beds, m.occupied, m.free, m.cleaning) == (10, 1, 8, 1)
    assert 'hx-trigger="every 3s"' in html and "data-loaded-at" in html
    assert "Mark clean" in html and "MED-1" not in page.context["title"]


def test_it_refreshes_only_the_cards_for_htmx(login, admit) -> None:
    admit("Live", bed="M103")
    part = login("clerk").get("/admin/wards/MED-1/", HTTP_HX_REQUEST="true")
    html = part.content.decode()
    assert part.status_code == 200 and "LIVE, Ann" in html
    assert "<html" not in html and 'id="bed-cards"' in html
    assert part["X-Bed-Board"] == "1" and "HX-Request" in part["Vary"]
    page = login("clerk").get("/admin/wards/MED-1/")
    assert 'data-live-marker="X-Bed-Board"' in page.content.decode()
    assert "X-Bed-Board" not in page


def test_it_offers_mark_clean_only_to_nurses_and_clerks(login, team, admit, his_store) -> None:
    _cleaning(team, his_store, admit("Clean", bed="M104"))
    clinician = login("clinician")
    assert "Mark clean" not in clinician.get("/admin/wards/MED-1/").content.decode()
    assert clinician.post("/admin/wards/MED-1/beds/M104/clean/").status_code == 403
    nurse = login("nurse")
    done = nurse.post("/admin/wards/MED-1/beds/M104/clean/", {"query": "pick=x"}, follow=True)
    assert done.redirect_chain[-1][0] == "/admin/wards/MED-1/?pick=x"
    assert "Bed M104 is clean and free again." in done.content.decode()
    assert done.context["cards"][3]["state"] == "free"
    again = nurse.post("/admin/wards/MED-1/beds/M104/clean/", follow=True)
    assert "not being cleaned" in again.content.decode()


def test_it_sends_an_unknown_ward_to_the_list_of_wards(login) -> None:
    nurse = login("nurse")
    r = nurse.get("/admin/wards/NOPE/", follow=True)
    assert r.redirect_chain[-1][0] == "/admin/wards/"
    assert "There is no ward" in r.content.decode()
    assert nurse.post("/admin/wards/NOPE/beds/M1/clean/").status_code == 302
    assert login("admin").get("/admin/wards/").status_code == 403
    for switch in ("", "a/b", "NOPE"):  # the ward switcher with anything in it
        r = nurse.get("/admin/wards/MED-1/", {"ward": switch}, follow=True)
        assert r.status_code == 200 and r.redirect_chain[-1][0].startswith("/admin/wards/")
    moved = nurse.get("/admin/wards/MED-1/", {"ward": "MED-2", "pick": "admit"})
    assert moved["Location"] == "/admin/wards/MED-2/?pick=admit"


def test_it_lists_the_wards_with_their_counts(login, admit) -> None:
    admit("Listed", bed="M105")
    page = login("clinician").get("/admin/wards/")
    groups = dict(page.context["groups"])
    med = {w["code"]: w["metrics"] for w in groups["Internal Medicine"]}
    assert med["MED-1"].occupied == 1 and med["MED-1"].free == 9
    assert "Cardiology Ward A" in page.content.decode()


def _chart(team) -> str:
    return (
        team["clerk"]
        .post(
            "/api/v1/patients",
            {"given_name": "Bea", "family_name": "Choosing", "birth_date": "1960-03-03"},
            content_type=J,
        )
        .json()["id"]
    )


def test_the_admit_form_offers_the_departments_wards_and_only_free_beds(
    login, team, admit, his_store
) -> None:
    admit("Taken", bed="M101")
    _cleaning(team, his_store, admit("Left", bed="M102"))
    pid = _chart(team)
    clerk = login("clerk")
    form = clerk.get(f"/admin/patients/{pid}/admit/?department_id=MED").context["form"]
    assert [c for c, _ in form.fields["ward_id"].widget.choices] == ["MED-1", "MED-2"]
    beds = [c for c, _ in form.fields["bed"].widget.choices]
    assert beds[0] == "" and "M101" not in beds and "M102" not in beds and "M103" in beds
    # Another department: its wards, the first ward's free beds; what was typed is kept.
    again = clerk.post(
        f"/admin/patients/{pid}/admit/",
        {"department_id": "CARD", "ward_id": "MED-1", "reason": "Chest pain", "refresh": "1"},
    )
    form = again.context["form"]
    assert not form.is_bound and form.initial["reason"] == "Chest pain"
    assert [c for c, _ in form.fields["ward_id"].widget.choices] == ["CARD-A", "CARD-CCU"]
    assert "A01" in [c for c, _ in form.fields["bed"].widget.choices]
    assert 'hx-post="/admin/patients/' in again.content.decode()


def test_the_admit_form_takes_a_bed_picked_on_the_board(login, team) -> None:
    pid = _chart(team)
    clerk = login("clerk")
    page = clerk.get(f"/admin/patients/{pid}/admit/?department_id=MED&ward_id=MED-2")
    board_url = page.context["board_url"]
    assert board_url.startswith("/admin/wards/MED-2/?pick=admit")
    board = clerk.get(board_url)
    picks = [c["pick_href"] for c in board.context["cards"] if "pick_href" in c]
    assert len(picks) == 6 and "Admit here" in board.content.decode()
    chosen = clerk.get(picks[2]).context["form"]
    assert (chosen.initial["ward_id"], chosen.initial["bed"]) == ("MED-2", "M203")
    r = clerk.post(
        f"/admin/patients/{pid}/admit/",
        {"department_id": "MED", "ward_id": "MED-2", "bed": "M203", "reason": "Fall"},
    )
    assert r.status_code == 302
    assert clerk.get("/admin/wards/MED-2/").context["cards"][2]["state"] == "occupied"


def test_the_admit_form_says_why_a_bed_taken_meanwhile_is_refused(login, team, admit) -> None:
    pid = _chart(team)
    admit("Quicker", bed="M106")
    r = login("clerk").post(
        f"/admin/patients/{pid}/admit/",
        {"department_id": "MED", "ward_id": "MED-1", "bed": "M106", "reason": "x"},
    )
    assert r.status_code == 200
    assert "Bed M106 is occupied" in " ".join(r.context["form"].errors["bed"])


def test_the_transfer_form_offers_free_beds_and_moves_the_card(login, team, admit) -> None:
    pid = admit("Mover", bed="M107")
    clerk = login("clerk")
    form = clerk.get(f"/admin/patients/{pid}/transfer/").context["form"]
    assert form.initial["department_id"] == "MED" and form.initial["ward_id"] == "MED-1"
    assert "M107" not in [c for c, _ in form.fields["bed"].widget.choices]
    etag = form.initial["etag"]
    r = clerk.post(
        f"/admin/patients/{pid}/transfer/",
        {"department_id": "MED", "ward_id": "MED-2", "bed": "M201", "etag": etag},
    )
    assert r.status_code == 302
    assert clerk.get("/admin/wards/MED-2/").context["cards"][0]["patient_id"] == pid
    picked = clerk.get(f"/admin/wards/MED-1/?pick=transfer&patient={pid}")
    assert "Move here" in picked.content.decode()
