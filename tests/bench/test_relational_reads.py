"""The baseline serves the reads the ward-shift mix polls on both systems: a ward's bed board
and a patient's medication administration record, over HTTP from a seeded baseline (as
``bench.compare.run_relational`` starts it), with the product's paths and shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench import workload
from bench.compare import HttpClient, free_port, stop_group, wait_ready
from bench.driver import Tokens

pytestmark = [pytest.mark.bench, pytest.mark.timeout(240)]
ROOT = Path(__file__).resolve().parents[2]
API = "/api/v1"
PATIENTS = 30


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpClient, Tokens]]:
    var = tmp_path_factory.mktemp("relational")
    env = dict(os.environ, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="bench.relational.settings",
               RELATIONAL_VAR_DIR=str(var))
    env.pop("RELATIONAL_DATABASE_URL", None)  # the SQLite file in var
    subprocess.run([sys.executable, "-m", "bench.relational.seed", "--patients", str(PATIENTS),
                    "--out", str(var / "prep.json"), "--cost-iterations", "1"],
                   env=env, cwd=ROOT, check=True, capture_output=True, timeout=180)
    tokens = Tokens(**json.loads((var / "prep.json").read_text())["tokens"])
    port = free_port()
    with (var / "gunicorn.log").open("ab") as log:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "bench.relational.wsgi", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "--threads", "2", "--graceful-timeout", "5"],
            env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, tokens.admin, timeout=60)
        yield HttpClient(base), tokens
    finally:
        stop_group(proc)


def _ok(answer: tuple[int, Any], status: int = 200) -> Any:
    code, body = answer
    assert code == status, body
    return body


def test_a_ward_board_lists_its_beds_with_the_seeded_occupants(
        baseline: tuple[HttpClient, Tokens]) -> None:
    client, tokens = baseline
    plan = workload.plan(PATIENTS)
    stays = [(p, s) for p in plan for s in p.stays if s.current]
    patient, stay = stays[0]
    board = _ok(client.call("GET", f"{API}/wards/{stay.ward}/beds", token=tokens.nurse))
    ward = next(w for w in workload.hospital() if w.code == stay.ward)
    assert [b["code"] for b in board] == sorted(ward.beds)
    occupied = {b["code"]: b for b in board if b["state"] == "occupied"}
    assert set(occupied) == {s.bed for _, s in stays if s.ward == stay.ward}
    bed = occupied[stay.bed]
    assert bed["patient_id"] == bed["patient"]["id"] and bed["since"] and bed["etag"] == "1"
    seen = bed["patient"]
    assert seen["name"] == f"{patient.family.upper()}, {patient.given}"
    assert seen["birth_date"] == patient.birth_date.isoformat() and seen["sex"] == patient.sex
    assert seen["length_of_stay"] == stay.days_ago and seen["age"] >= 0
    assert seen["allergies"] == ("has_allergies" if patient.allergies else "no_known_allergies")
    free = next(b for b in board if b["state"] == "free")
    assert free == {"code": free["code"], "state": "free", "since": None, "patient_id": None,
                    "patient": None, "etag": None}


def test_an_admitted_patient_fills_the_bed_and_the_mar_and_leaves_the_bed_free(
        baseline: tuple[HttpClient, Tokens]) -> None:
    client, tokens = baseline
    dept, ward, code = workload.free_beds(workload.plan(PATIENTS))[0]
    tok = tokens.admin

    def bed() -> dict[str, Any]:
        board = _ok(client.call("GET", f"{API}/wards/{ward}/beds", token=tokens.nurse))
        return next(b for b in board if b["code"] == code)

    assert bed()["state"] == "free"
    pid = _ok(client.call("POST", f"{API}/patients", {
        "given_name": "Ada", "family_name": "Mar", "birth_date": "1961-04-12",
        "sex": "female"}, tok), 201)["id"]
    _ok(client.call("POST", f"{API}/patients/{pid}/admissions", {
        "department_id": dept, "ward_id": ward, "bed": code, "reason": "Chest pain"}, tok), 201)
    occupied = bed()
    assert occupied["state"] == "occupied" and occupied["patient_id"] == pid
    assert occupied["patient"]["name"] == "MAR, Ada"
    assert occupied["patient"]["allergies"] == "unknown"
    assert occupied["patient"]["length_of_stay"] == 0

    _ok(client.call("POST", f"{API}/patients/{pid}/allergies/none", {}, tok))
    assert bed()["patient"]["allergies"] == "no_known_allergies"
    order = _ok(client.call("POST", f"{API}/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
        "route": "PO", "frequency": "Q6H"}, tok), 201)
    oid = order["order_id"]
    _ok(client.call("POST", f"{API}/patients/{pid}/orders/{oid}/ready", {"reason": ""}, tok))
    _ok(client.call("POST", f"{API}/patients/{pid}/orders/{oid}/administrations",
                    {"dose": "1000", "unit": "mg"}, tok), 201)
    today = datetime.now(UTC).date().isoformat()

    record = _ok(client.call("GET", f"{API}/patients/{pid}/mar?date={today}", token=tokens.nurse))
    assert record["patient_id"] == pid and record["date"] == today and record["now"]
    [row] = record["orders"]
    assert row["order_id"] == oid and row["status"] == "in_progress" and row["etag"] == "3"
    assert (row["medication_code"], row["dose"], row["unit"], row["route"], row["frequency"],
            row["frequency_hours"], row["as_needed"]) == ("PARA", "1000", "mg", "PO", "Q6H",
                                                          6.0, False)
    assert row["start_at"] and row["end_at"] is None and row["data_errors"] == []
    [given] = row["administrations"]
    assert (given["dose"], given["unit"], given["by"], given["status"]) == \
        ("1000", "mg", "admin", "given")
    slots = row["slots"]
    assert 1 <= len(slots) <= 4  # every six hours from the order's placing, within the day
    assert [s["scheduled_for"] for s in slots] == sorted(s["scheduled_for"] for s in slots)
    assert all(s["scheduled_for"][:10] == today and s["slot_id"].startswith(oid + ".")
               for s in slots)
    first = slots[0]  # placed now: the first dose time is now, and the dose answered it
    assert first["status"] == "given"
    assert first["administration"]["administration_id"] == given["administration_id"]
    assert given["slot_id"] == first["slot_id"]
    assert all(s["status"] == "upcoming" for s in slots[1:])
    # The default day is today; another day has nothing.
    assert _ok(client.call("GET", f"{API}/patients/{pid}/mar", token=tokens.nurse)
               )["orders"][0]["order_id"] == oid
    assert _ok(client.call("GET", f"{API}/patients/{pid}/mar?date=2000-01-01",
                           token=tokens.nurse))["orders"] == []

    _ok(client.call("POST", f"{API}/patients/{pid}/discharge", {"disposition": "home"}, tok))
    assert bed() == {"code": code, "state": "free", "since": None, "patient_id": None,
                     "patient": None, "etag": None}
    # Cancelled at discharge, given today: still on today's record.
    [row] = _ok(client.call("GET", f"{API}/patients/{pid}/mar", token=tokens.nurse))["orders"]
    assert row["status"] == "cancelled" and len(row["administrations"]) == 1


def test_unknown_wards_and_patients_are_404_and_a_bad_date_400(
        baseline: tuple[HttpClient, Tokens]) -> None:
    client, tokens = baseline
    for path in (f"{API}/wards/NO-SUCH-WARD/beds",
                 f"{API}/patients/00000000-0000-0000-0000-000000000000/mar",
                 f"{API}/patients/not-a-uuid/mar"):
        assert client.call("GET", path, token=tokens.nurse)[0] == 404, path
    status, body = client.call("GET", f"{API}/wards/NO-SUCH-WARD/beds", token=tokens.nurse)
    assert body == {"title": "No such ward.", "status": 404}
    pid = next(b["patient_id"] for w in workload.hospital()
               for b in _ok(client.call("GET", f"{API}/wards/{w.code}/beds", token=tokens.nurse))
               if b["patient_id"])
    for bad in ("2026-13-01", "20260301", "yesterday", "9999-12-31"):
        status, body = client.call("GET", f"{API}/patients/{pid}/mar?date={bad}",
                                   token=tokens.nurse)
        assert status == 400 and body["status"] == 400, (bad, body)
    assert client.call("GET", f"{API}/wards/{workload.hospital()[0].code}/beds")[0] == 401
