"""Worklist benchmarks on the embedded store: rebuild throughput and page latency by size.

    python -m bench.worklists_bench --quick          # 1k and 10k patients
    python -m bench.worklists_bench --sizes 1000 10000 100000

Per size: a fresh store with N patients (30 % admitted, spread over four departments; each
with PatientRegistered + AdmissionStarted events), a rebuild of every view (events/s), then
the p50/p99 of a 50-row Admitted page (first page and a continuation page) on the largest
department. End-to-end freshness through Redis and Celery is measured separately
(``bench.worklists_freshness``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")

import django

django.setup()

from cosmos_backend.embedded.store import EmbeddedStore  # noqa: E402
from cosmos_backend.envelope import wrap  # noqa: E402
from cosmos_backend.store import BatchOp  # noqa: E402
from hisadmin.core.store import open_embedded  # noqa: E402
from worklists.ops import maintenance  # noqa: E402
from worklists.read import queries  # noqa: E402

DEPTS = ["CARD", "MED", "SURG", "PAED"]
T0 = "2026-01-05T08:00:00+00:00"


def populate(store: EmbeddedStore, n: int) -> int:
    events = 0
    for i in range(n):
        pid = str(uuid.uuid4())
        pk = f"P_{pid}"
        patient = {"patientId": pid, "mrn": f"B{i:08d}", "givenName": "Bench",
                   "familyName": f"Name{i:06d}", "birthDate": "1970-01-01", "sex": "female"}
        docs = [wrap(doc_id="patient", pk=pk, doc_type="Patient", contents=patient)]
        evts = [("PatientRegistered", patient)]
        if i % 10 < 3:
            dept = DEPTS[i % 4]
            adm = {"admissionId": str(uuid.uuid4()), "patientId": pid, "status": "active",
                   "departmentId": dept, "wardId": f"{dept}-1", "bed": f"B{i}",
                   "attendingId": "1", "attendingName": "Dr Bench", "startedAt": T0}
            docs.append(wrap(doc_id=f"adm-{adm['admissionId']}", pk=pk, doc_type="Admission",
                             contents=adm))
            evts.append(("AdmissionStarted", adm))
        for seq, (etype, data) in enumerate(evts, 1):
            docs.append(wrap(doc_id=f"evt-{seq:010d}", pk=pk, doc_type="Event", sub_type=etype,
                             contents={"seq": seq, "type": etype, "data": data, "stream": pk}))
        docs.append(wrap(doc_id="stream", pk=pk, doc_type="Stream", contents={"seq": len(evts)}))
        store.execute_batch(pk, [BatchOp.create(d) for d in docs])
        events += len(evts)
    return events


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def run(n: int, directory: Path, pages: int) -> dict[str, float]:
    store = open_embedded(directory / f"bench-{n}.sqlite3")  # record and views, two files
    events = populate(store, n)
    ids = sorted(set(maintenance.patient_ids(store)))
    started = time.perf_counter()
    maintenance.rebuild(store, ids)
    took = time.perf_counter() - started
    first, later = [], []
    token = None
    for i in range(pages):
        t = time.perf_counter()
        result = queries.run(store, queries.admitted("CARD", sort="name"), continuation=None)
        first.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        result = queries.run(store, queries.admitted("CARD", sort="name"), continuation=token)
        later.append((time.perf_counter() - t) * 1000)
        token = result.continuation if i % 20 else None
    store.close()
    return {"patients": n, "events": events, "rebuild_events_per_s": events / took,
            "rebuild_patients_per_s": len(ids) / took, "page_p50_ms": statistics.median(first),
            "page_p99_ms": pct(first, 0.99), "next_page_p99_ms": pct(later, 0.99)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000])
    args = parser.parse_args()
    sizes = [1000, 10000] if args.quick else args.sizes
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            r = run(n, Path(tmp), pages=200)
            print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in r.items()), flush=True)


if __name__ == "__main__":
    main()
