"""Reading an ORU^R01 (v2.5 / v2.5.1) into what recording its results needs. Pure: no store.

hl7apy fits the text to the ORU_R01 message structure (groups and segments, leniently: an
engine's extra fields do not refuse a message); this module then reads the fields of the
profile (docs/hl7.md#inbound-results-oru-r01). A message that cannot be read at all is
:class:`Unparsable` (answered AR); one that is read but names something wrong is a
:class:`Refusal` naming the field (answered AE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.exceptions import HL7apyException
from hl7apy.parser import parse_message

VERSIONS = ("2.5", "2.5.1")
MAX_SEGMENTS = 1000  # per message: an ORU of one order has tens
MAX_REPETITIONS = 50  # per field
PROCESSING_IDS = ("P",)  # MSH-11: production only; T (training) and D (debugging) never reach a chart
FINAL_STATUSES = ("F", "")  # OBX-11: final (an engine may leave it empty)

# HL7 table 0357, the ERR-3 codes this listener answers with.
SEGMENT_SEQUENCE_ERROR = "100"
REQUIRED_FIELD_MISSING = "101"
DATA_TYPE_ERROR = "102"
TABLE_VALUE_NOT_FOUND = "103"
UNSUPPORTED_MESSAGE_TYPE = "200"
UNSUPPORTED_PROCESSING_ID = "202"
UNSUPPORTED_VERSION = "203"
UNKNOWN_KEY = "204"
DUPLICATE_KEY = "205"
APPLICATION_ERROR = "207"
ERROR_NAMES = {
    SEGMENT_SEQUENCE_ERROR: "Segment sequence error",
    REQUIRED_FIELD_MISSING: "Required field missing",
    DATA_TYPE_ERROR: "Data type error",
    TABLE_VALUE_NOT_FOUND: "Table value not found",
    UNSUPPORTED_MESSAGE_TYPE: "Unsupported message type",
    UNSUPPORTED_PROCESSING_ID: "Unsupported processing id",
    UNSUPPORTED_VERSION: "Unsupported version id",
    UNKNOWN_KEY: "Unknown key identifier",
    DUPLICATE_KEY: "Duplicate key identifier",
    APPLICATION_ERROR: "Application internal error",
}


class Problem(Exception):
    """Something wrong at an ERR-2 location (``PID^1^3``) with an ERR-3 code; the text is
    for the engine's operators and never holds patient data."""

    def __init__(self, location: str, code: str, text: str) -> None:
        super().__init__(text)
        self.location, self.code, self.text = location, code, text


class Unparsable(Problem):
    """Not a v2.5.x ORU^R01 that can be read: answered AR."""


class Refusal(Problem):
    """A readable message naming something this system cannot record: answered AE."""


@dataclass(frozen=True)
class Observation:
    """One OBX: ``position`` is its occurrence among the message's OBX (ERR-2's sequence)."""

    position: int
    code: str  # OBX-3.1, the analyte code
    value_type: str  # OBX-2
    value: str  # OBX-5
    unit: str  # OBX-6.1, as the lab wrote it
    status: str  # OBX-11

    def location(self, field: int) -> str:
        return f"OBX^{self.position}^{field}"


@dataclass(frozen=True)
class ResultMessage:
    """What recording an ORU^R01's results needs, and what its ACK echoes."""

    control_id: str  # MSH-10
    sending_application: str  # MSH-3.1
    sending_facility: str  # MSH-4.1
    processing_id: str  # MSH-11.1
    version: str  # MSH-12.1
    mrn: str  # PID-3.1 of the repetition typed MR (else the first)
    order_id: str  # OBR-2.1, the placer order number: our order id
    observations: tuple[Observation, ...]
    family_name: str = ""  # PID-5.1.1 (checked against the record when given)
    given_name: str = ""  # PID-5.2
    birth_date: str = ""  # PID-7, YYYYMMDD (checked against the record when given)


def normalise(text: str) -> str:
    """Segments separated by ``\\r``, whatever line ends the sender used; no blank lines."""
    lines = text.replace("\r\n", "\r").replace("\n", "\r").split("\r")
    return "\r".join(line for line in lines if line.strip())


def header_fields(text: str) -> list[str]:
    """The MSH fields by HL7 number (``[1]`` the field separator), read without a parser:
    what an AR echoes of a message that does not parse. Empty when there is no MSH."""
    first = normalise(text).split("\r", 1)[0]
    if not first.startswith("MSH") or len(first) < 4:
        return []
    separator = first[3]
    return ["MSH", separator, *first[4:].split(separator)]


def header_value(fields: list[str], number: int) -> str:
    """The first component of MSH-``number`` in ``header_fields``' list ("" when absent)."""
    if len(fields) <= number:
        return ""
    return fields[number].split(fields[2][:1] or "^")[0].strip() if number > 2 else fields[number]


def _value(field: Any) -> str:
    return str(field.value or "").strip() if field is not None else ""


def _first(items: Any) -> Any:
    return items[0] if len(items) else None


def _mrn(pid: Any) -> str:
    ids = [(_value(cx.cx_1), _value(cx.cx_5)) for cx in pid.pid_3]
    typed = [number for number, kind in ids if kind == "MR"]
    return (typed or [number for number, _ in ids] or [""])[0]


