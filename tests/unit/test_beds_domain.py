"""Bed states, the board's counts and what a card says of its patient (plain Python)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from patients.domain.beds import Bed, BedState, Occupant, ward_metrics
from patients.domain.records import Admission, Patient

ANN = Occupant(
    patient_id="p1",
    admission_id="a1",
    family_name="Lind",
    given_name="Ann",
    sex="female",
    birth_date="1950-05-17",
    admitted_at="2026-11-20T23:30:00+00:00",
    allergy_status="has_allergies",
)


def test_it_counts_a_wards_beds_by_state() -> None:
    beds = [
        Bed("W", "1", BedState.FREE),
        Bed("W", "2", BedState.OCCUPIED, ANN),
        Bed("W", "3", BedState.CLEANING, since="2026-11-23T10:00:00+00:00"),
        Bed("W", "4", BedState.FREE),
    ]
    m = ward_metrics(beds)
    assert (m.beds, m.occupied, m.free, m.cleaning) == (4, 1, 2, 1)
    assert ward_metrics([]).beds == 0
    assert [b.label for b in beds[:3]] == ["Free", "Occupied", "Being cleaned"]


def test_it_says_age_and_length_of_stay_in_whole_units() -> None:
    assert ANN.age(date(2026, 5, 16)) == 75 and ANN.age(date(2026, 5, 17)) == 76
    assert ANN.length_of_stay(date(2026, 11, 20)) == 0
    assert ANN.length_of_stay(date(2026, 11, 23)) == 3
    assert ANN.display_name == "LIND, Ann" and ANN.has_allergies


def test_it_reads_an_occupant_back_as_it_was_stored() -> None:
    assert Occupant.from_dict(ANN.to_dict()) == ANN
    bare = Occupant.from_dict({"patientId": "p", "admissionId": "a"})
    assert bare.allergy_status == "unknown" and bare.age(date(2026, 1, 1)) is None
    assert bare.length_of_stay(date(2026, 1, 1)) == 0


def test_it_takes_the_occupant_from_the_patient_and_the_stay() -> None:
    now = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    patient = Patient(
        patient_id="p2",
        mrn="H1",
        given_name="Bo",
        family_name="Berg",
        birth_date=date(1980, 1, 2),
        sex="male",
        no_known_allergies={"recordedAt": now.isoformat(), "recordedBy": "n"},
    )
    stay = Admission.start(
        admission_id="a2",
        patient_id="p2",
        department_id="MED",
        ward_id="MED-1",
        bed="M101",
        attending_id="",
        attending_name="",
        reason="x",
        now=now,
        active=None,
    )
    o = Occupant.of(patient, stay)
    assert (o.patient_id, o.admission_id, o.birth_date) == ("p2", "a2", "1980-01-02")
    assert o.admitted_at == now.isoformat() and o.allergy_status == "no_known_allergies"
