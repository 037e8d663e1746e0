"""Another command on the patient commits while a set is being recorded: the set is
recorded again on a fresh read (both kept, the summary moved by both); a patient whose
record keeps changing gets nothing half-written."""

from __future__ import annotations

from datetime import date

import pytest

from cosmos_backend.uow import StaleWrite, UnitOfWork
from hisadmin.core.actor import Actor
from patients import use_cases as record_use_cases
from patients.persistence import observations as stored
from patients.use_cases import observations as obs

pytestmark = pytest.mark.django_db
NURSE = Actor(id="41", username="nurse.a", display_name="Nurse A", roles=("nurse",))
FULL = {"respiration_rate": 22, "spo2": 94, "on_oxygen": False, "systolic_bp": 104,
        "pulse": 112, "consciousness": "A", "temperature": 38.4}  # NEWS2 7


@pytest.fixture
def patient(his_store, his_reference_data) -> str:
    return record_use_cases.register_patient(record_use_cases.RegisterPatient(
        given_name="Ann", family_name="Race", birth_date=date(1950, 1, 1)), UnitOfWork(his_store),
        actor=NURSE).patient_id


class Overtaken(UnitOfWork):
    """A unit of work another nurse's set overtakes between its reads and its batch."""

    def __init__(self, store, patient: str) -> None:
        super().__init__(store)
        self.patient = patient

    def commit(self):  # noqa: ANN201 - as the parent's
        obs.record_observations(obs.RecordObservations(
            self.patient, FULL, "2026-11-28T07:30:00+00:00"), UnitOfWork(self.store),
            actor=NURSE)
        return super().commit()


def _mine() -> obs.RecordObservations:
    return obs.RecordObservations("", {**FULL, "respiration_rate": 16, "spo2": 97,
                                       "systolic_bp": 120, "pulse": 80, "temperature": 37.0},
                                  "2026-11-28T08:00:00+00:00")


def test_a_set_overtaken_by_another_is_recorded_on_a_fresh_read(his_store, patient) -> None:
    uows = iter([Overtaken(his_store, patient), UnitOfWork(his_store)])
    cmd = obs.RecordObservations(patient, _mine().values, _mine().taken_at)
    saved, _ = obs.record_observations_again_on_a_race(cmd, lambda: next(uows), actor=NURSE)
    sets, _ = stored.page(his_store, patient)
    assert [s["pulse"] for s in sets] == [80, 112]  # both kept, the latest taken first
    summary = stored.summary(his_store, patient)
    assert summary["scored"]["observationId"] == saved["observationId"]
    assert (summary["scored"]["score"], summary["previousScore"]) == (0, 7)


def test_a_record_that_keeps_changing_gets_nothing_of_the_set(his_store, patient) -> None:
    cmd = obs.RecordObservations(patient, _mine().values, _mine().taken_at)
    with pytest.raises(StaleWrite):
        obs.record_observations_again_on_a_race(
            cmd, lambda: Overtaken(his_store, patient), actor=NURSE)
    sets, _ = stored.page(his_store, patient)
    assert [s["pulse"] for s in sets] == [112] * obs.RACE_ATTEMPTS  # only the racers'
