"""The measured phases of ``bench.compare``, run against one system's base URL.

One client (command latency), four then eight clients for a sustained time each (throughput
and latency under load), freshness at a fixed rate, worklist reads, and the ward-shift mix:
screens polling what the pages poll while clients issue the clinical commands. Each phase
starts once the previous one's events are projected (``settle``); how long that took is kept
as the phase's drain.
"""

from __future__ import annotations

import http.client
import itertools
import os
import random
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import driver, workload
from bench.driver import Timings, Tokens
from bench.http_client import HttpClient


@dataclass(frozen=True)
class Phases:
    seq_iterations: int  # one client: command latency
    threads: int  # the first phase under load: four clients
    wide_threads: int  # the second: eight clients
    load_seconds: float  # how long each phase under load runs (stays back to back)
    fresh_rate: float  # admissions per second
    fresh_seconds: float
    reads: int  # requests per worklist
    mix_seconds: float  # the ward-shift mix
    mix_screens: int
    mix_clients: int
    repeats: int  # the whole comparison, the systems taking turns


QUICK = Phases(seq_iterations=10, threads=4, wide_threads=8, load_seconds=10, fresh_rate=20,
               fresh_seconds=5, reads=60, mix_seconds=20, mix_screens=60, mix_clients=8,
               repeats=1)
SMOKE = Phases(seq_iterations=2, threads=4, wide_threads=8, load_seconds=1.5, fresh_rate=10,
               fresh_seconds=1, reads=5, mix_seconds=3, mix_screens=10, mix_clients=2,
               repeats=1)
FULL = Phases(seq_iterations=40, threads=4, wide_threads=8, load_seconds=30, fresh_rate=50,
              fresh_seconds=10, reads=300, mix_seconds=60, mix_screens=60, mix_clients=8,
              repeats=3)

# What the pages poll, and how often (the pages' own refresh intervals; a test holds these
# equal to the page constants): a ward's list of admitted patients, a department's active
# orders and a nurse's own (worklists, every 2 s), a ward's bed board (3 s), a patient's
# medication administration record (10 s), a ward's Observations due and a department's
# Patients at risk (worklists, 2 s). Shares of the screens open at once.
SCREENS = (("admitted_ward", 2.0, 0.20), ("active_orders", 2.0, 0.10),
           ("my_orders", 2.0, 0.10), ("bed_board", 3.0, 0.20), ("mar", 10.0, 0.20),
           ("observations_due", 2.0, 0.10), ("at_risk", 2.0, 0.10))
# Observation sets inside the mix: the mix stands for one day of the wards, and every
# patient in a bed has a set taken every OBSERVATION_HOURS of it (NEWS2 low risk: 4-hourly),
# by the nurse, spread evenly over the mix.
OBSERVATION_HOURS = 4
OBSERVATION_SET = {"respiration_rate": 18, "spo2": 96, "on_oxygen": False, "systolic_bp": 124,
                   "diastolic_bp": 78, "pulse": 84, "consciousness": "A",
                   "temperature": "37,2"}  # as the form sends it: a decimal comma
# Freshness inside the mix: a prober admits its own patients at this rate (as admissions
# arrive on a ward) and polls each until its row shows, every POLL seconds.
MIX_PROBE_RATE = 5.0
MIX_PROBE_POLL = 0.01
MIX_PROBE_EACH = os.environ.get("BENCH_PROBE_EACH", "1") != "0"  # a watcher per admission


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def stats(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50_ms": pct(values, 0.5), "p95_ms": pct(values, 0.95),
            "p99_ms": pct(values, 0.99),
            "mean_ms": round(statistics.fmean(values), 2) if values else None}


class Ids:
    """Numbers for the driver's patients (each number its own identity,
    ``workload.identity("stay", n)``), unique across the phases and repeats of one bench
    process."""

    _blocks = itertools.count(1)

    def __init__(self) -> None:
        self.base = next(self._blocks) * 10_000_000
        self._phase = itertools.count(0)

    def phase(self) -> int:
        return self.base + next(self._phase) * 1_000_000


_unique = itertools.count(1)


