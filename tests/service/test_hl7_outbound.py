"""ADT out through the webhooks' ordered drain to an engine on a real socket: messages in
order per patient, each validated by hl7apy against v2.5.1; AE and silence retried with
backoff, then dead-lettered; a dead letter replayed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from cosmos_backend.outbox import stream_head
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import Actor
from hl7v2.outbound import mllp, profile, tasks, use_cases
from hl7v2.outbound.destinations import control_id
from hl7v2.outbound.transport import Hl7Transport
from hl7v2.persistence import store
from patients import use_cases as use_cases_patients
from patients.domain.errors import InvalidInput
from tests.hl7_engine import Engine
from webhooks.delivery.drain import Deliverer, Settings

pytestmark = [pytest.mark.service, pytest.mark.django_db]
ADMIN = Actor(id="1", username="admin", roles=("admin",))


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).timestamp()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def engine(monkeypatch):
    monkeypatch.setenv("HL7_ALLOWED_NETWORKS", "127.0.0.1/32")
    # 2 s: under the suite's load an answer took over 0.5 s, and a late answer must not read
    # as the silence a few tests make on purpose (each of those costs its wait once).
    monkeypatch.setenv("HL7_ACK_TIMEOUT", "2")
    with Engine() as running:
        yield running
        mllp.close_all()  # the product's connections first: the engine then sees them end


def destination(his_store, engine: Engine, *events: str) -> str:
    dest = use_cases.add_destination(
        use_cases.AddDestination(name="Engine", host="127.0.0.1", port=engine.port,
                                 events=list(events)),
        his_store, actor=ADMIN, now=datetime.now(UTC) - timedelta(minutes=1))
    return dest.id


def drain(his_store, clock: Clock | None = None, attempts: int = 3,
          timeout: float = 0.5) -> Deliverer:
    return Deliverer(his_store, settings=Settings(timeout=timeout, max_attempts=attempts,
                                                  backoff_base=1.0),
                     clock=clock or Clock(), transport=Hl7Transport())


def test_it_sends_registration_then_admission_in_order_as_valid_v251(
        his_store, his_patient, engine, settings) -> None:
    settings.HL7_SENDING_APPLICATION, settings.HL7_SENDING_FACILITY = "HIS", "GENERAL"
    dest = destination(his_store, engine, "PatientRegistered", "AdmissionStarted")
    patient = his_patient("García", given="Ana")
    outcome = drain(his_store).run(dest, f"P_{patient.id}", 2, token="t1")
    assert outcome.kind == "delivered" and outcome.delivered == 2
    assert engine.triggers() == ["A04", "A01"]
    a04, a01 = engine.got
    assert a01.msh.msh_3.to_er7() == "HIS" and a01.msh.msh_4.to_er7() == "GENERAL"
    assert a01.msh.msh_10.to_er7() == control_id(dest, f"P_{patient.id}", 2)
    assert a01.pid.pid_3.to_er7() == f"{patient.mrn}^^^GENERAL^MR"
    assert a01.pid.pid_5.to_er7() == "García^Ana"
    assert a01.pv1.pv1_2.to_er7() == "I"
    assert a01.pv1.pv1_19.to_er7() == profile.visit_number(patient.admission_id)
    assert a01.pv1.pv1_3.to_er7().split("^")[0] == "MED-1"  # ward^room^bed, no bed given
    assert len(a01.pv1.pv1_44.to_er7()) == 19  # YYYYMMDDHHMMSS+ZZZZ
    assert a04.pv1.pv1_2.to_er7() == "N"
    log = store.entries(his_store, mrn=patient.mrn)
    assert [e.status for e in log] and {e.status for e in log} == {"accepted"}


def test_it_retries_ae_and_silence_then_dead_letters_and_the_next_flows(
        his_store, his_patient, engine) -> None:
    # Every answer here but the silent one comes (the fixture's 2 s wait: the silence costs it).
    dest = destination(his_store, engine, "PatientRegistered", "AdmissionStarted")
    patient = his_patient()
    stream = f"P_{patient.id}"
    engine.answers = ["AE", "none", "AR"]
    clock = Clock()
    first = drain(his_store, clock, timeout=2.0).run(dest, stream, 2, token="a")
    assert first.kind == "retry"
    clock.now += 10
    assert drain(his_store, clock, timeout=2.0).run(dest, stream, 2, token="a").kind == "retry"
    clock.now += 10
    third = drain(his_store, clock, timeout=2.0).run(dest, stream, 2, token="a")
    assert third.kind == "delivered" and third.delivered == 1  # A04 dead, then A01
    assert engine.triggers() == ["A04", "A04", "A04", "A01"]
    dead = store.entries(his_store, status="dead")
    assert [e.control_id for e in dead] == [control_id(dest, stream, 1)]
    assert dead[0].reason == "ACK AR" and dead[0].attempts == 3
    assert tasks.replay_now(his_store, dead[0].control_id) == "accepted"
    assert engine.triggers()[-1] == "A04"
    assert engine.got[-1].msh.msh_10.to_er7() == dead[0].control_id  # the same control id
    assert store.find_entry(his_store, dead[0].control_id).status == "accepted"


def test_it_refuses_a_loopback_engine_unless_its_network_is_named(his_store, monkeypatch) -> None:
    monkeypatch.delenv("HL7_ALLOWED_NETWORKS", raising=False)
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    with pytest.raises(InvalidInput) as refused:
        use_cases.add_destination(use_cases.AddDestination(
            name="Engine", host="127.0.0.1", port=2575, events=["AdmissionStarted"]),
            his_store, actor=ADMIN)
    assert refused.value.field == "host" and "loopback" in str(refused.value)


def test_it_lists_destinations_and_replays_dead_letters_from_hl7_status(
        his_store, his_patient, engine) -> None:
    from io import StringIO

    from django.core.management import call_command

    dest = destination(his_store, engine, "PatientRegistered")
    patient = his_patient(admit=False)
    engine.answers = ["AE"]
    assert drain(his_store, attempts=1).run(dest, f"P_{patient.id}", 1, token="a").kind == "delivered"
    out = StringIO()
    call_command("hl7_status", "--replay", stdout=out)
    text = out.getvalue()
    assert "Engine" in text and "dead 1" in text and "accepted" in text.splitlines()[-1]
    assert store.entries(his_store, mrn=patient.mrn)[0].status == "accepted"


def test_a_backlog_says_what_was_true_at_each_event(his_store, his_patient, engine,
                                                    settings, monkeypatch) -> None:
    """Every message of a patient's day delivered late, after a correction and a discharge:
    each says what was true at its own event (acceptance 5 of issue 36)."""
    from datetime import date

    # The engine answers every message: the short wait the other tests use for an engine
    # that never does is not what this one is about (an ACK took over 0.5 s under load once).
    monkeypatch.setenv("HL7_ACK_TIMEOUT", "10")

    from hisadmin.core.store import new_uow
    from patients import use_cases as patient_use_cases

    settings.HL7_RECEIVING_APPLICATION, settings.HL7_RECEIVING_FACILITY = "RHAPSODY", "ICE"
    dest = destination(his_store, engine, "PatientRegistered", "AdmissionStarted",
                       "NoKnownAllergiesRecorded", "AllergyAdded",
                       "PatientDemographicsUpdated", "AdmissionEnded")
    patient = his_patient("Zoë", given="Ana", birth_date="1980-05-01")  # 1 A04, 2 A01, 3 NKA
    who = Actor(id="2", username="doc", roles=("clinician",))
    reaction = "Anaphylaxis & hives | throat swelling over 15 characters"
    patient_use_cases.add_allergy(patient_use_cases.AddAllergy(
        patient.id, allergen_code="PENICILLINS", reaction=reaction, severity="severe"),
        new_uow(), actor=who)  # 4
    patient_use_cases.update_demographics(patient_use_cases.UpdateDemographics(
        patient.id, given_name="Ana", family_name="Zoë-Müller", birth_date=date(1980, 5, 11),
        sex="female"), new_uow(), actor=who)  # 5
    patient_use_cases.discharge_patient(patient_use_cases.DischargePatient(
        patient.id, disposition="home"), new_uow(), actor=who)  # 6
    outcome = drain(his_store).run(dest, f"P_{patient.id}", 6, token="late")
    assert outcome.delivered == 6
    a04, a01, nka, allergy, corrected, a03 = engine.got
    assert engine.triggers() == ["A04", "A01", "A08", "A08", "A08", "A03"]
    # the registration as registered, not as corrected later
    assert a04.pid.pid_7.to_er7() == "19800501" and a04.pid.pid_5.to_er7() == "Zoë^Ana"
    assert corrected.pid.pid_7.to_er7() == "19800511"
    assert corrected.pid.pid_5.to_er7() == "Zoë-Müller^Ana"
    # an A08 made after the discharge still says where the patient was at its event
    assert corrected.pv1.pv1_2.to_er7() == "I"
    assert corrected.pv1.pv1_3.to_er7().split("^")[0] == "MED-1"
    # no AL1 before anyone asked; NKA explicit; the allergy whole, typed and graded
    assert a01.to_er7().count("\rAL1|") == 0
    assert nka.al1[0].al1_3.to_er7() == "716186003^No known allergy^SCT"
    al1 = allergy.al1[0]
    assert al1.al1_2.to_er7() == "DA" and al1.al1_4.to_er7() == "SV"
    assert al1.al1_3.to_er7().startswith("PENICILLINS^")
    assert al1.al1_5.to_er7() == reaction.replace("&", "\\T\\").replace("|", "\\F\\")
    # PV1-7 an XCN, PV1-19 a short visit number, MSH-5/6 from settings
    assert profile._person("u1", "Dr Grace Hopper") == "u1^Hopper^Grace^^^Dr"
    assert a01.pv1.pv1_7.to_er7() == ""  # nobody attending yet: no empty XCN sent
    assert len(a01.pv1.pv1_19.to_er7()) <= 20
    assert a01.pv1.pv1_19.to_er7() == a03.pv1.pv1_19.to_er7()  # kept per admission
    assert a01.msh.msh_5.to_er7() == "RHAPSODY" and a01.msh.msh_6.to_er7() == "ICE"


def test_a_merge_is_sent_as_a40_with_the_retired_mrn_in_mrg(his_store, his_patient,
                                                             engine, settings) -> None:
    settings.HL7_SENDING_FACILITY = "GENERAL"
    dest = destination(his_store, engine, "PatientMerged")
    survivor = his_patient("Ibáñez", given="Zoë")
    retired = use_cases_patients.register_patient(use_cases_patients.RegisterPatient(
        given_name="Female", family_name="Unknown", birth_date=date(1950, 1, 1),
        sex="female"), UnitOfWork(his_store), actor=ADMIN)
    clerk = Actor(id="31", username="rclerk", roles=("clerk",))
    use_cases_patients.merge_patients(use_cases_patients.MergePatients(
        survivor.id, retired.patient_id, "Registered twice"), UnitOfWork(his_store),
        actor=clerk)
    stream = f"P_{retired.patient_id}"
    outcome = drain(his_store).run(dest, stream, stream_head(his_store, stream), token="t1")
    assert outcome.kind == "delivered" and outcome.delivered == 1, outcome
    assert engine.triggers() == ["A40"]
    [a40] = engine.got  # parsed by hl7apy, strict, as v2.5.1 ADT_A39
    assert a40.msh.msh_9.to_er7() == "ADT^A40^ADT_A39"
    assert a40.adt_a39_patient.pid.pid_3.to_er7() == f"{survivor.mrn}^^^GENERAL^MR"
    assert a40.adt_a39_patient.pid.pid_5.to_er7() == "Ibáñez^Zoë"
    assert a40.adt_a39_patient.mrg.mrg_1.to_er7() == f"{retired.mrn}^^^GENERAL^MR"
