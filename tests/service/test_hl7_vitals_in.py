"""Vital signs in over MLLP: a bedside monitor's gateway (python-hl7's MLLP client) sends an
ORU^R01 whose OBR names no lab order (OBR-4 the vital-signs panel, LOINC codes in OBX-3);
the listener records it as an observation set, scored, attributed to the monitor. Every
message sent and every ACK is checked by hl7apy (v2.5.1)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from hisadmin.core.store import get_store
from patients.persistence import observations as stored
from testkit.fixtures import SeededPatient
from tests.service.test_hl7_results_in import err, listener, send  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.service, pytest.mark.django_db(transaction=True)]
PARIS = timezone(timedelta(hours=1))
# NEWS2 7 when complete: RR 22 (2), SpO2 94 (1), air (0), systolic 104 (1), pulse 112 (2),
# temperature 38.4 (1); a monitor cannot say ACVPU, so the set is partial and unscored.
VITALS = (("9279-1", "Respiratory rate", "22", "/min"), ("59408-5", "SpO2", "94", "%"),
          ("8480-6", "Systolic blood pressure", "104", "mm[Hg]"),
          ("8462-4", "Diastolic blood pressure", "62", "mm[Hg]"),
          ("8867-4", "Heart rate", "112", "/min"), ("8310-5", "Body temperature", "38.4", "Cel"),
          ("3151-8", "Inhaled oxygen flow rate", "0", "L/min"))
NOTE = "Patientin unruhig — Sonde neu angelegt; SpO₂ stabil 🙂 (Zoë)"


def dtm(moment: datetime) -> str:
    """An HL7 DTM in the monitor's local zone, to the ten-thousandth of a second (the most
    HL7 v2.5 allows) with its offset."""
    local = moment.astimezone(PARIS)
    return local.strftime("%Y%m%d%H%M%S.") + f"{local.microsecond // 100:04d}" + \
        local.strftime("%z")


def monitor_oru(control_id: str, mrn: str, values: tuple = VITALS, *, taken: datetime | None
                = None, obr2: str = "", panel: str = "85353-1^Vital signs panel^LN",
                note: str = NOTE) -> str:
    at = dtm(taken or datetime.now(UTC) - timedelta(minutes=3))
    return "\r".join([
        f"MSH|^~\\&|CARESCAPE|WARD7|HIS|HOSP|{at}||ORU^R01^ORU_R01|{control_id}|P|2.5.1",
        f"PID|1||{mrn}^^^HOSP^MR||Doe^Jo||19600101|U",
        f"OBR|1|{obr2}||{panel}|||{at}",
        *([f"NTE|1||{note}"] if note else []),
        *(f"OBX|{n}|NM|{code}^{name}^LN||{value}|{unit}^^UCUM|||||F|||{at}||||BED12-MON"
          for n, (code, name, value, unit) in enumerate(values, start=1))])


def sets(patient: SeededPatient) -> list[dict[str, Any]]:
    answer = patient.clients["nurse"].get(f"/api/v1/patients/{patient.id}/observations")
    assert answer.status_code == 200, answer.content
    return answer.json()["items"]


@pytest.fixture
def patient(his_patient: Callable[..., SeededPatient]) -> SeededPatient:
    return his_patient()


def test_a_monitors_set_is_recorded_scored_and_attributed(send, patient) -> None:  # noqa: F811
    taken = datetime.now(UTC).replace(microsecond=654321) - timedelta(minutes=4)
    ack = send(monitor_oru("MON00001", patient.mrn, taken=taken))
    assert ack.msa.msa_1.value == "AA" and ack.msa.msa_2.value == "MON00001"
    [one] = sets(patient)
    assert (one["respiration_rate"], one["spo2"], one["systolic_bp"], one["diastolic_bp"],
            one["pulse"], one["temperature"], one["on_oxygen"]) == (22, 94, 104, 62, 112,
                                                                    38.4, False)
    assert one["oxygen_flow_l_min"] is None  # a flow of 0: on air
    assert datetime.fromisoformat(one["taken_at"]) == taken.replace(microsecond=654300)
    news2 = one["news2"]
    assert news2["complete"] is False and news2["score"] is None  # no ACVPU from a monitor
    assert news2["parameter_scores"]["respiration_rate"] == 2
    assert news2["parameter_scores"]["pulse"] == 2
    assert one["comment"] == NOTE
    assert one["recorded_by"] == "Monitor BED12-MON (CARESCAPE^WARD7)"
    set_doc = stored.page(get_store(), patient.id)[0][0]
    assert set_doc["source"] == {"system": "CARESCAPE^WARD7", "devices": ["BED12-MON"],
                                 "controlId": "MON00001"}
    assert send(monitor_oru("MON00001", patient.mrn, taken=taken)).msa.msa_1.value == "AA"
    assert len(sets(patient)) == 1  # a resend is a duplicate, recorded once


def test_no_order_number_and_loinc_codes_is_a_monitors_set_too(send, patient) -> None:  # noqa: F811
    ack = send(monitor_oru("MON00002", patient.mrn, VITALS[:2],
                           panel="VS^Vitals^L", note=""))
    assert ack.msa.msa_1.value == "AA"
    assert [(s["respiration_rate"], s["spo2"]) for s in sets(patient)] == [(22, 94)]


@pytest.mark.parametrize(("values", "where", "code"), [
    ((("9279-1", "RR", "22", "/min"), ("2339-0", "Glucose", "5.4", "mmol/L")),
     "OBX^2^3", "204"),  # a code that is not a vital sign
    ((("8867-4", "HR", "112", "/min"), ("8867-4", "HR", "113", "/min")),
     "OBX^2^3", "205"),  # twice
    ((("8310-5", "Temp", "101.2", "[degF]"),), "OBX^1^6", "103"),  # not a UCUM unit taken
    ((("59408-5", "SpO2", "104", "%"),), "OBX^1^5", "207"),  # impossible
    ((("8310-5", "Temp", "3", "Cel"),), "OBX^1^5", "207"),  # "3 °C"
    ((("8480-6", "SBP", "60", "mm[Hg]"), ("8462-4", "DBP", "80", "mm[Hg]")),
     "OBX^1^5", "207"),  # systolic below diastolic
    ((("8867-4", "HR", "fast", "/min"),), "OBX^1^5", "102"),  # not a number
])
def test_what_cannot_be_recorded_is_ae_and_nothing_is_written(
        send, patient, values, where, code) -> None:  # noqa: F811
    ack = send(monitor_oru("MON00003", patient.mrn, values), check=False)
    assert ack.msa.msa_1.value == "AE"
    assert err(ack) == (where, code, "E")
    assert sets(patient) == []


def test_a_set_from_the_future_is_ae_at_obr_7(send, patient) -> None:  # noqa: F811
    ack = send(monitor_oru("MON00004", patient.mrn,
                           taken=datetime.now(UTC) + timedelta(hours=2)))
    assert ack.msa.msa_1.value == "AE" and err(ack) == ("OBR^1^7", "207", "E")
    assert sets(patient) == []


def test_a_refused_set_beside_a_good_one_records_neither(send, patient) -> None:  # noqa: F811
    good = monitor_oru("X", patient.mrn).split("\r")[2:]
    bad = monitor_oru("X", patient.mrn, (("59408-5", "SpO2", "140", "%"),),
                      note="").split("\r")[2:]
    bad = [line.replace("OBR|1|", "OBR|2|").replace("OBX|1|", "OBX|1|") for line in bad]
    text = "\r".join(monitor_oru("MON00005", patient.mrn).split("\r")[:2] + good + bad)
    ack = send(text)
    assert ack.msa.msa_1.value == "AE" and err(ack)[0] == "OBX^8^5"
    assert sets(patient) == []  # the first group was not written either


def test_an_unknown_mrn_is_ae(send) -> None:  # noqa: F811
    ack = send(monitor_oru("MON00006", "999999999"))
    assert ack.msa.msa_1.value == "AE" and err(ack)[:2] == ("PID^1^3", "204")


def test_a_set_recorded_before_its_receipt_was_marked_is_not_recorded_again(
        patient, his_user) -> None:
    """The listener died between the set's batch and its receipt: the resend that takes the
    claim over records the same set again, and finds it there."""
    from hisadmin.core.policy import actor_for
    from hl7v2.inbound.oru import read
    from hl7v2.inbound.receive import Receiver, _record

    receiver = Receiver(get_store(), actor_for(his_user("monitor-gateway", "nurse")))
    message = read(monitor_oru("MON00007", patient.mrn))
    _record(receiver, message)
    _record(receiver, message)  # the resend, after the claim was taken over
    assert len(sets(patient)) == 1
