"""Lab results in over MLLP: python-hl7's MLLP client as the laboratory's engine talks to the
listener on 127.0.0.1; every message sent and every ACK checked by hl7apy (v2.5.1)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import hl7
import pytest
from hl7.client import MLLPClient
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message

from hisadmin.core.policy import actor_for
from hisadmin.core.store import get_store
from hl7v2.inbound.listener import MllpListener, results_listener, serve_in_thread
from hl7v2.inbound.receive import Receiver
from hl7v2.persistence import receipts
from testkit.fixtures import JSON, SeededPatient

pytestmark = [pytest.mark.service, pytest.mark.django_db(transaction=True)]
CBC = (("HGB", "120", "g/L^g/L^UCUM"), ("WBC", "7.5", "10*9/L^^UCUM"),
       ("PLT", "450", "10*9/L^^UCUM"))


def oru(control_id: str, mrn: str, order_id: str,
        values: tuple[tuple[str, str, str], ...] = CBC) -> str:
    return "\r".join([
        f"MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101120000+0000||ORU^R01^ORU_R01|{control_id}|P|2.5.1",
        f"PID|1||{mrn}^^^HOSP^MR||Doe^Jo||19600101|U",
        f"ORC|RE|{order_id}|F-{control_id}",
        f"OBR|1|{order_id}|F-{control_id}|CBC^Full blood count^L|||20260101110000+0000",
        *(f"OBX|{n}|NM|{code}^{code}^L||{value}|{unit}|||||F"
          for n, (code, value, unit) in enumerate(values, start=1))])


@pytest.fixture
def listener(his_store: Any, his_user: Callable[..., Any]) -> Iterator[MllpListener]:
    lab = his_user("lab-system", "nurse")
    server = results_listener(Receiver(get_store(), actor_for(lab)), "127.0.0.1", 0)
    thread = serve_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def send(listener: MllpListener) -> Iterator[Callable[[str], Any]]:
    """``send(text)`` → the parsed ACK, both strictly valid v2.5.1 (``check=False``: a
    message meant to be refused); one connection."""
    client = MLLPClient("127.0.0.1", listener.port)
    client.socket.settimeout(10)

    def send(text: str, *, check: bool = True) -> Any:
        if check:
            assert parse_message(text, validation_level=VALIDATION_LEVEL.STRICT,
                                 find_groups=True).validate()
        raw = client.send_message(text)
        answer = raw.decode("utf-8").strip("\x0b\x1c\r")
        parsed = parse_message(answer, validation_level=VALIDATION_LEVEL.STRICT,
                               find_groups=True)
        assert parsed.validate()
        assert hl7.parse(answer).segment("MSA")[1][0] == parsed.msa.msa_1.value
        return parsed

    yield send
    client.close()


@pytest.fixture
def lab_order(his_patient: Callable[..., SeededPatient]) -> SeededPatient:
    patient = his_patient(orders=("lab",))
    started = patient.clients["nurse"].post(
        f"/api/v1/patients/{patient.id}/orders/{patient.orders['lab']}/start",
        {}, content_type=JSON)
    assert started.status_code == 200, started.content
    return patient


def results(patient: SeededPatient) -> list[dict[str, Any]]:
    answer = patient.clients["clinician"].get(f"/api/v1/patients/{patient.id}/results")
    assert answer.status_code == 200
    return answer.json()


def err(ack: Any) -> tuple[str, str, str]:
    return ack.err.err_2.to_er7(), ack.err.err_3.cwe_1.value, ack.err.err_4.value


def test_it_records_the_results_and_answers_aa(send: Any, lab_order: SeededPatient,
                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hl7v2.inbound")
    ack = send(oru("LAB0001", lab_order.mrn, lab_order.orders["lab"]))
    assert ack.msa.msa_1.value == "AA" and ack.msa.msa_2.value == "LAB0001"
    assert ack.msh.msh_9.to_er7() == "ACK^R01^ACK" and ack.msh.msh_5.to_er7() == "LIS"
    [result] = results(lab_order)
    assert result["order_id"] == lab_order.orders["lab"] and result["resulted_by"] == "lab-system"
    assert [(v["analyte"], v["value"], v["unit"], v["flag"]) for v in result["values"]] == [
        ("HGB", 120, "g_l", "L"), ("WBC", 7.5, "x10e9_l", None), ("PLT", 450, "x10e9_l", "H")]
    assert "LAB0001" in caplog.text and lab_order.mrn not in caplog.text


def test_it_answers_a_resend_aa_and_records_once(send: Any, lab_order: SeededPatient,
                                                 his_store: Any) -> None:
    message = oru("LAB0002", lab_order.mrn, lab_order.orders["lab"])
    assert send(message).msa.msa_1.value == "AA"
    assert send(message).msa.msa_1.value == "AA"
    assert len(results(lab_order)) == 1
    audit = lab_order.clients["clinician"].get(f"/api/v1/patients/{lab_order.id}/events")
    assert audit.status_code == 200
    assert sum(e["type"] == "ResultsRecorded" for e in audit.json()["items"]) == 1


def test_it_converts_units(send: Any, lab_order: SeededPatient) -> None:
    # haemoglobin in mg/L is kept in the analyte's g/L
    values = (("HGB", "140000", "mg/L^^UCUM"), *CBC[1:])
    assert send(oru("LAB0003", lab_order.mrn, lab_order.orders["lab"], values)
                ).msa.msa_1.value == "AA"
    [result] = results(lab_order)
    assert (result["values"][0]["value"], result["values"][0]["unit"]) == (140, "g_l")


@pytest.mark.parametrize(("what", "location"), [
    ("mrn", "PID^1^3"), ("order", "OBR^1^2"), ("analyte", "OBX^2^3")])
def test_it_answers_ae_naming_what_is_unknown(send: Any, lab_order: SeededPatient, what: str,
                                              location: str) -> None:
    mrn = "999999999" if what == "mrn" else lab_order.mrn
    order_id = "00000000-0000-4000-8000-000000000000" if what == "order" \
        else lab_order.orders["lab"]
    values = (CBC[0], ("XYZ", "1", ""), *CBC[2:]) if what == "analyte" else CBC
    ack = send(oru(f"LAB-{what}", mrn, order_id, values))
    assert ack.msa.msa_1.value == "AE" and ack.msa.msa_2.value == f"LAB-{what}"
    assert err(ack) == (location, "204", "E")
    assert results(lab_order) == []


def test_it_answers_ae_when_the_order_is_not_in_progress(
        send: Any, his_patient: Callable[..., SeededPatient]) -> None:
    patient = his_patient(orders=("lab",))  # placed, never started
    ack = send(oru("LAB0004", patient.mrn, patient.orders["lab"]))
    assert ack.msa.msa_1.value == "AE" and err(ack) == ("OBR^1^2", "207", "E")
    # refused: the resend after the order is started is recorded
    patient.clients["nurse"].post(f"/api/v1/patients/{patient.id}/orders/"
                                  f"{patient.orders['lab']}/start", {}, content_type=JSON)
    assert send(oru("LAB0004", patient.mrn, patient.orders["lab"])).msa.msa_1.value == "AA"
    assert len(results(patient)) == 1


def test_it_answers_ar_to_what_does_not_parse(send: Any) -> None:
    ack = send("this is not HL7", check=False)
    assert ack.msa.msa_1.value == "AR"
    ack = send("MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101120000+0000||ADT^A01^ADT_A01|X1|P|2.5.1",
               check=False)
    assert ack.msa.msa_1.value == "AR" and ack.msa.msa_2.value == "X1"
    assert err(ack) == ("MSH^1^9", "200", "E")


def test_a_control_id_is_claimed_once(his_store: Any) -> None:
    first = receipts.claim(his_store, "LIS^LAB", "RACE1")
    assert first.claim == receipts.Claim.NEW
    assert receipts.claim(his_store, "LIS^LAB", "RACE1").claim == receipts.Claim.BUSY
    assert receipts.claim(his_store, "OTHER^LAB", "RACE1").claim == receipts.Claim.NEW
    receipts.recorded(his_store, first, "order-1")
    assert receipts.claim(his_store, "LIS^LAB", "RACE1").claim == receipts.Claim.RECORDED
