"""Forms for the clinical pages; choices come from reference data."""

from __future__ import annotations

from typing import Any

from django import forms

from patients.domain.checks import CHECK_LABELS, CHECK_TYPES
from patients.domain.orders import URGENCY_LABELS
from patients.domain.records import SEVERITIES, SEXES


class DemographicsForm(forms.Form):
    given_name = forms.CharField(max_length=100)
    family_name = forms.CharField(max_length=100)
    birth_date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}),
                                 error_messages={"invalid": "Enter a date as YYYY-MM-DD."})
    sex = forms.ChoiceField(choices=[(s, s.capitalize()) for s in SEXES])
    etag = forms.CharField(widget=forms.HiddenInput)


class AllergyForm(forms.Form):
    substance = forms.CharField(max_length=100)
    reaction = forms.CharField(max_length=200, required=False)
    severity = forms.ChoiceField(choices=[(s, s.capitalize()) for s in SEVERITIES])
    etag = forms.CharField(widget=forms.HiddenInput)


class TransferForm(forms.Form):
    ward_id = forms.ChoiceField(label="Ward")
    bed = forms.CharField(max_length=20, required=False)
    etag = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, wards: list, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ward_id"].choices = wards


class OrderForm(forms.Form):
    URGENCY = [(u.value, label) for u, label in URGENCY_LABELS.items()]
    urgency = forms.ChoiceField(choices=URGENCY)
    note = forms.CharField(max_length=500, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))
    CHOSEN: tuple[tuple[str, str], ...] = ()  # (field, reference type), each blank at first

    def __init__(self, *args: Any, choices: dict[str, list], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, key in self.CHOSEN:
            self.fields[name].choices = [CHOOSE, *choices[key]]
            self.fields[name].widget.attrs["required"] = True


class PrescriptionForm(OrderForm):
    medication_code = forms.ChoiceField(label="Medication")
    dose = forms.DecimalField(min_value=0.001, max_digits=10, decimal_places=3,
                              error_messages={"min_value": "The dose must be more than 0."})
    unit = forms.ChoiceField()
    route = forms.ChoiceField()
    frequency = forms.ChoiceField()
    as_needed = forms.BooleanField(required=False, label="As needed (PRN)")
    CHOSEN = (("medication_code", "Medication"), ("unit", "Unit"), ("route", "Route"),
              ("frequency", "Frequency"))
    field_order = ("medication_code", "dose", "unit", "route", "frequency", "as_needed",
                   "urgency", "note")


class ImagingForm(OrderForm):
    modality = forms.ChoiceField()
    body_part = forms.ChoiceField(label="Body part")
    CHOSEN = (("modality", "Modality"), ("body_part", "BodyPart"))
    field_order = ("modality", "body_part", "urgency", "note")


class LabForm(OrderForm):
    test_code = forms.ChoiceField(label="Test")
    CHOSEN = (("test_code", "LabTest"),)
    field_order = ("test_code", "urgency", "note")


class OverrideForm(forms.Form):
    """One required reason per order check that failed, shown with what the check found.

    ``shown``: the conflicts on the page ({type, detail}); ``signature`` ties the reasons to
    the order they were given for, so a reason never carries over to a changed order.
    """

    signature = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, shown: list[dict[str, str]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shown = list(shown)
        for c in self.shown:
            self.fields[self.field_name(c["type"])] = forms.CharField(
                label=f"Reason to override ({CHECK_LABELS.get(c['type'], c['type'])})",
                max_length=500, required=False,
                widget=forms.Textarea(attrs={"rows": 2, "required": True,
                                             "class": "override-reason",
                                             "data-check": c["type"]}))

    @staticmethod
    def field_name(check: str) -> str:
        return "override_" + check.replace("-", "_")

    def reasons(self) -> dict[str, str]:
        """The reasons given on this submit, by check type (blank ones left out)."""
        found = {}
        for check in CHECK_TYPES:
            reason = " ".join(str(self.data.get(self.field_name(check), "")).split())
            if reason:
                found[check] = reason
        return found

    def warnings(self) -> list[dict[str, Any]]:
        """Each conflict with its reason field, for the template."""
        return [{**c, "label": CHECK_LABELS.get(c["type"], c["type"]),
                 "field": self[self.field_name(c["type"])]} for c in self.shown]


class AdministrationForm(forms.Form):
    dose = forms.DecimalField(min_value=0.001, max_digits=10, decimal_places=3,
                              error_messages={"min_value": "The dose given must be more than 0."})
    unit = forms.CharField(max_length=20, help_text="As prescribed, e.g. mg.")
    note = forms.CharField(max_length=300, required=False)
    etag = forms.CharField(widget=forms.HiddenInput)


ORDER_FORMS = {"medication": (PrescriptionForm, "Prescribe medication"),
               "imaging": (ImagingForm, "Request imaging"),
               "lab": (LabForm, "Request lab test")}
