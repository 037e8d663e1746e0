"""End-to-end freshness: commit → visible in the Admitted worklist, at a sustained rate.

    python -m bench.worklists_freshness                    # 50 commands/s for 20 s
    python -m bench.worklists_freshness --rate 50 --seconds 5   # quick

Starts its own stack on a temporary store: an embedded Redis, one Celery worker process
(two pool processes) and one relay process, exactly as `make run` does. The driver admits
pre-registered patients at the given rate (each admission is one command: one batch with the
admission, the stream and the event); a watcher thread polls the patient's view row every
2 ms and records when it appears. Reports p50/p99/max and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=float, default=50.0, help="commands per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="freshness-"))
    os.environ.update(DJANGO_SETTINGS_MODULE="hisadmin.settings", HIS_VAR_DIR=str(tmp),
                      EMBEDDED_STORE_PATH=str(tmp / "store.sqlite3"))
    from hisadmin.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis(tmp / "redis")
    os.environ["REDIS_URL"] = redis.celery_url
    import django

    django.setup()
    from cosmos_backend.uow import UnitOfWork
    from hisadmin.core.actor import SYSTEM_ACTOR
    from hisadmin.core.store import get_store
    from patients import use_cases
    from worklists.persistence.generations import active_generation
    from worklists.persistence.view_rows import view_pk
    from worklists.projection.rows import ADMITTED

    store = get_store()
    list(use_cases.load_reference_data(UnitOfWork(store), actor=SYSTEM_ACTOR))
    n = int(args.rate * args.seconds)
    from datetime import date

    patients = [use_cases.register_patient(use_cases.RegisterPatient(
        given_name="Bench", family_name=f"Patient{i:05d}", birth_date=date(1970, 1, 1)),
        UnitOfWork(store), actor=SYSTEM_ACTOR).patient_id for i in range(n)]

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    bin_dir = Path(sys.executable).parent
    procs = [
        subprocess.Popen([str(bin_dir / "celery"), "-A", "hisadmin", "worker", "-Q",
                          "projections,celery", "--concurrency", "2", "--without-gossip",
                          "--without-mingle", "--loglevel", "WARNING"], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True),
        subprocess.Popen([sys.executable, "manage.py", "run_relay"], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True),
    ]
    try:
        # Let the registrations drain through relay and workers before timing admissions,
        # so the measurement is of a steady state, not of a backlog.
        import redis as redis_client

        from worklists.read.lag import relay_lag

        broker = redis_client.Redis(unix_socket_path=redis.socket)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if relay_lag()["pending"] == 0 and broker.llen("projections") == 0:
                break
            time.sleep(0.2)
        time.sleep(1)
        gen = active_generation(store)
        committed: dict[str, float] = {}
        visible: dict[str, float] = {}
        lock = threading.Lock()
        done = threading.Event()

        def watch() -> None:
            while not done.is_set() or len(visible) < len(committed):
                with lock:
                    pending = [p for p in committed if p not in visible]
                for pid in pending:
                    if store.try_read(view_pk(store, ADMITTED, gen, "MED"), pid) is not None:
                        visible[pid] = time.perf_counter()
                if time.monotonic() > deadline + args.seconds:
                    return
                time.sleep(0.002)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        interval = 1.0 / args.rate
        start = time.perf_counter()
        for i, pid in enumerate(patients):
            target = start + i * interval
            delay = target - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            use_cases.admit_patient(use_cases.AdmitPatient(
                patient_id=pid, department_id="MED", ward_id="MED-1", reason="bench"),
                UnitOfWork(store), actor=SYSTEM_ACTOR)
            with lock:
                committed[pid] = time.perf_counter()
        achieved = len(patients) / (time.perf_counter() - start)
        done.set()
        watcher.join(timeout=30)
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
        redis.shutdown()

    lat = sorted((visible[p] - committed[p]) * 1000 for p in committed if p in visible)
    missing = len(committed) - len(lat)

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(round(q * (len(lat) - 1))))] if lat else float("nan")

    report = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "rate_target": args.rate,
              "rate_achieved": round(achieved, 1), "commands": len(committed),
              "not_visible": missing, "p50_ms": round(pct(0.5), 1),
              "p99_ms": round(pct(0.99), 1), "max_ms": round(lat[-1], 1) if lat else None}
    print(json.dumps(report, indent=2))
    if not args.no_save:
        out = ROOT / "bench" / "results"
        out.mkdir(exist_ok=True)
        (out / f"freshness-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(
            json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