def _parse(text: str) -> Any:
    try:
        return parse_message(text, validation_level=VALIDATION_LEVEL.TOLERANT,
                             find_groups=True)
    except (HL7apyException, ValueError, IndexError, KeyError) as exc:
        raise Unparsable("MSH", SEGMENT_SEQUENCE_ERROR,
                         f"The message could not be parsed ({type(exc).__name__}).") from None


def _header(msg: Any) -> tuple[str, str, str, str, str]:
    msh = msg.msh
    kind, trigger = _value(msh.msh_9.msg_1), _value(msh.msh_9.msg_2)
    if (kind, trigger) != ("ORU", "R01"):
        raise Unparsable("MSH^1^9", UNSUPPORTED_MESSAGE_TYPE,
                         f"Only ORU^R01 is accepted here, not {kind}^{trigger}.")
    control_id = _value(msh.msh_10)
    if not control_id:
        raise Unparsable("MSH^1^10", REQUIRED_FIELD_MISSING, "MSH-10 (control id) is empty.")
    return (control_id, _value(msh.msh_3.hd_1), _value(msh.msh_4.hd_1),
            _value(msh.msh_11.pt_1), _value(msh.msh_12.vid_1))


def check_size(text: str, *, max_segments: int = MAX_SEGMENTS,
               max_repetitions: int = MAX_REPETITIONS) -> None:
    """Unparsable (AR) when ``text`` has more segments or more repetitions in one field than
    allowed: counted on the raw text before any parser sees it, so a flood costs
    milliseconds, not the minutes and gigabytes a parse of it would."""
    segments = text.count("\r") + 1
    if segments > max_segments:
        raise Unparsable("MSH", SEGMENT_SEQUENCE_ERROR,
                         f"The message has more than {max_segments} segments.")
    separator = text[3:4] or "|"
    repetition = text[5:6] if len(text) > 5 else "~"
    if repetition and text.count(repetition) > max_repetitions:
        for number, segment in enumerate(text.split("\r"), start=1):
            fields = segment.split(separator)
            for position, value in enumerate(fields[1:], start=1):
                if (number, position) != (1, 1) and value.count(repetition) >= max_repetitions:
                    raise Unparsable(f"{fields[0][:3]}^1^{position}", SEGMENT_SEQUENCE_ERROR,
                                     f"A field repeats more than {max_repetitions} times.")


def read(text: str, *, max_segments: int = MAX_SEGMENTS,
         max_repetitions: int = MAX_REPETITIONS) -> ResultMessage:
    """The ORU^R01 in ``text`` (one patient, one order, its OBX); Unparsable or Refusal."""
    text = normalise(text)
    check_size(text, max_segments=max_segments, max_repetitions=max_repetitions)
    fields = header_fields(text)
    if len(fields) < 13:
        raise Unparsable("MSH", SEGMENT_SEQUENCE_ERROR, "The message has no MSH segment "
                         "with fields up to MSH-12 (version).")
    if header_value(fields, 12) not in VERSIONS:
        raise Unparsable("MSH^1^12", UNSUPPORTED_VERSION,
                         f"HL7 version {', '.join(VERSIONS)} is accepted here.")
    if header_value(fields, 11) not in PROCESSING_IDS:
        raise Unparsable("MSH^1^11", UNSUPPORTED_PROCESSING_ID,
                         "Only production messages (MSH-11 P) are recorded here; training and "
                         "debugging messages are refused and never recorded.")
    msg = _parse(text)
    if msg.name != "ORU_R01":
        raise Unparsable("MSH^1^9", UNSUPPORTED_MESSAGE_TYPE, "Only ORU^R01 is accepted here.")
    header = _header(msg)
    results = msg.oru_r01_patient_result
    patient = _first(results[0].oru_r01_patient) if len(results) else None
    if len(results) != 1 or patient is None or not len(patient.pid):
        raise Unparsable("PID", SEGMENT_SEQUENCE_ERROR,
                         "One patient (PID) with its results is expected per message.")
    orders = results[0].oru_r01_order_observation
    if len(orders) != 1:
        raise Refusal("OBR", SEGMENT_SEQUENCE_ERROR,
                      f"One order (OBR) per message is accepted; this one has {len(orders)}.")
    mrn = _mrn(patient.pid)
    if not mrn:
        raise Refusal("PID^1^3", REQUIRED_FIELD_MISSING, "PID-3 holds no MRN.")
    order_id = _value(orders[0].obr.obr_2.ei_1)
    if not order_id:
        raise Refusal("OBR^1^2", REQUIRED_FIELD_MISSING,
                      "OBR-2 (placer order number) is empty: it must be the order's id.")
    observations = tuple(
        Observation(position, _value(ob.obx.obx_3.ce_1), _value(ob.obx.obx_2),
                    _value(ob.obx.obx_5), _value(ob.obx.obx_6.ce_1), _value(ob.obx.obx_11))
        for position, ob in enumerate(orders[0].oru_r01_observation, start=1))
    if not observations:
        raise Refusal("OBX", REQUIRED_FIELD_MISSING, "The order has no results (OBX).")
    pid = patient.pid[0]
    return ResultMessage(*header, mrn=mrn, order_id=order_id, observations=observations,
                         family_name=(pid.pid_5.xpn_1.to_er7().split("&")[0].strip()
                                      if len(pid.pid_5) else ""),
                         given_name=_value(pid.pid_5.xpn_2) if len(pid.pid_5) else "",
                         birth_date=_value(pid.pid_7)[:8])
