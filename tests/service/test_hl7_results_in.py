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


# ------------------------------------------------------------------ ACK semantics (v2.5 §2.9)


def test_a_training_or_debugging_message_is_refused_with_ar_and_never_recorded(
        send, lab_order) -> None:
    for n, processing_id in enumerate(("T", "D")):
        text = oru(f"TRAIN{n}", lab_order.mrn, lab_order.orders["lab"]).replace(
            f"|TRAIN{n}|P|", f"|TRAIN{n}|{processing_id}|")
        ack = send(text)
        assert ack.msa.msa_1.value == "AR" and ack.msa.msa_2.value == f"TRAIN{n}"
        assert ack.msh.msh_11.to_er7() == processing_id  # echoed
        assert err(ack) == ("MSH^1^11", "202", "E")
    assert results(lab_order) == []  # the chart got nothing
    assert send(oru("PROD1", lab_order.mrn, lab_order.orders["lab"])).msa.msa_1.value == "AA"


def test_enhanced_mode_is_answered_with_ca_and_cr(send, lab_order) -> None:
    def enhanced(text: str, accept: str = "AL") -> str:
        msh, rest = text.split("\r", 1)
        return f"{msh}|||{accept}|NE\r{rest}"  # MSH-13, 14 empty; MSH-15, MSH-16

    ack = send(enhanced(oru("ENH1", lab_order.mrn, lab_order.orders["lab"])))
    assert ack.msa.msa_1.value == "CA" and ack.msa.msa_2.value == "ENH1"
    refused = send(enhanced(oru("ENH2", lab_order.mrn, lab_order.orders["lab"])).replace(
        "|ENH2|P|", "|ENH2|T|"), check=False)
    assert refused.msa.msa_1.value == "CR"


@pytest.mark.parametrize("version", ["2.3", "2.4"])
def test_an_older_version_is_refused_with_an_ar_valid_in_that_version(
        listener, lab_order, version) -> None:
    text = oru("OLD1", lab_order.mrn, lab_order.orders["lab"]).replace(
        "ORU^R01^ORU_R01|OLD1|P|2.5.1", f"ORU^R01|OLD1|P|{version}")
    client = MLLPClient("127.0.0.1", listener.port)
    try:
        answer = client.send_message(text).decode("utf-8").strip("\x0b\x1c\r")
    finally:
        client.close()
    parsed = hl7.parse(answer)  # python-hl7 reads it
    assert str(parsed.segment("MSH")[12]) == version
    assert str(parsed.segment("MSA")[1]) == "AR" and str(parsed.segment("MSA")[2]) == "OLD1"
    # hl7apy validates it against that version's ACK structure
    from hl7apy.core import Message
    rebuilt = parse_message(answer, validation_level=VALIDATION_LEVEL.TOLERANT)
    assert rebuilt.version == version and isinstance(rebuilt, Message)
    assert rebuilt.msa.msa_1.value == "AR"


def test_ack_timestamps_are_in_the_hospital_zone(his_store, his_user, lab_order) -> None:
    from zoneinfo import ZoneInfo

    from hl7v2.inbound.receive import handle

    lab = his_user("lab-tz", "nurse")
    receiver = Receiver(get_store(), actor_for(lab), time_zone=ZoneInfo("Europe/Berlin"))
    answer = handle(receiver, oru("TZ1", lab_order.mrn, lab_order.orders["lab"]))
    msh7 = hl7.parse(answer).segment("MSH")[7]
    assert str(msh7)[-5:] in ("+0100", "+0200")


# ------------------------------------------------------------------ the listener's limits


