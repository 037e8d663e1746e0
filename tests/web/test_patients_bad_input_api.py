"""Bad input on every endpoint: a specific 4xx problem naming the field, and nothing written."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
J = "application/json"
MED = {"kind": "medication", "medication_code": "PARA", "dose": "1", "unit": "g",
       "route": "PO", "frequency": "Q8H"}
PERSON = {"given_name": "Ana", "family_name": "Lopez", "birth_date": "1980-01-01",
          "sex": "female"}


@pytest.fixture
def world(api_client, reference_data, make_user) -> dict:
    clerk, doc, nurse = api_client("clerk"), api_client("clinician"), api_client("nurse")
    a = clerk.post("/api/v1/patients", {**PERSON, "mrn": "TAKEN1"}, content_type=J).json()
    b = clerk.post("/api/v1/patients", {**PERSON, "given_name": "Bea"},  # not a's duplicate
                   content_type=J).json()["id"]
    adm = clerk.post(f"/api/v1/patients/{a['id']}/admissions", {
        "department_id": "MED", "ward_id": "MED-1", "bed": "M101", "reason": "x"},
        content_type=J).json()
    # the allergy first: a medication order for a patient never asked is allergy-status-unknown
    allergy = doc.post(f"/api/v1/patients/{a['id']}/allergies", {
        "substance": "Latex", "severity": "mild"}, content_type=J).json()
    med = doc.post(f"/api/v1/patients/{a['id']}/orders", MED, content_type=J).json()
    lab = doc.post(f"/api/v1/patients/{a['id']}/orders", {"kind": "lab", "test_code": "CRP"},
                   content_type=J).json()
    return {"clients": {"clerk": clerk, "doc": doc, "nurse": nurse}, "a": a["id"], "b": b,
            "adm_etag": adm["etag"], "med": med["order_id"], "lab": lab["order_id"],
            "allergy": allergy["allergies"][0]["allergy_id"], "old_patient_etag": a["etag"]}


P = "/api/v1/patients"
# (who, method, path, body, headers, status, field or None, words the detail must contain)
CASES = [
    ("clerk", "post", P, {**PERSON, "given_name": ""}, {}, 422, "given_name", ""),
    ("clerk", "post", P, {**PERSON, "birth_date": "01/02/1980"}, {}, 422, "birth_date", ""),
    ("clerk", "post", P, {**PERSON, "birth_date": "2999-01-01"}, {}, 422, "birth_date", "future"),
    ("clerk", "post", P, {**PERSON, "sex": "robot"}, {}, 422, "sex", ""),
    ("clerk", "post", P, {**PERSON, "mrn": "has space"}, {}, 422, "mrn", "letters, digits"),
    ("clerk", "post", P, {**PERSON, "mrn": "taken1"}, {}, 409, "mrn", "already registered"),
    ("clerk", "post", P, "{not json", {}, 400, None, "parse"),
    ("clerk", "get", P + "/nobody", None, {}, 404, None, "No patient"),
    ("clerk", "put", P + "/{a}", {**PERSON, "family_name": ""}, {}, 422, "family_name", ""),
    ("clerk", "put", P + "/nobody", PERSON, {"If-Match": '"any"'}, 404, None, "No patient"),
    ("clerk", "put", P + "/{a}", PERSON, {}, 428, None, "If-Match"),
    ("clerk", "put", P + "/{a}", {**PERSON, "sex": "male"}, {"If-Match": "{old_patient_etag}"},
     412, None, "ETag"),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "NOPE", "ward_id": "MED-1",
                                               "reason": "x"}, {}, 422, "department_id", ""),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "MED", "ward_id": "NOPE",
                                               "reason": "x"}, {}, 422, "ward_id", ""),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "CARD", "ward_id": "MED-1",
                                               "reason": "x"}, {}, 422, "ward_id", "not a ward of"),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                               "bed": "Z9", "reason": "x"}, {}, 422, "bed", ""),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                               "bed": "M101", "reason": "x"}, {}, 409, "bed",
     "occupied"),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "MED", "ward_id": "MED-1"}, {},
     422, "reason", ""),
    ("clerk", "post", P + "/{b}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                               "reason": "x", "attending": "api-nurse"}, {},
     422, "attending", "not an active clinician"),
    ("clerk", "post", P + "/{a}/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                               "reason": "x"}, {}, 409, None, "already"),
    ("clerk", "post", P + "/nobody/admissions", {"department_id": "MED", "ward_id": "MED-1",
                                                  "reason": "x"}, {}, 404, None, ""),
    ("clerk", "post", P + "/{a}/transfer", {"ward_id": "NOPE"}, {}, 422, "ward_id", ""),
    ("clerk", "post", P + "/{a}/transfer", {"ward_id": "MED-2", "bed": "Z9"}, {}, 422, "bed", ""),
    ("clerk", "post", P + "/{a}/transfer", {"ward_id": "MED-1", "bed": "M101"}, {}, 422, "bed",
     "already"),
    ("clerk", "post", P + "/{b}/transfer", {"ward_id": "MED-2"}, {}, 409, None, "admit"),
    ("clerk", "post", P + "/{a}/discharge", {"disposition": "moon"}, {}, 422, "disposition", ""),
    ("clerk", "post", P + "/{b}/discharge", {"disposition": "home"}, {}, 409, None, "no active"),
    ("clerk", "post", P + "/{a}/discharge", {"disposition": "home"}, {"If-Match": '"stale"'},
     412, None, "ETag"),
    ("doc", "post", P + "/{a}/allergies", {"substance": "Nuts", "severity": "fatal"}, {}, 422,
     "severity", ""),
    ("doc", "post", P + "/{a}/allergies", {"substance": "", "severity": "mild"}, {}, 422,
     "substance", ""),
    ("doc", "post", P + "/{a}/allergies", {"substance": "latex", "severity": "mild"}, {}, 422,
     "substance", "already recorded"),
    ("doc", "delete", P + "/{a}/allergies/nope", None, {}, 404, "allergy_id", ""),
    ("doc", "post", P + "/{a}/orders", {"kind": "surgery"}, {}, 422, "kind", ""),
    ("doc", "post", P + "/{a}/orders", {**MED, "dose": "0"}, {}, 422, "dose", ""),
    ("doc", "post", P + "/{a}/orders", {**MED, "dose": None}, {}, 422, "dose", "positive dose"),
    ("doc", "post", P + "/{a}/orders", {**MED, "medication_code": "XX"}, {}, 422,
     "medication_code", ""),
    ("doc", "post", P + "/{a}/orders", {**MED, "unit": "bucket"}, {}, 422, "unit", ""),
    ("doc", "post", P + "/{a}/orders", {**MED, "start_at": "2026-02-02",
                                         "end_at": "2026-01-01"}, {}, 422, "end_at", ""),
    ("doc", "post", P + "/{a}/orders", {**MED, "urgency": "whenever"}, {}, 422, "urgency", ""),
    ("doc", "post", P + "/{a}/orders", {"kind": "imaging", "modality": "XR",
                                         "body_part": "CHEST"}, {}, 422, "modality", ""),
    ("doc", "post", P + "/{a}/orders", {"kind": "lab", "test_code": "NOPE"}, {}, 422,
     "test_code", ""),
    ("doc", "post", P + "/{b}/orders", MED, {}, 409, None, "admit the patient first"),
    ("nurse", "post", P + "/{a}/orders/{med}/complete", {}, {}, 409, None, "cannot be"),
    ("nurse", "post", P + "/{a}/orders/{med}/fly", {}, {}, 422, "action", ""),
    ("nurse", "post", P + "/{a}/orders/nope/ready", {}, {}, 404, None, "No order"),
    ("nurse", "post", P + "/{a}/orders/{med}/ready", {}, {"If-Match": '"stale"'}, 412, None, ""),
    ("doc", "post", P + "/{a}/orders/{med}/cancel", {"reason": ""}, {}, 422, "reason", ""),
    ("nurse", "put", P + "/{a}/orders/{med}/assignee", {"assignee": "ghost"},
     {"If-Match": '"any"'}, 422, "assignee", ""),
    ("nurse", "put", P + "/{a}/orders/{med}/assignee", {"assignee": None}, {}, 428, None,
     "If-Match"),
    ("nurse", "post", P + "/{a}/orders/{med}/administrations", {"dose": "0", "unit": "g"}, {},
     422, "dose", ""),
    ("nurse", "post", P + "/{a}/orders/{med}/administrations", {"dose": "1,5", "unit": "g"},
     {}, 422, "dose", "with a point"),  # a decimal comma is not read in the API
    ("nurse", "post", P + "/{a}/orders/{lab}/administrations", {"dose": "1", "unit": "g"}, {},
     409, None, "medication"),
    ("nurse", "post", P + "/{a}/orders/{med}/administrations", {"dose": "1", "unit": "pail"},
     {}, 422, "unit", ""),
    ("nurse", "post", P + "/{a}/orders/{med}/administrations", {"dose": "1"}, {}, 422, "unit",
     ""),
]


def test_it_answers_bad_input_with_a_specific_problem_and_writes_nothing(
        world: dict, his_store, subtests) -> None:
    # One record for every case (none of them may write), so the table runs in seconds.
    for who, method, path, body, headers, status, field, words in CASES:
        url = path.format(**world)
        with subtests.test(msg=f"{method} {path} → {status} {field or words}"):
            client: Client = world["clients"][who]
            extra = {f"HTTP_{k.upper().replace('-', '_')}": v.format(**world)
                     for k, v in headers.items()}
            before = his_store.count()
            if method in ("get", "delete"):
                response = getattr(client, method)(url, **extra)
            else:
                response = getattr(client, method)(url, body, content_type=J, **extra)
            assert response.status_code == status, response.content
            problem = response.json()
            assert problem["status"] == status and problem["title"] and problem["detail"]
            if field is not None:
                assert field in {e["field"] for e in problem.get("errors") or []}, problem
            assert words in problem["detail"], problem
            assert his_store.count() == before
