"""Read latency with and without the access audit (in-process, the real middleware stack).

    python -m bench.access_audit_bench [--reads 400] [--out FILE.json]

Provisions a throw-away var directory (migrate, cosmos_init, demo users, reference data),
registers and admits one patient, records that they have no known allergies (a medication
is only ordered once the allergies are asked) and places two orders, then times the same
reads of that patient's record in three modes, each with its own warm-up:

- ``off``: the audit middleware removed from the stack and the FHIR views' recording made
  a no-op (the reads as they were);
- ``background``: the audit on, records queued and written by the writer thread (what a
  server process does: ``hisadmin/wsgi.py`` starts the writer);
- ``inline``: the audit on, each record written in the request (what the background writer
  saves a request from).

Reads: the chart page (session), ``GET /api/v1/patients/{id}`` and ``…/mar`` (bearer token),
``GET /fhir/R4/Patient/{id}``. After the timed reads it checks that every read was recorded
exactly once. docs/benchmarks-access-audit.md has the numbers and how they were taken.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODES = ("off", "inline", "background")  # background last: the writer cannot be stopped


def _setup(var: Path) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="hisadmin.settings",
        HIS_VAR_DIR=str(var),
        EMBEDDED_STORE_PATH=str(var / "store.sqlite3"),
        DEMO_DATA="0",
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("COSMOS_ENDPOINT", None)
    import django

    django.setup()


def _provision() -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from hisadmin.models import ApiToken

    with open(os.devnull, "w") as quiet:
        call_command("migrate", "--noinput", verbosity=0)
        call_command("cosmos_init", stdout=quiet)
        call_command("setup_demo", "--no-patients", stdout=quiet)
    _, raw = ApiToken.issue(User.objects.get(username="clerk"), "bench")
    _, raw_doc = ApiToken.issue(User.objects.get(username="clinician"), "bench")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    doc = Client(HTTP_AUTHORIZATION=f"Bearer {raw_doc}")
    pid = api.post(
        "/api/v1/patients",
        {"given_name": "Bea", "family_name": "Bench", "birth_date": "1950-01-01"},
        content_type="application/json",
    ).json()["id"]
    r = api.post(
        f"/api/v1/patients/{pid}/admissions",
        {"department_id": "MED", "ward_id": "MED-1", "bed": "", "reason": "Bench"},
        content_type="application/json",
    )
    assert r.status_code == 201, r.content
    # A medication is checked against the allergies: they are asked first.
    r = doc.post(f"/api/v1/patients/{pid}/allergies/none", content_type="application/json")
    assert r.status_code == 200, r.content
    for code in ("PARA", "AMOX"):
        body = {
            "kind": "medication",
            "medication_code": code,
            "dose": "1",
            "unit": "g" if code == "AMOX" else "mg",
            "route": "PO",
            "frequency": "Q8H",
        }
        if code == "PARA":
            body["dose"] = "1000"
        r = doc.post(f"/api/v1/patients/{pid}/orders", body, content_type="application/json")
        assert r.status_code == 201, r.content
    return {"pid": pid, "token": raw_doc, "user": User.objects.get(username="clinician")}


def _clients(world: dict[str, Any]) -> tuple[Any, Any]:
    """A page client and an API client, new: a client loads the middleware stack at its
    first request and keeps it, so each mode needs its own."""
    from django.test import Client

    page = Client()
    page.force_login(world["user"])
    return page, Client(HTTP_AUTHORIZATION=f"Bearer {world['token']}")


def _time(client: Any, url: str, reads: int) -> list[float]:
    for _ in range(max(10, reads // 10)):  # warm-up: caches, connections, templates
        client.get(url)
    took = []
    for _ in range(reads):
        started = time.perf_counter()
        r = client.get(url)
        took.append((time.perf_counter() - started) * 1000)
        assert r.status_code == 200, (url, r.status_code)
    return took


def _summary(took: list[float]) -> dict[str, float]:
    ordered = sorted(took)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


def run(reads: int) -> dict[str, Any]:
    from django.conf import settings
    from django.test import override_settings

    from hisadmin.core import access_log
    from operations.models import AccessRecord

    world = _provision()
    pid = world["pid"]
    reads_of = {
        "chart page": f"/admin/patients/{pid}/",
        "API record": f"/api/v1/patients/{pid}",
        "API medication record": f"/api/v1/patients/{pid}/mar",
        "FHIR Patient": f"/fhir/R4/Patient/{pid}",
    }
    without = [m for m in settings.MIDDLEWARE if not m.endswith("AccessAuditMiddleware")]
    results: list[dict[str, Any]] = []
    for mode in MODES:
        if mode == "background":
            access_log.start_writer()
        before = AccessRecord.objects.count()
        timed = 0
        if mode == "off":  # the FHIR views record themselves: make that a no-op too
            access_log.LOG.record = lambda access: None  # type: ignore[method-assign]
        else:
            vars(access_log.LOG).pop("record", None)
        with override_settings(MIDDLEWARE=without if mode == "off" else settings.MIDDLEWARE):
            page, api = _clients(world)
            for name, url in reads_of.items():
                took = _time(page if name == "chart page" else api, url, reads)
                timed += len(took) + max(10, reads // 10)
                results.append({"mode": mode, "read": name, "reads": reads, **_summary(took)})
                print(
                    f"{mode:10} {name:22} "
                    + "  ".join(
                        f"{k} {v:7.3f}" for k, v in results[-1].items() if k.endswith("_ms")
                    ),
                    flush=True,
                )
        access_log.flush()
        recorded = AccessRecord.objects.count() - before
        expected = 0 if mode == "off" else timed
        assert recorded == expected, (mode, recorded, expected)
    return {
        "reads": reads,
        "results": results,
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cores": os.cpu_count(),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reads", type=int, default=400, help="timed reads per read and mode")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="his-access-bench-") as var:
        _setup(Path(var))
        report = run(args.reads)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