def test_a_20000_obx_flood_is_refused_fast_and_a_normal_message_beside_it_is_not_delayed(
        listener, lab_order) -> None:
    import resource
    import threading
    import time

    flood = "\r".join([
        "MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101120000+0000||ORU^R01^ORU_R01|FLOOD1|P|2.5.1",
        f"PID|1||{lab_order.mrn}^^^HOSP^MR||Doe^Jo||19600101|U",
        f"OBR|1|{lab_order.orders['lab']}||CBC",
        *(f"OBX|{n}|NM|HGB^Haemoglobin^L||{n}|g/L|||||F" for n in range(1, 20_001))])
    assert len(flood) > 600_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB
    flood_answers: list[tuple[str, float]] = []

    def send_flood() -> None:
        client = MLLPClient("127.0.0.1", listener.port)
        begun = time.perf_counter()
        try:
            answer = client.send_message(flood).decode("utf-8").strip("\x0b\x1c\r")
        finally:
            client.close()
        flood_answers.append((answer, time.perf_counter() - begun))

    floods = [threading.Thread(target=send_flood) for _ in range(3)]
    for thread in floods:
        thread.start()
    client = MLLPClient("127.0.0.1", listener.port)
    begun = time.perf_counter()
    normal = client.send_message(oru("NORMAL1", lab_order.mrn, lab_order.orders["lab"]))
    took = time.perf_counter() - begun
    client.close()
    for thread in floods:
        thread.join(30)
    # Not delayed: answered AA, not AR 206 for want of room among the messages being read
    # (the floods would hold that room if a parser read them). Fast: each flood refused by
    # the segment count, before any parser. No wall-clock bound here: a busy machine
    # stretched a 1.0 s one to 1.09 s (both stay in the log for a look).
    assert hl7.parse(normal.decode().strip("\x0b\x1c\r")).segment("MSA")[1][0] == "AA"
    assert len(flood_answers) == 3
    for answer, seconds in flood_answers:
        assert hl7.parse(answer).segment("MSA")[1][0] == "AR", (answer, seconds)
        assert "more than 1000 segments" in answer, answer
        assert parse_message(answer, validation_level=VALIDATION_LEVEL.STRICT).validate()
    print(f"normal answered in {took:.3f} s; floods in "
          f"{', '.join(f'{seconds:.3f}' for _, seconds in flood_answers)} s")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb


def test_a_peer_not_allowed_is_closed_at_connect(his_store, his_user, monkeypatch) -> None:
    monkeypatch.setenv("HL7_LISTENER_PEERS", "10.20.0.0/16")
    lab = his_user("lab-peers", "nurse")
    server = results_listener(Receiver(get_store(), actor_for(lab)), "127.0.0.1", 0)
    thread = serve_in_thread(server)
    try:
        client = MLLPClient("127.0.0.1", server.port)
        client.socket.settimeout(5)
        with pytest.raises((OSError, IndexError, ValueError)):
            answer = client.send_message("MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101||ORU^R01|X|P|2.5.1")
            assert not answer  # closed without an answer
            raise OSError("no answer")
        client.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_an_unknown_sender_is_refused_and_a_wrong_name_or_birth_date_is_ae(
        send, lab_order, his_user) -> None:
    from hl7v2.inbound.receive import handle

    wrong_name = oru("WHO1", lab_order.mrn, lab_order.orders["lab"]).replace(
        "Doe^Jo", "Smith^Jo")
    ack = send(wrong_name)
    assert ack.msa.msa_1.value == "AE" and err(ack) == ("PID^1^5", "204", "E")
    wrong_birth = oru("WHO2", lab_order.mrn, lab_order.orders["lab"]).replace(
        "19600101", "19700101")
    ack = send(wrong_birth)
    assert ack.msa.msa_1.value == "AE" and err(ack)[0] == "PID^1^7"
    assert results(lab_order) == []
    lab = his_user("lab-senders", "nurse")
    only = Receiver(get_store(), actor_for(lab), senders=frozenset({"OTHER^LAB"}))
    refused = hl7.parse(handle(only, oru("WHO3", lab_order.mrn, lab_order.orders["lab"])))
    assert str(refused.segment("MSA")[1]) == "AR"


# ------------------------------------------------------------------ results as labs send them


def lab_oru(control_id: str, mrn: str, *groups: str) -> str:
    return "\r".join([
        f"MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101120000+0000||ORU^R01^ORU_R01|{control_id}|P|2.5.1",
        f"PID|1||{mrn}^^^HOSP^MR||Doe^Jo||19600101|U", *groups])


