"""Forms for the clinical pages; choices come from reference data."""

from __future__ import annotations

from typing import Any

from django import forms

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


class PrescriptionForm(OrderForm):
    medication_code = forms.ChoiceField(label="Medication")
    dose = forms.DecimalField(min_value=0.001, max_digits=10, decimal_places=3,
                              error_messages={"min_value": "The dose must be more than 0."})
    unit = forms.ChoiceField()
    route = forms.ChoiceField()
    frequency = forms.ChoiceField()
    as_needed = forms.BooleanField(required=False, label="As needed (PRN)")

    def __init__(self, *args: Any, choices: dict[str, list], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, key in (("medication_code", "Medication"), ("unit", "Unit"),
                          ("route", "Route"), ("frequency", "Frequency")):
            self.fields[name].choices = choices[key]


class ImagingForm(OrderForm):
    modality = forms.ChoiceField()
    body_part = forms.ChoiceField(label="Body part")

    def __init__(self, *args: Any, choices: dict[str, list], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["modality"].choices = choices["Modality"]
        self.fields["body_part"].choices = choices["BodyPart"]


class LabForm(OrderForm):
    test_code = forms.ChoiceField(label="Test")

    def __init__(self, *args: Any, choices: dict[str, list], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["test_code"].choices = choices["LabTest"]


class AdministrationForm(forms.Form):
    dose = forms.DecimalField(min_value=0.001, max_digits=10, decimal_places=3,
                              error_messages={"min_value": "The dose given must be more than 0."})
    unit = forms.CharField(max_length=20, help_text="As prescribed, e.g. mg.")
    note = forms.CharField(max_length=300, required=False)
    etag = forms.CharField(widget=forms.HiddenInput)


ORDER_FORMS = {"medication": (PrescriptionForm, "Prescribe medication"),
               "imaging": (ImagingForm, "Request imaging"),
               "lab": (LabForm, "Request lab test")}
