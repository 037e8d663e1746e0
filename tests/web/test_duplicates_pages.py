"""Possible duplicates for records staff, in the pages and the API: the list with why,
"not the same person" confirmed with a reason, the merge review; nobody else sees them."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import pytest
from django.test import Client

from cosmos_backend.store import DocumentStore
from hisadmin.core import keys
from patients.domain.duplicates import pair_id
from patients.tasks import follow_up

pytestmark = pytest.mark.django_db
J = "application/json"


@pytest.fixture
def web(make_user, reference_data) -> Callable[..., Client]:
    def client(role: str) -> Client:
        c = Client()
        c.force_login(make_user(f"dup-{role or 'none'}", *([role] if role else [])))
        return c
    return client


@pytest.fixture
def register(api_client, his_store: DocumentStore) -> Callable[..., str]:
    """Register through the API (a second registration confirmed as not a duplicate) and
    run the relay's follow-up of it, as the worker does."""
    clerk = api_client("clerk")

    def make(family: str, given: str, born: str = "1980-05-01", sex: str = "female") -> str:
        body = {"given_name": given, "family_name": family, "birth_date": born, "sex": sex,
                "confirm_not_duplicate": True}
        pid = clerk.post("/api/v1/patients", body, content_type=J).json()["id"]
        seq = his_store.read(keys.patient(pid), "stream")["docContents"]["seq"]
        follow_up(keys.patient(pid), seq)
        return pid
    return make


@pytest.fixture
def pair(register) -> tuple[str, str]:
    return register("O'Brien-Núñez", "Siobhán"), register("OBRIEN NUNEZ", "siobhan")


PAGES = ("/admin/records/duplicates/", "/admin/records/duplicates/{pair}/not-same/",
         "/admin/records/merge/?survivor={a}&retired={b}")


@pytest.mark.parametrize("role", ["clinician", "nurse", "charge_nurse", "admin", ""])
def test_it_keeps_the_pages_and_the_menu_entry_from_everyone_but_records_staff(
        web, api_client, pair: tuple[str, str], role: str) -> None:
    client = web(role)
    a, b = pair
    for url in PAGES:
        for method in ("get", "post"):
            response = getattr(client, method)(url.format(pair=pair_id(a, b), a=a, b=b))
            assert response.status_code == 403, (url, method, response.status_code)
    assert "Possible duplicates" not in client.get("/admin/").content.decode()
    api = api_client(*([role] if role else []))
    assert api.get("/api/v1/patients/duplicates").status_code == 403
    refused = api.post(f"/api/v1/patients/duplicates/{pair_id(a, b)}/not-same-person",
                       {"reason": "twins"}, content_type=J)
    assert refused.status_code == 403
    assert refused["Content-Type"] == "application/problem+json"


def test_it_lists_the_pair_with_why_for_a_clerk(web, pair: tuple[str, str]) -> None:
    clerk = web("clerk")
    assert 'href="/admin/records/duplicates/"' in clerk.get("/admin/").content.decode()
    html = clerk.get("/admin/records/duplicates/").content.decode()
    a, b = sorted(pair)
    assert f'data-pair="{a}.{b}"' in html
    assert "Same birth date (1 May 1980) and sex (female)" in html
    assert "Same name apart from case, accents or punctuation" in html
    assert f"/admin/records/merge/?survivor={a}&amp;retired={b}" in html
    assert f"/admin/records/duplicates/{a}.{b}/not-same/" in html