def cbc(order_id: str, status: str, hgb: str = "120", *, extra: str = "") -> str:
    return "\r".join([
        f"OBR|1|{order_id}||CBC^Full blood count^L|||20260101103000",
        "NTE|1|L|Sample slightly haemolysed \\T\\ re-spun",
        f"OBX|1|NM|HGB^Haemoglobin^L||{hgb}|g/L^^UCUM|130-170|L~A|||{status}|||"
        "20260101104500+0100",
        "NTE|1|L|Repeat in 24 h",
        f"OBX|2|SN|WBC^White cells^L||<^0.5|10*9/L^^UCUM|4-11|L|||{status}",
        f"OBX|3|NM|PLT^Platelets^L||450|10*9/L^^UCUM|||||{status}{extra}"])


def observation_statuses(patient: SeededPatient) -> set[str]:
    answer = patient.clients["clinician"].get(f"/fhir/R4/Observation?patient={patient.id}")
    assert answer.status_code == 200, answer.content
    return {e["resource"]["status"] for e in answer.json().get("entry", [])}


def test_preliminary_then_final_then_a_correction_keep_the_history(send, lab_order) -> None:
    order_id = lab_order.orders["lab"]
    ack = send(lab_oru("P1", lab_order.mrn, cbc(order_id, "P", "118")))
    assert ack.msa.msa_1.value == "AA"
    [prelim] = results(lab_order)
    assert prelim["status"] == "preliminary" and prelim["history"] == []
    orders = lab_order.clients["clinician"].get(f"/api/v1/patients/{lab_order.id}/orders")
    assert {o["order_id"]: o["status"] for o in orders.json()}[order_id] == "in_progress"
    assert observation_statuses(lab_order) == {"preliminary"}  # the FHIR facade says so too
    assert send(lab_oru("F1", lab_order.mrn, cbc(order_id, "F"))).msa.msa_1.value == "AA"
    [final] = results(lab_order)
    assert final["status"] == "final" and [h["status"] for h in final["history"]] == [
        "preliminary"]
    # the clinician reviews it; the lab then sends a new final: a correction, not an error
    acked = lab_order.clients["clinician"].post(
        f"/api/v1/patients/{lab_order.id}/orders/{order_id}/acknowledge", content_type=JSON)
    assert acked.status_code == 200, acked.content
    assert send(lab_oru("F2", lab_order.mrn, cbc(order_id, "F", "131"))).msa.msa_1.value == "AA"
    [corrected] = results(lab_order)
    assert corrected["status"] == "corrected" and corrected["acknowledged_at"] is None
    assert [h["status"] for h in corrected["history"]] == ["preliminary", "final"]
    assert corrected["history"][-1]["values"][0]["value"] == 120
    hgb, wbc, _ = corrected["values"]
    assert hgb["value"] == 131 and hgb["flag"] is None  # ours, from our reference range
    assert hgb["lab_range"] == "130-170" and hgb["lab_flags"] == ["L", "A"]  # theirs, kept
    assert hgb["observed_at"] == "2026-01-01T10:45:00+01:00"
    assert hgb["comments"] == ["Repeat in 24 h"]
    assert wbc["comparator"] == "<" and wbc["text"] == "<0.5" and wbc["value"] == 0.5
    assert wbc["flag"] == "L"  # below 0.5 is below our range whatever its value
    assert corrected["comments"] == ["Sample slightly haemolysed & re-spun"]
    assert corrected["observed_at"].startswith("2026-01-01T10:30:00")
    assert observation_statuses(lab_order) == {"corrected"}
    fhir_wbc = [e["resource"] for e in lab_order.clients["clinician"].get(
        f"/fhir/R4/Observation?patient={lab_order.id}").json()["entry"]
        if e["resource"]["code"]["coding"][0]["code"] == "WBC"][0]
    assert fhir_wbc["valueQuantity"]["comparator"] == "<"
    # an explicit correction (OBX-11 C) likewise; the same message again records nothing
    assert send(lab_oru("C1", lab_order.mrn, cbc(order_id, "C", "132"))).msa.msa_1.value == "AA"
    assert send(lab_oru("C2", lab_order.mrn, cbc(order_id, "C", "132"))).msa.msa_1.value == "AA"
    [again] = results(lab_order)
    assert again["values"][0]["value"] == 132 and len(again["history"]) == 3
    # a preliminary after the final is refused with AE naming why, nothing recorded
    late = send(lab_oru("P2", lab_order.mrn, cbc(order_id, "P", "99")))
    assert late.msa.msa_1.value == "AE"
    assert results(lab_order)[0]["values"][0]["value"] == 132


