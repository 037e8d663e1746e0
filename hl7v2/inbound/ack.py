"""The acknowledgement an ORU^R01 is answered with, built with hl7apy on the ``ACK`` structure
of the version the sender wrote in MSH-12 (so even an AR to a v2.3 message is a valid v2.3
ACK the engine can parse), v2.5.1 when that version is not one HL7 defines.

Original mode (MSH-15 and MSH-16 empty): MSA-1 AA, AE or AR. Enhanced mode (the sender asks
for an accept acknowledgement in MSH-15): CA, CE or CR, answered as MSH-15 asks (AL always,
ER only on an error, SU only on success, NE never). Pure: the caller gives the time and our
application's identity.
"""

from __future__ import annotations

from dataclasses import dataclass

from hl7apy import SUPPORTED_LIBRARIES
from hl7apy.consts import VALIDATION_LEVEL
from hl7apy.core import Message

from hl7v2.inbound.oru import ERROR_NAMES, Problem

ACCEPT, ERROR, REJECT = "AA", "AE", "AR"
ENHANCED = {ACCEPT: "CA", ERROR: "CE", REJECT: "CR"}  # the accept acknowledgement's codes
UNKNOWN_CONTROL_ID = "UNKNOWN"  # MSA-2 of an AR to a message whose MSH-10 cannot be read
DEFAULT_VERSION = "2.5.1"
ALWAYS, NEVER, ERROR_ONLY, SUCCESS_ONLY = "AL", "NE", "ER", "SU"  # HL7 table 0155


@dataclass(frozen=True)
class Identity:
    """MSH-3/4 of our answers, and MSH-5/6 (the sender's application and facility)."""

    application: str
    facility: str
    receiving_application: str = ""
    receiving_facility: str = ""


def escape(text: str) -> str:
    """``text`` safe inside a field under the default encoding characters ``|^~\\&``."""
    for char, sequence in (("\\", "\\E\\"), ("|", "\\F\\"), ("^", "\\S\\"), ("~", "\\R\\"),
                           ("&", "\\T\\"), ("\r", " "), ("\n", " ")):
        text = text.replace(char, sequence)
    return text


def answer_code(code: str, accept_ack_type: str) -> str | None:
    """The MSA-1 to answer with: ``code`` in original mode (MSH-15 empty); in enhanced mode
    its accept acknowledgement code (CA, CE, CR), or None when MSH-15 says not to answer."""
    mode = (accept_ack_type or "").strip().upper()
    if not mode:
        return code
    if mode == NEVER or (mode == ERROR_ONLY and code == ACCEPT) or (
            mode == SUCCESS_ONLY and code != ACCEPT):
        return None
    return ENHANCED.get(code, code)


def _version(version: str) -> str:
    return version if version in SUPPORTED_LIBRARIES else DEFAULT_VERSION


def ack(code: str, control_id: str, *, ours: Identity, timestamp: str, ack_id: str,
        processing_id: str = "P", version: str = DEFAULT_VERSION,
        problem: Problem | None = None) -> str:
    """The ACK text (segments joined by ``\\r``): MSA-1 ``code``, MSA-2 ``control_id``, and
    with a ``problem`` one ERR: from v2.5 ERR-2 its location, ERR-3 its 0357 code, ERR-4
    ``E``, ERR-8 its text; before v2.5 ERR-1 (location and code) and MSA-3 the text."""
    version = _version(version)
    modern = version >= "2.5"
    msg = Message("ACK", version=version, validation_level=VALIDATION_LEVEL.STRICT)
    msh = msg.msh
    msh.msh_3 = escape(ours.application)
    msh.msh_4 = escape(ours.facility)
    if ours.receiving_application:
        msh.msh_5 = escape(ours.receiving_application)
    if ours.receiving_facility:
        msh.msh_6 = escape(ours.receiving_facility)
    msh.msh_7 = timestamp
    msh.msh_9 = "ACK^R01^ACK" if version >= "2.4" else "ACK"
    msh.msh_10 = escape(ack_id)[:20]
    msh.msh_11 = escape(processing_id or "P")[:3]
    msh.msh_12 = version
    msg.msa.msa_1 = code
    msg.msa.msa_2 = escape(control_id or UNKNOWN_CONTROL_ID)[:20 if not modern else 199]
    if problem is not None:
        name = ERROR_NAMES.get(problem.code, "")
        err = msg.add_segment("ERR")
        if modern:
            err.err_2 = problem.location
            err.err_3 = f"{problem.code}^{escape(name)}^HL70357"
            err.err_4 = "E"
            err.err_8 = escape(problem.text)[:250]
        else:
            msg.msa.msa_3 = escape(problem.text)[:80]
            if version >= "2.2":
                parts = (problem.location.split("^") + ["", "", ""])[:3]
                err.err_1 = "^".join([*parts, f"{problem.code}&{escape(name)}&HL70357"])
    return msg.to_er7()
