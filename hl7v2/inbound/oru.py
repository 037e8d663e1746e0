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

from patients.domain.observations import LOINC, VITAL_SIGNS_PANEL

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


VITAL_SIGN_CODES = frozenset(LOINC.values())


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


class SystemProblem(Problem):
    """Not the message's fault (the listener busy, the record changing under it, an error
    nobody foresaw): answered AR (HL7 v2.5 §2.9: rejected for reasons unrelated to its
    content), ERR 206 or 207; the engine resends it later."""


@dataclass(frozen=True)
class Observation:
    """One OBX: ``position`` is its occurrence among the message's OBX (ERR-2's sequence)."""

    position: int
    code: str  # OBX-3.1, the analyte code
    value_type: str  # OBX-2
    value: str  # OBX-5 (an SN as comparator and number: "<20")
    unit: str  # OBX-6.1, as the lab wrote it
    status: str  # OBX-11
    ref_range: str = ""  # OBX-7, the laboratory's reference range
    abnormal_flags: tuple[str, ...] = ()  # OBX-8, the laboratory's flags
    observed_at: str = ""  # OBX-14, HL7 DTM as sent
    comments: tuple[str, ...] = ()  # the NTE after it
    equipment: str = ""  # OBX-18.1, the equipment instance (a bedside monitor's id)

    def location(self, field: int) -> str:
        return f"OBX^{self.position}^{field}"


@dataclass(frozen=True)
class OrderResult:
    """One ORDER_OBSERVATION group: ``position`` is its OBR's place among the message's."""

    position: int
    order_id: str  # OBR-2.1, the placer order number: our order id
    observed_at: str  # OBR-7, HL7 DTM as sent
    comments: tuple[str, ...]  # the NTE after the OBR
    observations: tuple[Observation, ...]
    service: str = ""  # OBR-4.1, the universal service id (a LOINC panel for vital signs)

    def location(self, field: int) -> str:
        return f"OBR^{self.position}^{field}"

    @property
    def vital_signs(self) -> bool:
        """A bedside monitor's set, not a lab order's results: OBR-4 is the vital-signs
        panel, or OBR-2 names no order and an OBX is a vital sign's LOINC code."""
        return self.service == VITAL_SIGNS_PANEL or (
            not self.order_id and any(ob.code in VITAL_SIGN_CODES for ob in self.observations))


@dataclass(frozen=True)
class ResultMessage:
    """What recording an ORU^R01's results needs, and what its ACK echoes."""

    control_id: str  # MSH-10
    sending_application: str  # MSH-3.1
    sending_facility: str  # MSH-4.1
    processing_id: str  # MSH-11.1
    version: str  # MSH-12.1
    mrn: str  # PID-3.1 of the repetition typed MR (else the first)
    orders: tuple[OrderResult, ...]
    family_name: str = ""  # PID-5.1.1 (checked against the record when given)
    given_name: str = ""  # PID-5.2
    birth_date: str = ""  # PID-7, YYYYMMDD (checked against the record when given)

    @property
    def order_id(self) -> str:
        """The first order's id (the receipt names it)."""
        return self.orders[0].order_id

    @property
    def observations(self) -> tuple[Observation, ...]:
        """Every OBX of the message, in order."""
        return tuple(ob for order in self.orders for ob in order.observations)


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


def _notes(group: Any) -> tuple[str, ...]:
    """The NTE-3 comments of a group (an OBR's or an OBX's), in order."""
    try:
        notes = group.nte
    except (HL7apyException, AttributeError, KeyError):
        return ()
    out = []
    for nte in notes:
        text = " ".join(_value(c) for c in nte.nte_3 if _value(c))
        if text:
            out.append(unescape(text)[:2000])
    return tuple(out)


def unescape(text: str) -> str:
    """An HL7 text value as written (escape sequences of the default delimiters undone)."""
    for sequence, char in (("\\F\\", "|"), ("\\S\\", "^"), ("\\T\\", "&"),
                           ("\\R\\", "~"), ("\\.br\\", " "), ("\\E\\", "\\")):
        text = text.replace(sequence, char)
    return text


def _observation(position: int, ob: Any) -> Observation:
    obx = ob.obx
    value_type = _value(obx.obx_2)
    value = _value(obx.obx_5)
    if value_type == "SN":  # structured numeric: comparator^number
        parts = obx.obx_5.to_er7().split("^")
        value = (parts[0] + (parts[1] if len(parts) > 1 else "")).strip()
    flags = tuple(_value(f) for f in obx.obx_8 if _value(f))
    return Observation(position, _value(obx.obx_3.ce_1), value_type, value,
                       _value(obx.obx_6.ce_1), _value(obx.obx_11),
                       ref_range=unescape(obx.obx_7.to_er7())[:60] if len(obx.obx_7) else "",
                       abnormal_flags=flags, observed_at=_value(obx.obx_14),
                       comments=_notes(ob),
                       equipment=_value(obx.obx_18.ei_1) if len(obx.obx_18) else "")


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
    groups = results[0].oru_r01_order_observation
    if not len(groups):
        raise Refusal("OBR", REQUIRED_FIELD_MISSING, "The message has no order (OBR).")
    mrn = _mrn(patient.pid)
    if not mrn:
        raise Refusal("PID^1^3", REQUIRED_FIELD_MISSING, "PID-3 holds no MRN.")
    orders, seen = [], 0
    for number, group in enumerate(groups, start=1):
        order_id = _value(group.obr.obr_2.ei_1)
        observations = tuple(
            _observation(seen + position, ob)
            for position, ob in enumerate(group.oru_r01_observation, start=1))
        seen += len(observations)
        if not observations:
            raise Refusal(f"OBR^{number}^2", REQUIRED_FIELD_MISSING,
                          "The order has no results (OBX).")
        order = OrderResult(number, order_id, _value(group.obr.obr_7), _notes(group),
                            observations, service=_value(group.obr.obr_4.ce_1))
        if not order_id and not order.vital_signs:
            raise Refusal(f"OBR^{number}^2", REQUIRED_FIELD_MISSING,
                          "OBR-2 (placer order number) is empty: it must be the order's id "
                          "(or OBR-4 the vital-signs panel, 85353-1, for a monitor's set).")
        orders.append(order)
    lab = [o.order_id for o in orders if not o.vital_signs]
    if len(set(lab)) != len(lab):
        raise Refusal("OBR", DUPLICATE_KEY, "An order (OBR-2) is given twice in the message.")
    pid = patient.pid[0]
    return ResultMessage(*header, mrn=mrn, orders=tuple(orders),
                         family_name=(pid.pid_5.xpn_1.to_er7().split("&")[0].strip()
                                      if len(pid.pid_5) else ""),
                         given_name=_value(pid.pid_5.xpn_2) if len(pid.pid_5) else "",
                         birth_date=_value(pid.pid_7)[:8])
