"""ORU^R01 in, read and mapped without a store; the ACKs checked by hl7apy against v2.5.1."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.parser import parse_message

from hl7v2.inbound.ack import Identity, ack
from hl7v2.inbound.mapping import given_values, observed_at, unit_code
from hl7v2.inbound.oru import Refusal, Unparsable, read
from hl7v2.inbound.vitals import vital_signs
from patients.domain.results import GivenValue

OID = "3f0b5c9e-8d4a-4b1e-9a51-0c2f6a7d1e42"
UNITS = {"g_l": {"code": "g_l", "name": "g/L"}, "umol_l": {"code": "umol_l", "name": "µmol/L"},
         "mmol_l": {"code": "mmol_l", "name": "mmol/L"},
         "x10e9_l": {"code": "x10e9_l", "name": "×10⁹/L"}}
CBC = [{"code": "HGB", "name": "Haemoglobin", "unit": "g_l"},
       {"code": "WBC", "name": "White cell count", "unit": "x10e9_l"}]


def oru(*obx: str, control_id: str = "MSG0001", pid3: str = "000123^^^HOSP^MR",
        obr2: str = OID, version: str = "2.5.1", message_type: str = "ORU^R01^ORU_R01") -> str:
    return "\r".join([
        f"MSH|^~\\&|LIS|LAB|HIS|HOSP|20260101120000+0000||{message_type}|{control_id}|P|{version}",
        f"PID|1||{pid3}||Doe^Jo||19600101|U",
        f"ORC|RE|{obr2}|F123",
        f"OBR|1|{obr2}|F123|CBC^Full blood count^L|||20260101110000+0000",
        *obx])


def obx(n: int, code: str, value: str, unit: str = "", status: str = "F") -> str:
    return f"OBX|{n}|NM|{code}^{code}^L||{value}|{unit}|||||{status}"


def strictly_valid(text: str) -> bool:
    return parse_message(text, validation_level=VALIDATION_LEVEL.STRICT,
                         find_groups=True).validate()


def test_it_reads_the_profile_fields() -> None:
    text = oru(obx(1, "HGB", "120", "g/L^^UCUM"), obx(2, "WBC", "7.5"),
               pid3="X9^^^OTHER^PI~000123^^^HOSP^MR")
    assert strictly_valid(text)
    message = read(text.replace("\r", "\r\n"))  # engines that end lines with CR LF too
    assert (message.control_id, message.mrn, message.order_id) == ("MSG0001", "000123", OID)
    assert (message.sending_application, message.sending_facility) == ("LIS", "LAB")
    assert [(o.position, o.code, o.value, o.unit) for o in message.observations] == [
        (1, "HGB", "120", "g/L"), (2, "WBC", "7.5", "")]


@pytest.mark.parametrize("text", ["garbage", "", "MSH|^~\\&|X", "PID|1||000123"])
def test_it_rejects_what_is_not_hl7(text: str) -> None:
    with pytest.raises(Unparsable):
        read(text)


def test_it_rejects_another_message_type_and_version() -> None:
    with pytest.raises(Unparsable) as kind:
        read(oru(obx(1, "HGB", "1"), message_type="ADT^A01^ADT_A01"))
    assert kind.value.location == "MSH^1^9" and kind.value.code == "200"
    with pytest.raises(Unparsable) as version:
        read(oru(obx(1, "HGB", "1"), version="2.3"))
    assert version.value.location == "MSH^1^12" and version.value.code == "203"


def test_it_refuses_a_message_without_mrn_or_order_number() -> None:
    with pytest.raises(Refusal) as no_mrn:
        read(oru(obx(1, "HGB", "1"), pid3=""))
    assert no_mrn.value.location == "PID^1^3"
    with pytest.raises(Refusal) as no_order:
        read(oru(obx(1, "HGB", "1"), obr2=""))
    assert no_order.value.location == "OBR^1^2"


def test_it_maps_values_and_units_to_the_analytes() -> None:
    message = read(oru(obx(1, "WBC", "7.5", "10*9/L^^UCUM"), obx(2, "HGB", "120", "g/L")))
    assert given_values(message.observations, CBC, UNITS) == (
        GivenValue("WBC", Decimal("7.5"), "x10e9_l"), GivenValue("HGB", Decimal("120"), "g_l"))
    assert unit_code("umol/L", UNITS) == unit_code("µmol/L", UNITS) == "umol_l"
    assert unit_code("furlongs", UNITS) is None


@pytest.mark.parametrize(("segments", "location", "code"), [
    ((obx(1, "HGB", "1"), obx(2, "XYZ", "1")), "OBX^2^3", "204"),
    ((obx(1, "HGB", "1"), obx(2, "HGB", "2")), "OBX^2^3", "205"),
    ((obx(1, "HGB", "high"), obx(2, "WBC", "1")), "OBX^1^5", "102"),
    ((obx(1, "HGB", "1", "furlongs"), obx(2, "WBC", "1")), "OBX^1^6", "103"),
    ((obx(1, "HGB", "1", "%"), obx(2, "WBC", "1")), "OBX^1^6", "103"),  # no factor: refused
    ((obx(1, "HGB", "1", status="X"), obx(2, "WBC", "1")), "OBX^1^11", "103"),
    ((obx(1, "HGB", "1"),), "OBR^1^4", "101"),
])
def test_it_refuses_observations_naming_the_field(segments: tuple[str, ...], location: str,
                                                  code: str) -> None:
    with pytest.raises(Refusal) as refused:
        given_values(read(oru(*segments)).observations, CBC, UNITS)
    assert (refused.value.location, refused.value.code) == (location, code)


@pytest.mark.parametrize("problem", [None, Refusal("PID^1^3", "204", "No patient | here")])
def test_its_acks_are_valid_v251(problem: Refusal | None) -> None:
    text = ack("AE" if problem else "AA", "MSG0001", ours=Identity("HIS", "HOSP", "LIS", "LAB"),
               timestamp="20260101120001+0000", ack_id="ACKMSG0001", problem=problem)
    assert strictly_valid(text)
    parsed = parse_message(text, find_groups=True)
    assert parsed.msa.msa_1.value == ("AE" if problem else "AA")
    assert parsed.msa.msa_2.value == "MSG0001"
    if problem:
        assert parsed.err.err_2.to_er7() == "PID^1^3"
        assert parsed.err.err_3.cwe_1.value == "204" and parsed.err.err_4.value == "E"


def test_a_monitors_group_is_read_as_vital_signs() -> None:
    text = oru("OBX|1|NM|8310-5^Body temperature^LN||38,4||||||F|||20261128093015.123456+0100"
               "||||MON-7", "OBX|2|NM|3151-8^O2 flow^LN||2|L/min^^UCUM|||||R", obr2="")
    text = text.replace("CBC^Full blood count^L", "85353-1^Vital signs panel^LN")
    [group] = read(text).orders
    assert group.vital_signs and group.order_id == ""
    signs = vital_signs(group)
    assert signs.values == {"temperature": "38.4", "on_oxygen": True, "oxygen_flow_l_min": "2"}
    assert signs.devices == ("MON-7",) and signs.positions["on_oxygen"] == 2
    assert signs.taken_at == "2026-01-01T11:00:00+00:00"  # OBR-7 before OBX-14
    assert observed_at("20261128093015.123456+0100") == "2026-11-28T09:30:15.123456+01:00"