def test_two_orders_in_one_message_are_recorded_together_or_not_at_all(
        send, his_patient) -> None:
    patient = his_patient(orders=("lab",))
    second = patient.clients["clinician"].post(f"/api/v1/patients/{patient.id}/orders", {
        "kind": "lab", "test_code": "CRP"}, content_type=JSON).json()["order_id"]
    for order_id in (patient.orders["lab"], second):
        started = patient.clients["nurse"].post(
            f"/api/v1/patients/{patient.id}/orders/{order_id}/start", {}, content_type=JSON)
        assert started.status_code == 200, started.content
    crp = f"OBR|2|{second}||CRP^C-reactive protein^L\rOBX|4|NM|CRP^CRP^L||12|mg/L|||||F"
    bad_crp = crp.replace("|mg/L|", "|furlongs|")
    refused = send(lab_oru("TWO1", patient.mrn, cbc(patient.orders["lab"], "F"), bad_crp))
    assert refused.msa.msa_1.value == "AE" and err(refused)[:2] == ("OBX^4^6", "103")
    assert results(patient) == []  # the first order was not recorded either
    ack = send(lab_oru("TWO2", patient.mrn, cbc(patient.orders["lab"], "F"), crp))
    assert ack.msa.msa_1.value == "AA"
    assert {r["order_id"] for r in results(patient)} == {patient.orders["lab"], second}


def test_a_control_id_reused_with_other_content_is_ae_not_a_silent_duplicate(
        send, lab_order) -> None:
    order_id = lab_order.orders["lab"]
    assert send(oru("SAME1", lab_order.mrn, order_id)).msa.msa_1.value == "AA"
    # the very same message again (a resend, a new MSH-7 even): AA, nothing recorded twice
    resend = oru("SAME1", lab_order.mrn, order_id).replace("20260101120000", "20260101120500")
    assert send(resend).msa.msa_1.value == "AA"
    other = oru("SAME1", lab_order.mrn, order_id, (("HGB", "99", "g/L^g/L^UCUM"),
                                                   *CBC[1:]))
    reused = send(other)
    assert reused.msa.msa_1.value == "AE" and err(reused) == ("MSH^1^10", "205", "E")
    assert results(lab_order)[0]["values"][0]["value"] == 120


def test_a_system_problem_is_ar_207_and_the_resend_is_recorded(
        send, lab_order, monkeypatch) -> None:
    from patients import use_cases

    real = use_cases.record_lab_results

    def store_down(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("store unreachable")

    monkeypatch.setattr(use_cases, "record_lab_results", store_down)
    ack = send(oru("SYS1", lab_order.mrn, lab_order.orders["lab"]))
    assert ack.msa.msa_1.value == "AR" and err(ack) == ("MSH^1^10", "207", "E")
    assert results(lab_order) == []
    monkeypatch.setattr(use_cases, "record_lab_results", real)
    assert send(oru("SYS1", lab_order.mrn, lab_order.orders["lab"])).msa.msa_1.value == "AA"
    assert len(results(lab_order)) == 1


def test_a_message_that_takes_too_long_to_read_is_ar_at_the_limit(
        send, lab_order, monkeypatch) -> None:
    import threading

    from hl7v2.inbound import receive

    monkeypatch.setenv("HL7_LISTENER_PARSE_SECONDS", "0.3")
    real = receive.read
    released = threading.Event()

    def slow(text: str) -> Any:
        released.wait(60)  # a pathological message the size limits let through
        return real(text)

    monkeypatch.setattr(receive, "read", slow)
    try:
        # The read cannot end before the test releases it, so an answer at all (within the
        # client's 10 s timeout) is one given at the limit while the read still goes on; no
        # wall-clock bound, which a busy machine stretches (2.68 s once under the suite).
        ack = send(oru("SLOW1", lab_order.mrn, lab_order.orders["lab"]))
    finally:
        released.set()
    assert ack.msa.msa_1.value == "AR" and err(ack)[1] == "100"
    assert results(lab_order) == []
