"""The scan field: where a keyboard-wedge barcode scanner types a wristband's MRN.

A scanner is a keyboard to the browser: it types the barcode's text and Enter into the field
that has focus. On Find patients Enter submits the scan and opens the chart; on a dose form
``patients/scan.js`` keeps Enter from recording the dose unseen (it says whether the band is
this patient's and moves to Record), and without scripts Enter records it, the use case
checking the band either way (``patients.domain.identity``).
"""

from __future__ import annotations

from typing import Any

from django import forms

from hisadmin.core.inputs import CheckedForm
from patients.domain import identity

SCAN_HELP = ("Click here and scan the patient's wristband: the scanner types the MRN and "
             "Enter.")


class ScanField(forms.CharField):
    """What a scanner typed, as :func:`identity.scanned_text` evens it out (control
    characters a scanner adds, spaces, case)."""

    def __init__(self, **kwargs: Any) -> None:
        attrs = {"autocomplete": "off", "autocapitalize": "characters", "spellcheck": "false",
                 "data-scan": kwargs.pop("purpose", "find"), "class": "scan-field"}
        if kwargs.pop("autofocus", False):
            attrs["autofocus"] = ""
        kwargs.setdefault("max_length", identity.SCAN_MAX)
        kwargs.setdefault("help_text", SCAN_HELP)
        super().__init__(widget=forms.TextInput(attrs=attrs), **kwargs)

    def to_python(self, value: Any) -> str:
        return identity.scanned_text(str(value or ""))


class ScanFindForm(CheckedForm):
    """Find patients' scan: the wristband's MRN opens the chart."""

    scan = ScanField(label="Scan a wristband", autofocus=True)


def dose_scan_field() -> ScanField:
    """The optional scan on a dose form: a band scanned must be the patient's."""
    return ScanField(required=False, label="Scan wristband", purpose="dose",
                     help_text=SCAN_HELP + " Optional; a band scanned must be this "
                     "patient's, and the dose is kept as identity confirmed by scan.")


def expect(form: forms.Form, mrn: str) -> None:
    """Tell the page's script whose band this form expects (it says at once whether a scan
    matches; the use case decides)."""
    field = form.fields.get("scanned_id")
    if field is not None:
        field.widget.attrs["data-scan-expect"] = mrn


def clear(form: forms.Form) -> None:
    """Empty the scan field after a wrong band, so the next scan starts clean (the error says
    what was scanned)."""
    if form.is_bound:
        data = form.data.copy()
        data["scanned_id"] = ""
        form.data = data
