"""Each role × each command, in the API and in the pages: allowed or 403, never 500."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from hisadmin.core.policy import ADMIN_ACTIONS, REFERENCE_ACTIONS, WORKLIST_ACTIONS
from hisadmin.core.policy import RECORD_ACTIONS as COMMAND_ROLES

pytestmark = pytest.mark.django_db
J = "application/json"
ROLES = ("clerk", "clinician", "nurse", "admin", "")


@pytest.fixture
def record(api_client, reference_data) -> dict[str, str]:
    clerk, doc = api_client("clerk"), api_client("clinician")
    pid = clerk.post("/api/v1/patients", {"given_name": "P", "family_name": "Matrix",
                                          "birth_date": "1970-01-01"}, content_type=J).json()["id"]
    clerk.post(f"/api/v1/patients/{pid}/admissions", {"department_id": "MED",
               "ward_id": "MED-1", "reason": "x"}, content_type=J)
    order = doc.post(f"/api/v1/patients/{pid}/orders", {"kind": "lab", "test_code": "CBC"},
                     content_type=J).json()
    allergy = doc.post(f"/api/v1/patients/{pid}/allergies", {"substance": "Latex",
                       "severity": "mild"}, content_type=J).json()["allergies"][0]
    observation = doc.post(f"/api/v1/patients/{pid}/observations", {"pulse": 120},
                           content_type=J).json()
    return {"pid": pid, "oid": order["order_id"], "aid": allergy["allergy_id"],
            "obsid": observation["observation_id"]}


def api_calls(r: dict[str, str]) -> dict[str, Callable[[Client], object]]:
    p = f"/api/v1/patients/{r['pid']}"
    o = f"{p}/orders/{r['oid']}"
    return {
        "register": lambda c: c.post("/api/v1/patients", {"given_name": "N", "family_name": "N",
                                                          "birth_date": "1980-01-01"},
                                     content_type=J),
        "update_demographics": lambda c: c.put(p, {"given_name": "P", "family_name": "Matrix",
                                                   "birth_date": "1970-01-01", "sex": "other"},
                                               content_type=J),
        "admit": lambda c: c.post(f"{p}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                                      "reason": "x"}, content_type=J),
        "transfer": lambda c: c.post(f"{p}/transfer", {"ward_id": "MED-2"}, content_type=J),
        "discharge": lambda c: c.post(f"{p}/discharge", {"disposition": "home"}, content_type=J),
        "add_allergy": lambda c: c.post(f"{p}/allergies", {"substance": "Nuts", "severity": "mild"},
                                        content_type=J),
        "remove_allergy": lambda c: c.delete(f"{p}/allergies/{r['aid']}"),
        "place_order": lambda c: c.post(f"{p}/orders", {"kind": "lab", "test_code": "CRP"},
                                        content_type=J),
        "progress_order": lambda c: c.post(f"{o}/ready", {}, content_type=J),
        "cancel_order": lambda c: c.post(f"{o}/cancel", {"reason": "test"}, content_type=J),
        "assign_order": lambda c: c.put(f"{o}/assignee", {"assignee": None}, content_type=J),
        "administer": lambda c: c.post(f"{o}/administrations", {"dose": "1", "unit": "mg"},
                                       content_type=J),
        "acknowledge_result": lambda c: c.post(f"{o}/acknowledge", {}, content_type=J),
        "read": lambda c: c.get(p),
        "write_handover": lambda c: c.post(f"{p}/handovers", {
            "situation": "s", "background": "b", "assessment": "a", "recommendation": "r"},
            content_type=J),
        "acknowledge_handover": lambda c: c.post(f"{p}/handovers/2026-01-01-day/acknowledge"),
        "record_observations": lambda c: c.post(f"{p}/observations", {"pulse": 80},
                                                content_type=J),
        "decide_spo2_scale": lambda c: c.post(f"{p}/spo2-scale", {"scale": 1, "reason": "r"},
                                              content_type=J),
        "escalate_observations": lambda c: c.post(
            f"{p}/observations/{r['obsid']}/escalations",
            {"told_whom": "Dr X", "response": "plan"}, content_type=J),
    }


@pytest.mark.parametrize("role", ROLES)
def test_it_enforces_the_role_table_in_the_api(api_client, record: dict[str, str],
                                               role: str) -> None:
    client = api_client(*([role] if role else []))
    calls = api_calls(record)
    assert set(calls) == set(COMMAND_ROLES)  # the matrix covers every command
    for command, call in calls.items():
        response = call(client)
        allowed = role in {r.value for r in COMMAND_ROLES[command]}
        assert response.status_code < 500, (command, role, response.content)
        if allowed:
            assert response.status_code != 403, (command, role, response.content)
        else:
            assert response.status_code == 403, (command, role, response.status_code)


PAGES = {  # command → the page that runs it (GET shows the form, POST submits it)
    "register": "/admin/patients/register/",
    "update_demographics": "/admin/patients/{pid}/demographics/",
    "admit": "/admin/patients/{pid}/admit/",
    "transfer": "/admin/patients/{pid}/transfer/",
    "add_allergy": "/admin/patients/{pid}/allergies/add/",
    "place_order": "/admin/patients/{pid}/orders/new/lab/",
    "administer": "/admin/patients/{pid}/orders/{oid}/administer/",
    "read": "/admin/patients/{pid}/",
    "write_handover": "/admin/patients/{pid}/handovers/new/",
    "record_observations": "/admin/patients/{pid}/observations/new/",
    "decide_spo2_scale": "/admin/patients/{pid}/spo2-scale/",
    "escalate_observations": "/admin/patients/{pid}/observations/{obsid}/escalate/",
}
POST_ONLY = {  # commands behind buttons on the chart
    "discharge": "/admin/patients/{pid}/discharge/",
    "remove_allergy": "/admin/patients/{pid}/allergies/{aid}/remove/",
    "acknowledge_result": "/admin/patients/{pid}/orders/{oid}/acknowledge/",
    "acknowledge_handover": "/admin/patients/{pid}/handovers/2026-01-01-day/acknowledge/",
}


@pytest.mark.parametrize("role", ROLES)
def test_it_enforces_the_role_table_in_the_pages(make_user, record: dict[str, str],
                                                 role: str) -> None:
    client = Client()
    client.force_login(make_user(f"page-{role or 'none'}", *([role] if role else [])))
    assert set(PAGES) | set(POST_ONLY) | {"progress_order", "cancel_order", "assign_order"} \
        == set(COMMAND_ROLES)  # the matrix covers every command
    for command, url in PAGES.items():
        allowed = role in {r.value for r in COMMAND_ROLES[command]}
        for method in ("get", "post"):
            response = getattr(client, method)(url.format(**record), {})
            assert response.status_code < 500, (command, role, method)
            assert (response.status_code == 403) is not allowed, \
                (command, role, method, response.status_code)
    for command, url in POST_ONLY.items():
        response = client.post(url.format(**record), {})
        allowed = role in {r.value for r in COMMAND_ROLES[command]}
        assert response.status_code < 500, (command, role)
        assert (response.status_code == 403) is not allowed, (command, role)
    for command, action in (("progress_order", "ready"), ("cancel_order", "cancel"),
                            ("assign_order", "assign")):
        response = client.post(f"/admin/patients/{record['pid']}/orders/{record['oid']}/action/",
                               {"action": action, "reason": "r"})
        allowed = role in {r.value for r in COMMAND_ROLES[command]}
        assert response.status_code < 500
        assert (response.status_code == 403) is not allowed, (command, role)


OTHER_PAGES = {  # worklist and administration actions → a page each guards
    "read_worklists": "/admin/worklists/admitted/",
    "read_order_worklists": "/admin/worklists/orders/",
    "read_medications_due": "/admin/worklists/medications-due/",
    "read_results_to_review": "/admin/worklists/results-to-review/",
    "read_my_patients": "/admin/worklists/my-patients/",
    "read_census": "/admin/worklists/census/?ward=MED-1",
    "read_observation_worklists": "/admin/worklists/at-risk/",
    "manage_reference_data": "/admin/reference/",
    "manage_dead_letters": "/admin/worklists/dead-letters/",
    "read_access_log": "/admin/access-log/",
    "manage_webhooks": "/admin/webhooks/",
}
OTHER_API = {
    "read_worklists": "/api/v1/worklists/admitted?department=MED",
    "read_order_worklists": "/api/v1/worklists/orders?department=MED",
    "read_medications_due": "/api/v1/worklists/medications-due?ward=MED-1",
    "read_results_to_review": "/api/v1/worklists/results-to-review",
    "read_my_patients": "/api/v1/worklists/my-patients",
    "read_census": "/api/v1/wards/census?ward=MED-1",
    "read_observation_worklists": "/api/v1/worklists/at-risk?department=MED",
    "read_reference": "/api/v1/reference/medications",
}


@pytest.mark.parametrize("role", ROLES)
def test_it_enforces_the_worklist_and_admin_actions(make_user, api_client, reference_data,
                                                    role: str) -> None:
    assert set(OTHER_PAGES) == set(WORKLIST_ACTIONS) | set(ADMIN_ACTIONS)
    client = Client()
    client.force_login(make_user(f"other-{role or 'none'}", *([role] if role else [])))
    assert set(REFERENCE_ACTIONS) <= set(OTHER_API)
    table = {**WORKLIST_ACTIONS, **REFERENCE_ACTIONS, **ADMIN_ACTIONS}
    for action, url in OTHER_PAGES.items():
        allowed = role in {r.value for r in table[action]}
        response = client.get(url)
        assert response.status_code < 500, (action, role)
        assert (response.status_code == 403) is not allowed, (action, role, response.status_code)
    api = api_client(*([role] if role else []))
    for action, url in OTHER_API.items():
        allowed = role in {r.value for r in table[action]}
        response = api.get(url)
        assert response.status_code < 500, (action, role)
        assert (response.status_code == 403) is not allowed, (action, role, response.status_code)