def test_not_the_same_person_needs_a_reason_then_the_pair_is_gone(
        web, pair: tuple[str, str], his_store: DocumentStore) -> None:
    clerk = web("clerk")
    url = f"/admin/records/duplicates/{pair_id(*pair)}/not-same/"
    page = clerk.get(url).content.decode()
    assert "Confirm: not the same person" in page and "O&#x27;BRIEN-NÚÑEZ, Siobhán" in page
    blank = clerk.post(url, {"reason": "   "})
    assert blank.status_code == 200 and "This field is required." in blank.content.decode()
    assert pair_id(*pair) in clerk.get("/admin/records/duplicates/").content.decode()
    done = clerk.post(url, {"reason": "Twins — different GP letters"}, follow=True)
    html = done.content.decode()
    assert "are not the same person. They are not listed again." in html
    assert f'data-pair="{pair_id(*pair)}"' not in html and 'id="no-duplicates"' in html
    again = clerk.post(url, {"reason": "again"}, follow=True)  # another tab, later
    assert "not listed as a possible duplicate" in again.content.decode()


def test_the_api_lists_pairs_a_page_at_a_time(api_client, register) -> None:
    for year in (1961, 1962, 1963):
        register("Strauß", "Jürgen", f"{year}-02-03", "male")
        register("Strauss", "Juergen", f"{year}-02-03", "male")
    clerk = api_client("clerk")
    first = clerk.get("/api/v1/patients/duplicates", {"page_size": 2})
    assert first.status_code == 200, first.content
    body = first.json()
    assert len(body["items"]) == 2 and body["continuation"]
    item = body["items"][0]
    assert set(item) == {"pair_id", "first", "second", "reasons"}
    assert item["first"]["family_name"] in {"Strauß", "Strauss"} and item["first"]["etag"]
    assert item["reasons"][0] in {f"Same birth date (3 February {y}) and sex (male)"
                                  for y in (1961, 1962, 1963)}
    rest = clerk.get("/api/v1/patients/duplicates",
                     {"page_size": 2, "continuation": body["continuation"]}).json()
    assert len(rest["items"]) == 1 and rest["continuation"] is None
    bad = clerk.get("/api/v1/patients/duplicates", {"continuation": "not-a-token"})
    assert bad.status_code == 400 and bad["Content-Type"] == "application/problem+json"
    assert bad.json()["type"] == "/api/v1/problems/bad-page-token"
    small = clerk.get("/api/v1/patients/duplicates", {"page_size": 0})  # a list's rule: 400
    assert small.status_code == 400 and small.json()["parameter"] == "page_size"


def test_the_api_marks_not_the_same_person_once(api_client, pair: tuple[str, str]) -> None:
    clerk = api_client("clerk")
    url = f"/api/v1/patients/duplicates/{pair_id(*pair)}/not-same-person"
    assert clerk.post(url, {}, content_type=J).status_code == 422
    assert clerk.post(url, {"reason": "Mother and daughter"}, content_type=J).status_code == 204
    assert clerk.get("/api/v1/patients/duplicates").json()["items"] == []
    gone = clerk.post(url, {"reason": "again"}, content_type=J)
    assert gone.status_code == 404
    assert gone.json()["type"] == "/api/v1/problems/pair-not-listed"


def test_the_merge_page_shows_both_records_and_swaps(web, pair: tuple[str, str]) -> None:
    clerk = web("clerk")
    a, b = pair
    html = clerk.get(f"/admin/records/merge/?survivor={a}&retired={b}").content.decode()
    assert 'id="row-demographics"' in html and 'id="row-allergies"' in html
    assert f"/admin/records/merge/?survivor={b}&amp;retired={a}" in html  # swap
    assert clerk.get(f"/admin/records/merge/?survivor={a}&retired={a}").status_code == 400
    assert clerk.get(f"/admin/records/merge/?survivor={a}&retired=nobody").status_code == 404


def _etags(his_store: DocumentStore, *pids: str) -> list[str]:
    return [his_store.read(keys.patient(p), "patient")["_etag"] for p in pids]