# ------------------------------------------------------------------ the phases
def measure(base: str, tokens: Tokens, patients: list[workload.PatientPlan],
            phases: Phases, cpu: Callable[[], dict[str, float]] | None = None
            ) -> dict[str, Any]:
    ids = Ids()
    beds = workload.free_beds(patients)
    out: dict[str, Any] = {}
    client = HttpClient(base)
    driver.turn_over(client, tokens, beds[0])  # an earlier round's stay left it
    driver.iteration(client, tokens, ids.phase(), beds[0])  # warm-up: connections, caches
    # …and in every web worker and thread, not only the one the first session reached:
    # a cold worker's first requests would otherwise land in the first phase under load.
    under_load(base, tokens, beds[1:], phases.wide_threads, 0, ids.phase(), stays=1)

    def take(c: HttpClient, bed: tuple[str, str, str]) -> tuple[str, str, str]:
        driver.turn_over(c, tokens, bed)  # a bed a stay left is cleaned first (untimed)
        return bed

    seq = Timings()
    first = ids.phase()
    for i in range(phases.seq_iterations):
        driver.iteration(client, tokens, first + i, take(client, beds[i % len(beds)]), seq)
    all_seq = [ms for v in seq.by_command.values() for ms in v]
    out["commands"] = {"all": stats(all_seq),
                       "by_command": {k: stats(v) for k, v in seq.by_command.items()}}
    out["commands"]["drain_s"] = settle(client, tokens)
    # "throughput" keeps its name (four clients) so earlier results still compare.
    out["throughput"] = under_load(base, tokens, beds, phases.threads, phases.load_seconds,
                                   ids.phase(), cpu)
    out["throughput_wide"] = under_load(base, tokens, beds, phases.wide_threads,
                                        phases.load_seconds, ids.phase(), cpu)
    out["freshness"] = freshness(base, tokens, phases)
    settle(client, tokens)
    out["reads"] = reads(base, tokens, patients, phases)
    out["ward_mix"] = ward_mix(base, tokens, patients, phases, ids.phase(), cpu)
    return out


_sentinels = itertools.count()


def settle(client: HttpClient, tokens: Tokens, timeout: float = 120) -> float:
    """Wait until what was written so far is projected: one sentinel admission (no bed),
    polled on the Admitted worklist like the freshness phase does. Returns the seconds it
    took (the baseline reads its own writes: one poll)."""
    started = time.perf_counter()
    n = next(_sentinels)
    _, p = client.call("POST", "/api/v1/patients", workload.identity("settle", n),
                       tokens.admin)
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
    took = round(time.perf_counter() - started, 2)
    client.call("POST", f"/api/v1/patients/{p['id']}/discharge", {"disposition": "home"},
                tokens.admin)  # the sentinels do not pile up in MED's worklist
    return took


