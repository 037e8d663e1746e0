"""Prepare the product for a benchmark run (run in its own process, product settings).

    python -m bench.product_side --var DIR --patients N --out prep.json

Provisions a fresh var directory (migrate, cosmos_init, users and reference data, no demo
patients), adds the bench wards, seeds N planned patients through the real use cases,
builds the worklist views with the rebuild the operators use, moves the relay's checkpoints to
the end of the feed (the views already hold everything), then counts store round trips,
bytes and estimated RU per command for one driver iteration through the real API in-process —
including the projection work the Celery worker does for the events those commands wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _setup(var: Path) -> None:
    os.environ.update(DJANGO_SETTINGS_MODULE="hisadmin.settings", HIS_VAR_DIR=str(var),
                      EMBEDDED_STORE_PATH=str(var / "store.sqlite3"), DEMO_DATA="0")
    os.environ.pop("COSMOS_ENDPOINT", None)
    import django

    django.setup()


def _add_wards(store: Any) -> None:
    from bench.workload import hospital
    from cosmos_backend.envelope import wrap
    from hisadmin.core import keys
    from patients.persistence import reference

    for ward in hospital():
        store.upsert(wrap(doc_id=ward.code, pk=keys.reference("Ward"), doc_type="Reference",
                          sub_type="Ward", contents={
                              "code": ward.code, "name": ward.name, "active": True,
                              "departmentId": ward.department, "beds": list(ward.beds)}))
    reference.invalidate()


def seed(store: Any, patients: list[Any], progress: bool = True) -> None:
    from django.contrib.auth.models import User

    from cosmos_backend.uow import UnitOfWork
    from hisadmin.core.policy import actor_for
    from patients import use_cases
    from patients.use_cases.beds import BedLeft, MarkBedClean, mark_bed_clean, set_bed_to_cleaning

    clerk = actor_for(User.objects.get(username="clerk"))
    doctor_user = User.objects.get(username="clinician")
    doctor = actor_for(doctor_user)
    nurse_user = User.objects.get(username="nurse")
    nurse = actor_for(nurse_user)
    started = time.perf_counter()

    def uow() -> UnitOfWork:
        return UnitOfWork(store)

    for n, p in enumerate(patients, 1):
        # A generated population shares names and birth dates by chance: each is a person of
        # their own, as a clerk would confirm.
        pid = use_cases.register_patient(use_cases.RegisterPatient(
            given_name=p.given, family_name=p.family, birth_date=p.birth_date, sex=p.sex,
            mrn=p.mrn, confirm_not_duplicate=True), uow(), actor=clerk).patient_id
        for substance, reaction, severity in p.allergies:
            use_cases.add_allergy(use_cases.AddAllergy(patient_id=pid, substance=substance,
                                                     reaction=reaction, severity=severity),
                                 uow(), actor=doctor)
        if not p.allergies:  # asked, none known: a medication order needs the answer
            use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(pid), uow(),
                                                actor=doctor)
        for stay in p.stays:
            admission = use_cases.admit_patient(use_cases.AdmitPatient(
                patient_id=pid, department_id=stay.department, ward_id=stay.ward,
                bed=stay.bed, reason=stay.reason, attending_id=str(doctor_user.pk),
                attending_name=doctor.display_name), uow(), actor=clerk)
            for o in stay.orders:
                # A dose is recorded against a dose time: the first one at the start.
                first = {"first_dose": "now"} if o.administrations else {}
                oid = use_cases.place_order(use_cases.PlaceOrder(
                    patient_id=pid, kind=o.kind, urgency=o.urgency, **o.fields, **first),
                    uow(), actor=doctor).order_id
                if o.assign_to_nurse:
                    use_cases.assign_order(use_cases.AssignOrder(
                        pid, oid, str(nurse_user.pk), nurse.display_name), uow(), actor=doctor)
                for action in _actions(o):
                    if action == "administer":
                        use_cases.administer(use_cases.Administer(
                            pid, oid, o.fields["dose"], o.fields["unit"]), uow(), actor=nurse)
                    else:
                        results, report = _results(store, o) if action == "complete" \
                            else ((), "")
                        use_cases.progress_order(use_cases.ProgressOrder(
                            pid, oid, action, "No longer indicated", results=results,
                            report=report), uow(), actor=nurse)
            if not stay.current:
                use_cases.discharge_patient(use_cases.DischargePatient(pid, "home"), uow(),
                                           actor=clerk)
                if stay.bed:  # the bed goes to cleaning and is cleaned before its next stay
                    set_bed_to_cleaning(BedLeft(stay.ward, stay.bed, admission.admission_id),
                                        uow(), actor=nurse)
                    mark_bed_clean(MarkBedClean(stay.ward, stay.bed), uow(), actor=nurse)
        if progress and n % 1000 == 0:
            rate = n / (time.perf_counter() - started)
            print(f"  product: {n}/{len(patients)} patients ({rate:.0f}/s)", flush=True)


def _results(store: Any, o: Any) -> tuple[tuple[Any, ...], str]:
    """What completing ``o`` records: a mid-range value per analyte of a lab test, a report
    for an imaging exam (completing needs them), nothing for a medication."""
    from decimal import Decimal

    from patients.domain.results import GivenValue
    from patients.persistence import reference

    if o.kind == "lab":
        test = reference.get(store, "LabTest", o.fields["test_code"], field="test_code")
        return tuple(GivenValue(a["code"], (Decimal(str(a["low"])) + Decimal(str(a["high"])))
                                / 2) for a in test["analytes"]), ""
    if o.kind == "imaging":
        return (), "No acute abnormality."
    return (), ""


def _actions(o: Any) -> list[str]:
    if o.status == "created":
        return []
    if o.status == "cancelled":
        return ["cancel"]
    steps = ["ready"]
    if o.status in ("in_progress", "completed"):
        steps.append("administer" if o.administrations else "start")
    if o.status == "completed":
        steps.append("complete")
    return steps


def fast_forward_relay(store: Any) -> int:
    """Checkpoint every feed range at its end: the rebuilt views already include it all."""
    from cosmos_backend.leases import new_owner_id
    from hisadmin.core.store import get_lease_store

    leases = get_lease_store()
    ranges = store.feed_ranges()
    leases.ensure(ranges)
    owner, docs = new_owner_id(), 0
    for feed_range in ranges:
        lease = leases.try_acquire(feed_range, owner, ttl=30)
        assert lease is not None, "a relay is running on the bench store"
        token, position = lease.continuation, lease.position
        while True:
            page = store.read_feed(feed_range, continuation=token, max_items=5000)
            if not page.items:
                break
            docs += len(page.items)
            position = max(position, max(int(d.get("_lsn", 0)) for d in page.items))
            token = page.continuation
        if token is not None:
            lease = leases.checkpoint(lease, token, position, ttl=30)
        leases.release(lease)
    return docs


class _TestClient:
    """The driver's client protocol over Django's test client (in-process, real views)."""

    def __init__(self) -> None:
        from django.test import Client

        self.client = Client()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             token: str | None = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        fn = getattr(self.client, method.lower())
        kwargs: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {token}", "headers": headers}
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        response = fn(path, **kwargs)
        return response.status_code, json.loads(response.content or b"null")


def other_commands(client: Any, tokens: Any, i: int, bed: tuple[str, str, str],
                   move_to: tuple[str, str, str], hook: Any) -> dict[str, Any]:
    """The record's other commands, for the cost counts only (the timed phases run the
    driver's stay, which the baseline implements too): register with a given MRN, correct
    demographics, add and remove an allergy, admit, transfer to another bed, discharge."""
    from bench.driver import API, _ok

    def cmd(name: str, method: str, path: str, body: dict[str, Any] | None,
            etag: str | None = None) -> Any:
        headers = {"HTTP_IF_MATCH": etag} if etag else {}
        fn = getattr(client.client, method.lower())
        response = fn(f"{API}{path}", data=json.dumps(body) if body is not None else None,
                      content_type="application/json",
                      HTTP_AUTHORIZATION=f"Bearer {tokens.admin}", **headers)
        out = _ok(response.status_code, json.loads(response.content or b"null"), name)
        hook(name)
        return out

    patient = cmd("register (given MRN)", "POST", "/patients", {
        "given_name": "Bench", "family_name": f"Other{i:06d}", "birth_date": "1958-09-30",
        "sex": "male", "mrn": f"RT{i:06d}"})
    pid = patient["id"]
    patient = cmd("correct demographics", "PUT", f"/patients/{pid}", {
        "given_name": "Bench", "family_name": f"Other{i:06d}", "birth_date": "1958-09-30",
        "sex": "other"}, patient["etag"])
    patient = cmd("add allergy", "POST", f"/patients/{pid}/allergies", {
        "substance": "Latex", "reaction": "Hives", "severity": "mild"})
    cmd("remove allergy", "DELETE",
        f"/patients/{pid}/allergies/{patient['allergies'][0]['allergy_id']}"
        "?reason=entered-in-error", None)
    dept, ward, code = bed
    cmd("admit", "POST", f"/patients/{pid}/admissions", {
        "department_id": dept, "ward_id": ward, "bed": code, "reason": "Fall"})
    cmd("transfer", "POST", f"/patients/{pid}/transfer", {"ward_id": move_to[1],
                                                           "bed": move_to[2]})
    cmd("discharge", "POST", f"/patients/{pid}/discharge", {"disposition": "home"})
    return {"id": pid}


def command_costs(store: Any, tokens: Any, beds: list[tuple[str, str, str]],
                  iterations: int, paged_beds: list[tuple[str, str, str]] | None = None
                  ) -> dict[str, Any]:
    """Per command type: synchronous store calls (the request) and asynchronous ones (the
    work the events it wrote cause, as the worker runs it: their projection, the beds a
    stay left set to cleaning, bed cards refreshed), averaged. After each command its events
    are delivered as the relay delivers a change-feed page: per consumer, one message per
    patient stream with its events (``consumer_publisher``), run in-process on the metered
    store. ``beds``: three free beds per iteration; the beds a stay left are cleaned after
    it, uncounted. ``paged_beds``: a free bed in each of several wards, for the paged
    figure (:func:`_paged`)."""
    from bench.counting import CountingStore, Meter
    from bench.driver import iteration
    from cosmos_backend.uow import UnitOfWork
    from hisadmin.core import recent_events
    from hisadmin.core import store as handles
    from hisadmin.core.actor import SYSTEM_ACTOR
    from patients.domain.errors import BedNotBeingCleaned
    from patients.tasks import PAGE_TASK as FOLLOW_UP_PAGE
    from patients.tasks import follow_up, follow_up_page
    from patients.use_cases.beds import MarkBedClean, bed_left, mark_bed_clean
    from worklists.delivery.relay import consumer_publisher
    from worklists.delivery.tasks import PAGE_TASK, apply_page
    from worklists.persistence.feed import events_in

    recent_events.forget()
    meter = Meter()
    counting = CountingStore(store, meter)
    # Every get_store() in this process now returns the metered store.
    for key in list(handles._stores):
        if key[0] == "data":
            handles._stores[key] = counting
    client = _TestClient()
    totals: dict[str, dict[str, float]] = {}
    ranges = store.feed_ranges()
    positions: dict[str, str | None] = {}

    measured = hasattr(store, "request_charge_total")  # a Cosmos endpoint: real charges
    charged = [store.request_charge_total if measured else 0.0]
    # Write transactions of the views container (embedded: its file's write lock taken).
    views = getattr(store, "views", None)
    view_txs = [getattr(views, "write_transactions", 0)]

    def view_txs_since() -> int:
        now = getattr(views, "write_transactions", 0)
        spent, view_txs[0] = now - view_txs[0], now
        return spent

    def charges_since() -> float:
        now = store.request_charge_total
        spent, charged[0] = now - charged[0], now
        return spent

    def add(name: str, part: str, snap: dict[str, Any]) -> None:
        row = totals.setdefault(name, {"n": 0})
        for k in ("round_trips", "view_write_txs", "bytes_written", "bytes_read",
                  "ru_estimate", "ru_measured"):
            if k in snap:
                row[f"{part}_{k}"] = row.get(f"{part}_{k}", 0.0) + snap[k]

    def new_events() -> list[Any]:
        """What the relay would read next (uncounted: one feed page serves many commands)."""
        found = []
        for feed_range in ranges:
            while True:
                page = store.read_feed(feed_range, continuation=positions.get(feed_range),
                                       max_items=1000)
                if not page.items:
                    break
                positions[feed_range] = page.continuation
                found.extend(events_in(page.items))
                recent_events.keep(page.items)  # as the relay in the worker does
        return found

    def unexpected(stream: str, seqs: list[int]) -> None:
        raise RuntimeError(f"a stream of the page failed: {stream}")

    run = {PAGE_TASK: lambda streams: apply_page(counting, streams, alone=unexpected),
           "patients.follow_up": follow_up, FOLLOW_UP_PAGE: follow_up_page}
    sent: list[tuple[str, list[Any]]] = []
    publish = consumer_publisher(lambda task, args, **_: sent.append((task, args)))
    events = {"n": 0, "round_trips": 0.0, "kept": 0, "view_write_txs": 0}

    def deliver(tally: dict[str, Any] = events) -> dict[str, Any]:
        """The worker's share of the events written since the last call."""
        found = new_events()
        if measured:
            charges_since()  # the feed reads above are the harness's, not a command's
        sent.clear()
        publish(found)
        meter.reset()
        view_txs_since()
        saved = recent_events.reads_saved()
        for task, args in sent:
            if task in run:  # webhooks' fan-out: no subscriptions here, nothing to do
                run[task](*args)
        snap = meter.snapshot()
        snap["view_write_txs"] = view_txs_since()
        if measured:
            snap["ru_measured"] = charges_since()
        tally["n"] += sum(len(seqs) for task, args in sent if task == PAGE_TASK
                          for _, seqs in args[0])
        tally["round_trips"] += snap["round_trips"]
        tally["view_write_txs"] += snap["view_write_txs"]
        tally["kept"] += recent_events.reads_saved() - saved
        # The ward's nurse cleans the beds the stay left (her command, not these commands'
        # cost), so a later stay may take them.
        for event in found:
            contents = store.read(event.stream, f"evt-{event.seq:010d}")["docContents"]
            left = bed_left(event.type, contents["data"])
            if left is not None:
                try:
                    mark_bed_clean(MarkBedClean(left.ward_id, left.bed), UnitOfWork(store),
                                   actor=SYSTEM_ACTOR)
                except BedNotBeingCleaned:
                    pass
        new_events()  # skip what the cleaning wrote
        if measured:
            charges_since()
        meter.reset()
        view_txs_since()
        return snap

    def hook(name: str) -> None:
        snap = meter.snapshot()
        snap["view_write_txs"] = view_txs_since()
        if measured:
            snap["ru_measured"] = charges_since()
        meter.reset()
        add(name, "sync", snap)
        totals[name]["n"] += 1
        add(name, "async", deliver())

    new_events()  # start at the end of the feed
    others = len(beds) >= 3 * iterations
    # A warm-up stay first, not counted: a running process has its caches (reference data,
    # the MRN block, token lookups, the live generations) warm; the counts are of the
    # steady state.
    iteration(client, tokens, 899_999, beds[-1], hook=hook)
    totals.clear()
    events.update(n=0, round_trips=0.0, kept=0, view_write_txs=0)
    for i in range(iterations):
        iteration(client, tokens, 900_000 + i, beds[i % len(beds)], hook=hook)
        if others:
            other_commands(client, tokens, i, beds[iterations + i], beds[2 * iterations + i],
                           hook)
    paged = _paged(client_factory=_TestClient, tokens=tokens, beds=paged_beds or beds,
                   deliver=deliver)
    out = {}
    for name, row in totals.items():
        n = row.pop("n")
        out[name] = {k: round(v / n, 2) for k, v in row.items()}
    # As make run and the bench run it, the relay is a thread of the worker and hands the
    # worker's tasks the events it read (hisadmin.core.recent_events); a relay in a process
    # of its own (HIS_PROCESSES=separate) does not, and each task message reads its events.
    out["(per projected event)"] = {
        "async_round_trips": round(events["round_trips"] / max(1, events["n"]), 2),
        "async_round_trips_relay_apart": round(
            (events["round_trips"] + events["kept"]) / max(1, events["n"]), 2),
        "async_view_write_txs": round(events["view_write_txs"] / max(1, events["n"]), 2),
        **paged}
    return out