def test_a_clerk_merges_and_the_retired_chart_says_where_the_record_is(
        web, pair: tuple[str, str], his_store: DocumentStore) -> None:
    clerk = web("clerk")
    a, b = pair
    url = f"/admin/records/merge/?survivor={a}&retired={b}"
    page = clerk.get(url).content.decode()
    assert 'id="merge-form"' in page and 'id="merge-conflicts"' not in page
    s_tag, r_tag = _etags(his_store, a, b)
    unticked = clerk.post(url, {"reason": "Same NHS number", "survivor_etag": s_tag,
                                "retired_etag": r_tag})
    assert unticked.status_code == 200 and "Same NHS number" in unticked.content.decode()
    done = clerk.post(url, {"reason": "Same NHS number", "confirm": "on",
                            "survivor_etag": s_tag, "retired_etag": r_tag}, follow=True)
    html = done.content.decode()
    assert done.redirect_chain[-1][0] == f"/admin/patients/{a}/"
    assert "undo the merge</a> within a day" in html
    assert f'href="/admin/records/merged/{b}/undo/" class="undo-merge-here"' in html
    assert "undo-merge-here" not in web("nurse").get(f"/admin/patients/{a}/").content.decode()
    retired = clerk.get(f"/admin/patients/{b}/").content.decode()
    assert 'id="merged-into"' in retired and f'href="/admin/patients/{a}/"' in retired
    for action in ('id="demographics-link"', 'id="admit-link"', 'id="wristband-link"'):
        assert action not in retired, action
    assert 'id="undo-merge"' in retired
    assert pair_id(a, b) not in clerk.get("/admin/records/duplicates/").content.decode()
    nurse = web("nurse").get(f"/admin/patients/{b}/").content.decode()
    assert 'id="merged-into"' in nurse and 'id="undo-merge"' not in nurse


def test_a_record_changed_meanwhile_is_a_conflict_that_keeps_the_reason(
        web, api_client, pair: tuple[str, str], his_store: DocumentStore) -> None:
    clerk = web("clerk")
    a, b = pair
    s_tag, r_tag = _etags(his_store, a, b)
    api_client("nurse").post(f"/api/v1/patients/{b}/allergies",  # a colleague, meanwhile
                             {"substance": "Latex", "severity": "mild"}, content_type=J)
    url = f"/admin/records/merge/?survivor={a}&retired={b}"
    stale = clerk.post(url, {"reason": "Registered twice at night", "confirm": "on",
                             "survivor_etag": s_tag, "retired_etag": r_tag})
    html = stale.content.decode()
    assert stale.status_code == 200
    assert "changed by someone else meanwhile" in html
    assert "Registered twice at night" in html and "Latex" in html
    assert escape(_etags(his_store, b)[0]) in html  # re-bound to the version shown now
    assert not his_store.read(keys.patient(b), "patient")["docContents"].get("mergedInto")


def test_both_admitted_blocks_the_merge_plainly(web, admit) -> None:
    clerk = web("clerk")
    a = admit("Kowalska", given="Łucja")
    b = admit("KOWALSKA", given="Lucja", bed="")
    html = clerk.get(f"/admin/records/merge/?survivor={a}&retired={b}").content.decode()
    assert 'data-conflict="both-admitted"' in html and 'id="merge-form"' not in html
    assert f'href="/admin/patients/{a}/"' in html


def test_records_staff_undo_a_merge_with_a_reason(web, pair: tuple[str, str],
                                                  his_store: DocumentStore) -> None:
    clerk = web("clerk")
    a, b = pair
    s_tag, r_tag = _etags(his_store, a, b)
    clerk.post(f"/admin/records/merge/?survivor={a}&retired={b}", {
        "reason": "Same NHS number", "confirm": "on", "survivor_etag": s_tag,
        "retired_etag": r_tag})
    undo = f"/admin/records/merged/{b}/undo/"
    assert "Undo the merge of" in clerk.get(undo).content.decode()
    assert web("nurse").get(undo).status_code == 403
    blank = clerk.post(undo, {"reason": ""})
    assert blank.status_code == 200 and "This field is required." in blank.content.decode()
    done = clerk.post(undo, {"reason": "Wrong survivor chosen"}, follow=True)
    assert "Merge undone" in done.content.decode()
    html = clerk.get(f"/admin/patients/{b}/").content.decode()
    assert 'id="merged-into"' not in html and 'id="demographics-link"' in html
