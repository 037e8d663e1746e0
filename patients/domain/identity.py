"""Positive patient identification at the bedside: a wristband's barcode scanned before a
dose is recorded must be the patient's own MRN.

A keyboard-wedge scanner types the barcode's text and Enter into whatever field has focus,
so what arrives is the MRN, perhaps with spaces, a stray control character or lower case
(a scanner set to another keyboard layout). :func:`scanned_text` evens those out;
:func:`confirm` compares with the patient.
"""

from __future__ import annotations

from patients.domain.errors import DomainError

SCAN = "scan"  # how identity was confirmed: the value kept on an administration
SCAN_MAX = 64  # longer than any MRN: what a scanner types is never longer

IDENTITY_LABELS = {SCAN: "Identity confirmed by scan"}


class WrongPatient(DomainError):
    """The barcode scanned is not this patient's wristband: nothing is recorded (409,
    ``/api/v1/problems/wrong-patient``, ``conflicts``: one ``{type, detail}``)."""

    http_status = 409
    title = "Wrong patient"
    field = "scanned_id"
    problem_type = "wrong-patient"

    def __init__(self, scanned: str, mrn: str) -> None:
        detail = (f"The wristband scanned ({scanned or 'nothing readable'}) is not this "
                  f"patient's (MRN {mrn}).")
        super().__init__(f"{detail} Nothing was recorded: check the patient and scan their "
                         "own wristband.",
                         extra={"conflicts": [{"type": "wrong-patient", "detail": detail}]})
        self.scanned = scanned


def scanned_text(value: str) -> str:
    """What a scanner typed, as an MRN is kept: control characters and spaces dropped,
    upper case, at most :data:`SCAN_MAX` characters."""
    kept = "".join(ch for ch in (value or "") if ch.isprintable() and not ch.isspace())
    return kept.upper()[:SCAN_MAX]


def confirm(scanned: str, mrn: str) -> str | None:
    """:data:`SCAN` when ``scanned`` is the patient's ``mrn``; None when nothing was
    scanned; :class:`WrongPatient` otherwise."""
    if not (scanned or "").strip():
        return None
    text = scanned_text(scanned)
    if text != (mrn or "").upper():
        raise WrongPatient(text, mrn)
    return SCAN
