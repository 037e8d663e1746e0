"""Prepare the baseline database: schema, users, tokens, the bench hospital, then the planned
patients with ``bulk_create`` (their final state, as the product holds it after seeding), then
SQL statements per command for one driver iteration through the API in-process.

    RELATIONAL_DATABASE_URL=... python -m bench.relational.seed --patients N --out prep.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import django
from django.core.management import call_command
from django.db import connection
from django.test import Client

from bench import workload
from bench.driver import Tokens, iteration

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.relational.settings")

ROLES = (("clerk", "clerk"), ("clinician", "clinician"), ("nurse", "nurse"))
REFERENCE = Path(__file__).resolve().parents[2] / "patients" / "reference_data"


def _users() -> dict[str, Any]:
    from django.contrib.auth.models import Group, User  # models: after django.setup()

    users = {}
    for username, role in ROLES:
        user, _ = User.objects.get_or_create(username=username)
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        users[username] = user
    admin, _ = User.objects.get_or_create(username="admin", defaults={
        "is_superuser": True, "is_staff": True})
    users["admin"] = admin
    return users


def _token(user: Any) -> str:
    from bench.relational.models import ApiToken  # models: after django.setup()

    raw = "rel_" + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, key_hash=hashlib.sha256(raw.encode()).hexdigest())
    return raw


def _hospital() -> None:
    from bench.relational.models import Bed, Department, Ward  # models: after django.setup()

    for d in json.loads((REFERENCE / "Department.json").read_text()):
        Department.objects.update_or_create(code=d["code"], defaults={"name": d["name"]})
    wards = [(w["code"], w["departmentId"], w["name"], w["beds"])
             for w in json.loads((REFERENCE / "Ward.json").read_text())]
    wards += [(w.code, w.department, w.name, list(w.beds)) for w in workload.hospital()]
    for code, dept, name, beds in wards:
        Ward.objects.update_or_create(code=code, defaults={"name": name, "department_id": dept})
        Bed.objects.bulk_create([Bed(ward_id=code, code=b) for b in beds],
                                ignore_conflicts=True)


def seed(patients: list[Any], users: dict[str, Any]) -> None:
    from bench.relational.models import (  # models: after django.setup()
        Administration,
        Admission,
        Allergy,
        AuditEvent,
        Bed,
        Order,
        Patient,
        fold,
    )

    now = datetime.now(UTC)
    beds = {(b.ward_id, b.code): b.id for b in Bed.objects.all()}
    nurse = users["nurse"]
    chunk = 2000
    for start in range(0, len(patients), chunk):
        rows: dict[str, list[Any]] = {k: [] for k in ("p", "al", "ad", "o", "adm", "ev")}
        for plan in patients[start:start + chunk]:
            p = Patient(mrn=plan.mrn, given_name=plan.given, family_name=plan.family,
                        name_key=fold(f"{plan.family} {plan.given}"),
                        birth_date=plan.birth_date, sex=plan.sex, created_at=now,
                        updated_at=now,
                        no_known_allergies_at=None if plan.allergies else now)
            rows["p"].append(p)
            for substance, reaction, severity in plan.allergies:
                rows["al"].append(Allergy(patient=p, substance=substance, reaction=reaction,
                                          severity=severity, recorded_at=now,
                                          recorded_by="clinician"))
            for stay in plan.stays:
                started = now - timedelta(days=stay.days_ago)
                a = Admission(patient=p, status="active" if stay.current else "ended",
                              department_id=stay.department, ward_id=stay.ward,
                              bed_id=beds.get((stay.ward, stay.bed)), attending_id="1",
                              attending_name="Grace Hopper", reason=stay.reason,
                              started_at=started,
                              ended_at=None if stay.current else
                              started + timedelta(days=stay.length_of_stay),
                              disposition="" if stay.current else "home")
                rows["ad"].append(a)
                for o in stay.orders:
                    order = Order(patient=p, admission=a, kind=o.kind, status=o.status,
                                  urgency=o.urgency, description=o.kind,
                                  department_id=stay.department, ward_id=stay.ward,
                                  assignee=nurse if o.assign_to_nurse else None,
                                  assignee_name="nurse" if o.assign_to_nurse else "",
                                  placed_at=started, placed_by="clinician", **o.fields)
                    rows["o"].append(order)
                    for _ in range(o.administrations):
                        rows["adm"].append(Administration(order=order, at=started,
                                                          dose=o.fields["dose"],
                                                          unit=o.fields["unit"], by="nurse"))
            # One audit row per command, as many as the product's event documents.
            rows["ev"] += [AuditEvent(patient=p, seq=s, type="Seeded", occurred_at=now,
                                      actor="seed", data={}) for s in range(1, plan.commands() + 1)]
        Patient.objects.bulk_create(rows["p"])
        Allergy.objects.bulk_create(rows["al"])
        Admission.objects.bulk_create(rows["ad"])
        Order.objects.bulk_create(rows["o"])
        Administration.objects.bulk_create(rows["adm"])
        AuditEvent.objects.bulk_create(rows["ev"], batch_size=5000)


class _TestClient:
    def __init__(self) -> None:
        self.client = Client()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             token: str | None = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        kwargs: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}", "headers": headers}
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        response = getattr(self.client, method.lower())(path, **kwargs)
        return response.status_code, json.loads(response.content or b"null")


def command_costs(tokens: Any, beds: list[tuple[str, str, str]], iterations: int
                  ) -> dict[str, Any]:
    """SQL statements (round trips to the database) and bytes sent per command."""
    calls: Counter[str] = Counter()
    sent = [0]

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        calls[sql.split(" ", 1)[0].upper()] += 1
        sent[0] += len(sql) + len(str(params or ""))
        return execute(sql, params, many, context)

    totals: dict[str, dict[str, float]] = {}

    def hook(name: str) -> None:
        row = totals.setdefault(name, {"n": 0, "sync_round_trips": 0.0,
                                       "sync_bytes_written": 0.0})
        row["n"] += 1
        row["sync_round_trips"] += sum(calls.values())
        row["sync_bytes_written"] += sent[0]
        calls.clear()
        sent[0] = 0

    with connection.execute_wrapper(wrapper):
        for i in range(iterations):
            iteration(_TestClient(), tokens, 900_000 + i, beds[i % len(beds)], hook=hook)
    return {name: {k: round(v / row["n"], 2) for k, v in row.items() if k != "n"}
            for name, row in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patients", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cost-iterations", type=int, default=5)
    args = parser.parse_args()
    django.setup()
    call_command("migrate", "--noinput", verbosity=0)
    users = _users()
    _hospital()
    plan = workload.plan(args.patients)
    t0 = time.perf_counter()
    seed(plan, users)
    seed_s = time.perf_counter() - t0
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    else:
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    tokens = Tokens(admin=_token(users["admin"]), nurse=_token(users["nurse"]))
    beds = workload.free_beds(plan)
    costs = command_costs(tokens, beds[-args.cost_iterations:], args.cost_iterations)
    args.out.write_text(json.dumps({"tokens": tokens.__dict__, "seed_s": round(seed_s, 1),
                                    "costs": costs, "vendor": connection.vendor}, indent=2))
    print(f"  baseline ({connection.vendor}) ready: seed {seed_s:.0f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