def under_load(base: str, tokens: Tokens, beds: list[tuple[str, str, str]], clients: int,
               seconds: float, first_id: int, cpu: Callable[[], dict[str, float]] | None = None,
               *, stays: int | None = None, begin: Callable[[], None] | None = None
               ) -> dict[str, Any]:
    """``clients`` threads, each its own session, each running stays back to back for
    ``seconds`` (or ``stays`` stays each), every stay in a bed of the client's own share of
    the free beds, taken in turn. The first round of beds is turned over before the clock
    starts; a bed taken again is turned over by its client off the clock (the product's go to
    cleaning when a patient leaves, a nurse's step the baseline does not model): the phase's
    commands/s divides by the clients' time in commands. ``begin`` runs as the clock starts.
    """
    share = max(1, len(beds) // clients)
    plan = [beds[t * share:(t + 1) * share] for t in range(clients)]
    prep = HttpClient(base)
    for mine in plan:
        for bed in mine[:stays or len(mine)]:
            driver.turn_over(prep, tokens, bed)
    loaded = Timings()
    errors: list[str] = []
    lock = threading.Lock()
    turnover = [0.0] * clients
    done_stays = [0] * clients
    deadline = [0.0]

    def worker(t: int) -> None:
        c = HttpClient(base)
        mine = Timings()
        j = 0
        cleaned = 0
        try:
            while (j < stays) if stays is not None else time.perf_counter() < deadline[0]:
                bed = plan[t][j % len(plan[t])]
                if j >= len(plan[t]):
                    began = time.perf_counter()
                    driver.turn_over(c, tokens, bed)
                    turnover[t] += time.perf_counter() - began
                try:
                    driver.iteration(c, tokens, first_id + t * 100_000 + j, bed, mine)
                except driver.Failed as exc:
                    # The bed board (a view) still showed the bed free while the worker had
                    # already sent it to cleaning: the nurse marks it clean, as the refusal
                    # says, and the next stay takes it (off the clock, a few times at most).
                    if "BedBeingCleaned" not in str(exc) or cleaned >= 20:
                        raise
                    began = time.perf_counter()
                    c.call("POST", f"{driver.API}/wards/{bed[1]}/beds/{bed[2]}/clean", None,
                           tokens.admin)
                    turnover[t] += time.perf_counter() - began
                    cleaned += 1
                j += 1
        except (driver.Failed, http.client.HTTPException, OSError) as exc:
            errors.append(str(exc) or type(exc).__name__)
        done_stays[t] = j
        with lock:
            for k, v in mine.by_command.items():
                loaded.by_command.setdefault(k, []).extend(v)

    cpu_before = cpu() if cpu else {}
    if begin is not None:
        begin()
    started = time.perf_counter()
    deadline[0] = started + seconds
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.perf_counter() - started
    busy = max(1e-6, took - statistics.fmean(turnover))
    done = sum(len(v) for v in loaded.by_command.values())
    out = {"clients": clients, "stays": sum(done_stays), "commands": done,
           "seconds": round(took, 2), "turnover_s": round(statistics.fmean(turnover), 2),
           "commands_per_s": round(done / busy, 1),
           "under_load": stats([ms for v in loaded.by_command.values() for ms in v]),
           "by_command": {k: stats(v) for k, v in loaded.by_command.items()},
           "errors": errors[:3], "drain_s": settle(prep, tokens)}
    # With the views current: the phase ends only when its commands show in the worklists
    # (the drain), so a system whose views fall behind is not paid for commands no screen
    # shows yet. The baseline reads its own writes: its drain is one admission and a read.
    out["commands_per_s_current"] = round(done / (busy + out["drain_s"]), 1)
    if cpu:  # after the drain: the projections of these commands included
        out["cpu_ms_per_command"] = cpu_per_command(cpu_before, cpu(), done)
    return out


def cpu_per_command(before: dict[str, float], after: dict[str, float], commands: int
                    ) -> dict[str, float]:
    """Milliseconds of CPU per command, by role, between two ``CpuMeter`` readings."""
    return {role: round((after[role] - before.get(role, 0.0)) * 1000 / max(1, commands), 2)
            for role in sorted(after)}


class Prober:
    """Admissions of patients of its own, at a fixed rate, each polled on the Admitted
    worklist API (q=MRN) until its row shows: visible − committed, where committed is the
    API's 201 received. The patients are registered (and projected) before, and discharged
    after, off the clock."""

    def __init__(self, base: str, tokens: Tokens, count: int, poll: float = 0.0,
                 each: bool = False) -> None:
        self.base, self.tokens, self.poll = base, tokens, poll
        # each: every admission is polled by a watcher of its own, so a row's detection never
        # waits behind the reads of the rows admitted before it (a read under the mix's load
        # takes tens to hundreds of ms); otherwise one watcher reads the pending rows in turn.
        self.each = each
        self.watchers: list[threading.Thread] = []
        self.client = HttpClient(base)
        depts = list(workload.DEPARTMENTS)
        self.people = []
        for i in range(count):
            _, p = self.client.call("POST", "/api/v1/patients",
                                    workload.identity("probe", next(_unique)), tokens.admin)
            self.people.append((p["id"], p["mrn"], depts[i % len(depts)]))
        # The registrations are a burst, faster than the rate under test: their projection
        # is let finish before the timed admissions start.
        self.settle_s = settle(self.client, tokens)
        self.committed: dict[str, float] = {}
        self.visible: dict[str, float] = {}
        self.lock = threading.Lock()
        self.sending = threading.Event()

    def _watch(self) -> None:
        c = HttpClient(self.base)
        deadline = None
        while True:
            with self.lock:
                pending = [(m, d) for (_, m, d) in self.people
                           if m in self.committed and m not in self.visible]
            if not self.sending.is_set():
                if not pending:
                    return
                deadline = deadline or time.monotonic() + 30
                if time.monotonic() > deadline:
                    return
            for mrn, dept in pending:
                self._shows(c, mrn, dept)
            # Polled back to back (``poll`` 0), or every ``poll`` seconds while rows are
            # awaited; every 2 ms while none is.
            time.sleep(self.poll if pending else 0.002)

    def run(self, rate: float, until: Callable[[], bool] | None = None) -> float:
        """Admit at ``rate`` per second (all, or until ``until()``); the rate achieved."""
        self.sending.set()
        watcher = None if self.each else threading.Thread(target=self._watch, daemon=True)
        if watcher is not None:
            watcher.start()
        interval = 1.0 / rate
        start = time.perf_counter()
        sent = 0
        for i, (pid, mrn, dept) in enumerate(self.people):
            if until is not None and until():
                break
            delay = start + i * interval - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.client.call("POST", f"/api/v1/patients/{pid}/admissions", {
                "department_id": dept, "ward_id": f"{dept}-B1", "reason": "Freshness"},
                self.tokens.admin)
            with self.lock:
                self.committed[mrn] = time.perf_counter()
            if self.each:
                one = threading.Thread(target=self._watch_one, args=(mrn, dept), daemon=True)
                one.start()
                self.watchers.append(one)
            sent += 1
        achieved = sent / max(1e-6, time.perf_counter() - start)
        self.sending.clear()
        until = time.monotonic() + 60
        for one in self.watchers if watcher is None else [watcher]:
            one.join(max(0.0, until - time.monotonic()))
        return achieved

    def _watch_one(self, mrn: str, dept: str) -> None:
        """Poll one admission's row until it shows (at most 60 s)."""
        c = HttpClient(self.base)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self._shows(c, mrn, dept):
            time.sleep(self.poll)

    def _shows(self, c: HttpClient, mrn: str, dept: str) -> bool:
        """Read the admission's row once; when it shows, note when."""
        status, body = c.call("GET", f"/api/v1/worklists/admitted?department={dept}&q={mrn}",
                              None, self.tokens.admin)
        if status == 200 and body.get("items"):
            with self.lock:
                self.visible[mrn] = time.perf_counter()
            return True
        return False

    def result(self) -> dict[str, Any]:
        lat = [(self.visible[m] - self.committed[m]) * 1000 for m in self.committed
               if m in self.visible]
        return {"commands": len(self.committed), "not_visible": len(self.committed) - len(lat),
                "settle_s": self.settle_s, **stats(lat),
                "max_ms": round(max(lat), 1) if lat else None}

    def discharge(self) -> None:
        """Off the clock: the probe's patients leave, so repeats read the same worklists."""
        for pid, mrn, _ in self.people:
            if mrn in self.committed:
                self.client.call("POST", f"/api/v1/patients/{pid}/discharge",
                                 {"disposition": "home"}, self.tokens.admin)


def freshness(base: str, tokens: Tokens, phases: Phases) -> dict[str, Any]:
    """Admissions at a fixed rate, each polled until visible (``Prober``)."""
    probe = Prober(base, tokens, int(phases.fresh_rate * phases.fresh_seconds))
    achieved = probe.run(phases.fresh_rate)
    out = {"rate_target": phases.fresh_rate, "rate_achieved": round(achieved, 1),
           **probe.result()}
    probe.discharge()
    return out


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


# ------------------------------------------------------------------ the ward-shift mix
def screen_paths(client: HttpClient, tokens: Tokens, count: int) -> list[tuple[str, str, float]]:
    """``count`` open screens as (kind, path, refresh seconds), spread over the hospital's
    wards and departments; the MARs are of patients in beds now (from the Admitted
    worklist)."""
    wards = workload.hospital()
    depts = list(workload.DEPARTMENTS)
    in_beds: list[str] = []
    for dept in depts:
        status, body = client.call("GET", f"/api/v1/worklists/admitted?department={dept}"
                                   "&page_size=50", None, tokens.admin)
        if status == 200:
            in_beds += [row["patient_id"] for row in body.get("items", []) if row.get("bed")]
    api = driver.API
    out: list[tuple[str, str, float]] = []
    for kind, refresh, share in SCREENS:
        n = max(1, round(count * share))
        for i in range(n):
            ward = wards[(i * 7) % len(wards)]
            if kind == "admitted_ward":
                path = f"{api}/worklists/admitted?department={ward.department}&ward={ward.code}" \
                       "&page_size=50"
            elif kind == "active_orders":
                path = f"{api}/worklists/orders?department={depts[i % len(depts)]}&page_size=50"
            elif kind == "my_orders":
                path = f"{api}/worklists/my-orders?page_size=50"
            elif kind == "bed_board":
                path = f"{api}/wards/{ward.code}/beds"
            elif kind == "observations_due":
                path = f"{api}/worklists/observations-due?ward={ward.code}"
            elif kind == "at_risk":
                path = f"{api}/worklists/at-risk?department={depts[i % len(depts)]}" \
                       "&page_size=50"
            else:
                if not in_beds:
                    continue
                path = f"{api}/patients/{in_beds[(i * 11) % len(in_beds)]}/mar"
            out.append((kind, path, refresh))
    return out[:count] if len(out) > count else out


def in_beds(client: HttpClient, tokens: Tokens) -> list[str]:
    """The ids of every patient in a bed now (the Admitted worklist of each department, up to
    200 rows each: the seeded stays of the largest plan fit)."""
    out: list[str] = []
    for dept in workload.DEPARTMENTS:
        status, body = client.call("GET", f"{driver.API}/worklists/admitted?department={dept}"
                                   "&page_size=200", None, tokens.admin)
        if status == 200:
            out += [row["patient_id"] for row in body.get("items", []) if row.get("bed")]
    return out


class Observer:
    """The wards' nurses taking observations through the mix: one set per patient in a bed
    per ``OBSERVATION_HOURS`` of the day the mix stands for, evenly spread over ``NURSES``
    connections (so a slow answer does not lower the rate), each set timed."""

    NURSES = 4

    def __init__(self, base: str, tokens: Tokens, patients: list[str], seconds: float) -> None:
        self.base, self.tokens, self.patients = base, tokens, patients
        sets = len(patients) * (24 // OBSERVATION_HOURS)
        self.interval = seconds / max(1, sets) * self.NURSES  # between one nurse's sets
        self.times: list[float] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def run(self, until: Callable[[], bool]) -> None:
        nurses = [threading.Thread(target=self._nurse, args=(n, until), daemon=True)
                  for n in range(self.NURSES)]
        for th in nurses:
            th.start()
        for th in nurses:
            th.join()

    def _nurse(self, n: int, until: Callable[[], bool]) -> None:
        c = HttpClient(self.base)
        due = time.perf_counter() + self.interval * n / self.NURSES
        i = n
        mine: list[float] = []
        while self.patients and not until():
            while (wait := due - time.perf_counter()) > 0 and not until():
                time.sleep(min(wait, 0.2))
            if until():
                break
            pid = self.patients[i % len(self.patients)]
            began = time.perf_counter()
            try:
                status, body = c.call("POST", f"{driver.API}/patients/{pid}/observations",
                                      OBSERVATION_SET, self.tokens.nurse)
            except (http.client.HTTPException, OSError) as exc:
                status, body = 0, type(exc).__name__
            mine.append((time.perf_counter() - began) * 1000)
            if status != 201 and len(self.errors) < 3:
                self.errors.append(f"observations: HTTP {status} {str(body)[:200]}")
            i += self.NURSES
            due = max(due + self.interval, time.perf_counter())
        with self.lock:
            self.times.extend(mine)

    def result(self, seconds: float) -> dict[str, Any]:
        return {"patients": len(self.patients), "sets": len(self.times),
                "sets_per_s": round(len(self.times) / max(1e-6, seconds), 1),
                **stats(self.times), "errors": self.errors}


def admission_counts(client: HttpClient, tokens: Tokens) -> dict[str, float] | None:
    """The commands the product held for the views so far, every process together
    (``/healthz``: ``relay.admission``), or None where there are none to read (a baseline)."""
    try:
        _, body = client.call("GET", "/healthz", None, tokens.admin)
    except (http.client.HTTPException, OSError):
        return None
    relay = body.get("relay") if isinstance(body, dict) else None
    counts = relay.get("admission") if isinstance(relay, dict) else None
    return counts if isinstance(counts, dict) and "waits" in counts else None


def ward_mix(base: str, tokens: Tokens, patients: list[workload.PatientPlan], phases: Phases,
             first_id: int, cpu: Callable[[], dict[str, float]] | None = None
             ) -> dict[str, Any]:
    """A ward shift: ``mix_screens`` open screens each polling what its page polls at the
    page's own interval (each screen's first poll at a random point of its interval), while
    ``mix_clients`` clients issue the clinical commands as fast as they can, the nurses take
    observation sets (:class:`Observer`) and a prober admits patients at 5/s and times how
    soon each shows in the worklist. For ``mix_seconds``."""
    client = HttpClient(base)
    screens = screen_paths(client, tokens, phases.mix_screens)
    observer = Observer(base, tokens, in_beds(client, tokens), phases.mix_seconds)
    probe = Prober(base, tokens, int(MIX_PROBE_RATE * phases.mix_seconds) + 5,
                   poll=MIX_PROBE_POLL, each=MIX_PROBE_EACH)
    pages: dict[str, list[float]] = {}
    errors: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    rng = random.Random(29)

    def screen(kind: str, path: str, refresh: float, offset: float) -> None:
        c = HttpClient(base)
        token = tokens.nurse if kind == "my_orders" else tokens.admin
        mine: list[float] = []
        due = time.perf_counter() + offset
        while not stop.is_set():
            wait = due - time.perf_counter()
            if wait > 0 and stop.wait(wait):
                break
            began = time.perf_counter()
            try:
                status, body = c.call("GET", path, None, token)
            except (http.client.HTTPException, OSError) as exc:
                status, body = 0, type(exc).__name__
            mine.append((time.perf_counter() - began) * 1000)
            if status != 200 and len(errors) < 3:
                errors.append(f"{kind}: HTTP {status} {str(body)[:200]}")
            # As a page's timer does: the next poll an interval after this one started, or
            # at once when this one took longer than the interval.
            due = max(due + refresh, time.perf_counter())
        with lock:
            pages.setdefault(kind, []).extend(mine)

    threads = [threading.Thread(target=screen, args=(k, p, r, rng.uniform(0, r)), daemon=True)
               for k, p, r in screens]
    prober = threading.Thread(target=probe.run, args=(MIX_PROBE_RATE, stop.is_set),
                              daemon=True)
    observing = threading.Thread(target=observer.run, args=(stop.is_set,), daemon=True)

    def begin() -> None:
        for th in threads:
            th.start()
        prober.start()
        observing.start()

    beds = workload.free_beds(patients)
    held_before = admission_counts(client, tokens)
    load = under_load(base, tokens, beds, phases.mix_clients, phases.mix_seconds, first_id,
                      cpu, begin=begin)
    stop.set()
    held_after = admission_counts(client, tokens)
    for th in threads:
        th.join(30)
    prober.join(90)
    observing.join(30)
    fresh = probe.result()
    probe.discharge()
    all_pages = [ms for v in pages.values() for ms in v]
    cmd = load["under_load"]
    return {"screens": len(screens), "clients": phases.mix_clients, "seconds": load["seconds"],
            "commands_per_s": load["commands_per_s"], "command_p50_ms": cmd["p50_ms"],
            "command_p95_ms": cmd["p95_ms"], "command_p99_ms": cmd["p99_ms"],
            "page_p50_ms": pct(all_pages, 0.5), "page_p95_ms": pct(all_pages, 0.95),
            "page_p99_ms": pct(all_pages, 0.99), "freshness_p50_ms": fresh["p50_ms"],
            "freshness_p99_ms": fresh["p99_ms"], "pages": len(all_pages),
            "pages_per_s": round(len(all_pages) / max(1e-6, load["seconds"]), 1),
            "by_screen": {k: stats(v) for k, v in sorted(pages.items())},
            "freshness": fresh, "commands": load["commands"], "drain_s": load["drain_s"],
            "observation_sets": observer.result(load["seconds"]),
            "errors": (load["errors"] + errors + observer.errors)[:5],
            **({"cpu_ms_per_command": load["cpu_ms_per_command"]}
               if "cpu_ms_per_command" in load else {}),
            # Commands that waited for the views during the mix (the drain's included).
            **({"admission": {k: round(held_after[k] - held_before.get(k, 0), 1)
                              for k in ("waits", "waited_ms", "capped")}}
               if held_before is not None and held_after is not None else {})}
