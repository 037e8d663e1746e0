"""The midnight census on a real store: projected from the admission events, rebuilt alike."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from django.core.management import call_command

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import keys
from hisadmin.core.actor import SYSTEM_ACTOR
from hisadmin.core.inputs import hospital_time_zone, hospital_today
from patients import use_cases
from tests import worklist_data as data
from worklists.delivery.projector import project_events
from worklists.ops import maintenance
from worklists.persistence import generations
from worklists.persistence.view_rows import bucket_docs, row_id_of
from worklists.projection.census import CENSUS, month_buckets
from worklists.read.census import ward_census

pytestmark = [pytest.mark.service, pytest.mark.django_db]


@pytest.fixture
def ward_day(his_store, drain_worklists) -> list[str]:
    """Today on Cardiology Ward A: four admitted, one moved to the coronary care unit, one
    moved to another bed of the ward, one discharged."""
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))
    ids = [data.register(his_store, f"Census{i}", "Ann") for i in range(4)]
    for pid in ids:
        data.admit(his_store, pid, "CARD", "CARD-A")
    use_cases.transfer_patient(use_cases.TransferPatient(ids[0], "CARD-CCU"),
                               UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    use_cases.transfer_patient(use_cases.TransferPatient(ids[1], "CARD-A", "A05"),
                               UnitOfWork(his_store), actor=SYSTEM_ACTOR)
    data.discharge(his_store, ids[2])
    drain_worklists()
    return ids


def _census_rows(store, gen: int) -> dict:
    now = datetime.now(UTC)
    rows = {}
    for ward in ("CARD-A", "CARD-CCU"):
        for bucket in month_buckets(ward, now, now):
            for doc in bucket_docs(store, gen, CENSUS, bucket):
                rows[(bucket, row_id_of(doc))] = {k: v for k, v in doc["docContents"].items()
                                             if k not in ("projectedAt", "seq")}
    return rows


def test_it_counts_the_days_arrivals_and_departures_from_the_events(ward_day, his_store) -> None:
    today, zone = hospital_today(), hospital_time_zone()
    tonight = datetime.combine(today + timedelta(days=1), time(0, 1), zone)
    [a] = ward_census(his_store, "CARD-A", today, today, zone=zone, beds=8, now=tonight).days
    assert (a.at_start, a.admissions, a.transfers_in, a.transfers_out, a.discharges,
            a.at_midnight, a.occupancy, a.beds) == (0, 4, 0, 1, 1, 2, 25.0, 8)
    [ccu] = ward_census(his_store, "CARD-CCU", today, today, zone=zone, beds=4,
                        now=tonight).days
    assert (ccu.admissions, ccu.transfers_in, ccu.at_midnight) == (0, 1, 1)
    [so_far] = ward_census(his_store, "CARD-A", today, today, zone=zone, beds=8).days
    assert (so_far.at_start, so_far.admissions, so_far.at_midnight, so_far.occupancy) == (
        0, 4, None, None)  # before midnight: no count "in at midnight" yet


def test_a_rebuild_writes_the_same_census_rows_and_the_check_agrees(ward_day, his_store) -> None:
    before = _census_rows(his_store, 1)
    assert len(before) == 5  # four stays on ward A (two ended, in this month) and one in the CCU
    call_command("rebuild_worklists")
    assert generations.pointer(his_store)["active"] == 2
    assert _census_rows(his_store, 2) == before
    assert maintenance.check(his_store, list(maintenance.patient_ids(his_store))).drifted == {}


def test_a_redelivered_event_changes_no_census_row(ward_day, his_store) -> None:
    before = _census_rows(his_store, 1)
    for pid in ward_day:
        project_events(his_store, keys.patient(pid), [1, 2, 3])
    assert _census_rows(his_store, 1) == before
