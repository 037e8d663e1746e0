"""The original-mode ACK an ORU^R01 is answered with (v2.5.1 ``ACK`` structure: MSH, MSA,
ERR). Pure: the caller gives the time and our application's identity."""

from __future__ import annotations

from dataclasses import dataclass

from hl7v2.inbound.oru import ERROR_NAMES, Problem

ACCEPT, ERROR, REJECT = "AA", "AE", "AR"
UNKNOWN_CONTROL_ID = "UNKNOWN"  # MSA-2 of an AR to a message whose MSH-10 cannot be read


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


def ack(code: str, control_id: str, *, ours: Identity, timestamp: str, ack_id: str,
        processing_id: str = "P", version: str = "2.5.1",
        problem: Problem | None = None) -> str:
    """The ACK text (segments joined by ``\\r``): MSA-1 ``code``, MSA-2 ``control_id``, and
    with a ``problem`` one ERR (ERR-2 its location, ERR-3 its 0357 code, ERR-4 ``E``,
    ERR-8 its text)."""
    msh = "|".join(["MSH", "^~\\&", escape(ours.application), escape(ours.facility),
                    escape(ours.receiving_application), escape(ours.receiving_facility),
                    timestamp, "", "ACK^R01^ACK", escape(ack_id),
                    escape(processing_id or "P"), escape(version or "2.5.1")])
    segments = [msh, f"MSA|{code}|{escape(control_id or UNKNOWN_CONTROL_ID)}"]
    if problem is not None:
        name = ERROR_NAMES.get(problem.code, "")
        segments.append(f"ERR||{problem.location}|{problem.code}^{escape(name)}^HL70357|E"
                        f"||||{escape(problem.text)}")
    return "\r".join(segments)