def spread_beds(beds: list[tuple[str, str, str]], n: int = 8) -> list[tuple[str, str, str]]:
    """A free bed in each of ``n`` wards, the departments taken in turn (the ward mix's
    clients admit all over the hospital): a page's patients do not share every partition."""
    wards: dict[str, tuple[str, str, str]] = {}
    for bed in beds:
        wards.setdefault(bed[1], bed)
    by_dept: dict[str, list[tuple[str, str, str]]] = {}
    for bed in wards.values():
        by_dept.setdefault(bed[0], []).append(bed)
    turns = [d[i] for i in range(max(map(len, by_dept.values()), default=0))
             for d in by_dept.values() if i < len(d)]
    return turns[:n]


PAGE_STAYS = 8  # clients whose commands one change-feed page carries, as under load


def _paged(client_factory: Any, tokens: Any, beds: list[tuple[str, str, str]],
           deliver: Any) -> dict[str, Any]:
    """Round trips per projected event when a page carries several patients' commands, as
    the relay in the worker reads it under load (the ward mix's eight clients): ``n`` stays
    run side by side, each command of each in step, and the events of every step (one
    command of each stay) are delivered as one page. The per-command figure above is the
    other end: a quiet ward, where a page carries one command."""
    import threading

    from bench.driver import iteration

    n = min(PAGE_STAYS, len(beds))
    if n < 2:
        return {}
    tally = {"n": 0, "round_trips": 0.0, "kept": 0, "view_write_txs": 0}
    step = threading.Barrier(n, action=lambda: deliver(tally), timeout=120)
    failed: list[BaseException] = []

    def stay(k: int) -> None:
        try:
            iteration(client_factory(), tokens, 950_000 + k, beds[k],
                      hook=lambda name: step.wait())
        except BaseException as exc:  # noqa: BLE001 - reported below, the others released
            failed.append(exc)
            step.abort()

    threads = [threading.Thread(target=stay, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise RuntimeError(f"a stay of the paged measurement failed: {failed[0]!r}")
    per = max(1, tally["n"])
    return {"async_round_trips_paged": round(tally["round_trips"] / per, 2),
            "async_view_write_txs_paged": round(tally["view_write_txs"] / per, 2),
            "paged_stays": n}


def cosmos_costs(endpoint: str, key: str, verify: bool, tokens: Any,
                 beds: list[tuple[str, str, str]], iterations: int) -> dict[str, Any]:
    """The same per-command counts against a Cosmos DB endpoint, with the request charges
    the service reports (``x-ms-request-charge``), in a database made for this and deleted
    after."""
    import uuid

    from cosmos_backend.azure import connect, provision
    from cosmos_backend.azure.client import build_client
    from cosmos_backend.routed import RoutedStore
    from cosmos_backend.uow import UnitOfWork
    from hisadmin.core import store as handles
    from hisadmin.core.actor import SYSTEM_ACTOR
    from patients import use_cases
    from patients.persistence import reference

    database = f"his-bench-{uuid.uuid4().hex[:8]}"
    specs = (handles.container_spec(), handles.views_spec())  # the product's two containers
    for spec in specs:
        provision(endpoint, key, database, spec, connection_verify=verify)
    try:
        remote = RoutedStore(*(connect(endpoint, key, database, spec, connection_verify=verify)
                               for spec in specs), handles.is_view_partition)
        list(use_cases.load_reference_data(UnitOfWork(remote), actor=SYSTEM_ACTOR))
        _add_wards(remote)
        return command_costs(remote, tokens, beds, iterations)
    finally:
        reference.invalidate()
        with build_client(endpoint, key, connection_verify=verify) as client:
            client.delete_database(database)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", type=Path, required=True)
    parser.add_argument("--patients", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cost-iterations", type=int, default=5)
    parser.add_argument("--cosmos", action="store_true",
                        help="also count per-command request charges on the Cosmos endpoint "
                             "in BENCH_COSMOS_ENDPOINT / BENCH_COSMOS_KEY (env, not argv: "
                             "the key stays out of process listings)")
    args = parser.parse_args()
    cosmos_endpoint = os.environ.get("BENCH_COSMOS_ENDPOINT", "") if args.cosmos else ""
    cosmos_key = os.environ.get("BENCH_COSMOS_KEY", "")
    cosmos_verify = os.environ.get("BENCH_COSMOS_VERIFY_TLS", "true").lower() not in (
        "0", "false", "no")
    args.var.mkdir(parents=True, exist_ok=True)
    _setup(args.var)
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from bench import workload
    from bench.driver import Tokens
    from cosmos_backend.routed import RoutedStore
    from hisadmin.core import keys
    from hisadmin.core.store import get_store
    from hisadmin.models import ApiToken
    from worklists.ops import maintenance

    call_command("migrate", "--noinput", verbosity=0)
    call_command("cosmos_init", stdout=open(os.devnull, "w"))
    call_command("setup_demo", "--no-patients", stdout=open(os.devnull, "w"))
    store = get_store()
    _add_wards(store)
    patients = workload.plan(args.patients)
    t0 = time.perf_counter()
    seed(store, patients)
    seed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    listed_at = time.time()
    ids = sorted(set(maintenance.patient_ids(store)))
    maintenance.rebuild(store, ids, listed_at=listed_at)
    rebuild_s = time.perf_counter() - t0
    # The events the rebuilt views cover (each patient's last sequence number), uncounted.
    rebuild_events = sum(int(store.read(keys.patient(pid), "stream")["docContents"]["seq"])
                         for pid in ids)
    tokens = Tokens(admin=ApiToken.issue(User.objects.get(username="admin"), "bench")[1],
                    nurse=ApiToken.issue(User.objects.get(username="nurse"), "bench")[1])
    beds = workload.free_beds(patients)
    costs = command_costs(store, tokens, beds[-3 * args.cost_iterations:],
                          args.cost_iterations, spread_beds(beds[:-3 * args.cost_iterations]))
    measured = None
    if cosmos_endpoint:
        measured = {"endpoint": cosmos_endpoint.split("//")[-1].split("/")[0],
                    "costs": cosmos_costs(cosmos_endpoint, cosmos_key, cosmos_verify, tokens,
                                          beds[-args.cost_iterations:], args.cost_iterations)}
    moved = fast_forward_relay(store)
    files = [Path(s.path) for s in (store.primary, store.views) if hasattr(s, "path")] \
        if isinstance(store, RoutedStore) else []
    store_bytes = sum(f.stat().st_size for f in files) if files else None
    prep = {"tokens": tokens.__dict__, "seed_s": round(seed_s, 1),
            "rebuild_s": round(rebuild_s, 1), "rebuild_patients": len(ids),
            "rebuild_events": rebuild_events,
            "feed_docs": moved, "costs": costs, "cosmos_measured": measured,
            "store_bytes": store_bytes,
            "documents": (store.primary.count() + store.views.count()
                          if files else None)}
    args.out.write_text(json.dumps(prep, indent=2))
    print(f"  product ready: seed {seed_s:.0f}s, rebuild {rebuild_s:.0f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
