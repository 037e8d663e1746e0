"""Forms for the clinical pages; choices come from reference data."""

from __future__ import annotations

from typing import Any

from django import forms

from hisadmin.core.inputs import CheckedForm, past_date_validator, text_error
from hisadmin.core.numbers import DecimalText
from patients.domain.checks import (
    CHECK_LABELS,
    CHECK_TYPES,
    REASON_MIN_CHARACTERS,
    REASON_MIN_WORDS,
)
from patients.domain.dose_times import FIRST_DOSE_LABELS, FIRST_DOSE_NEXT
from patients.domain.orders import URGENCY_LABELS
from patients.domain.records import (
    CRITICALITIES,
    CRITICALITY_LABELS,
    REMOVAL_LABELS,
    SEVERITIES,
    SEVERITY_LABELS,
    SEX_LABELS,
    SEXES,
)
from patients.pages.forms import BIRTH_DATE_HELP, BIRTH_DATE_INVALID, NameField


class DemographicsForm(CheckedForm):
    given_name = NameField()
    family_name = NameField()
    birth_date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}),
                                 help_text=BIRTH_DATE_HELP, validators=[past_date_validator],
                                 error_messages={"invalid": BIRTH_DATE_INVALID})
    sex = forms.ChoiceField(choices=[(s, SEX_LABELS[s]) for s in SEXES])
    etag = forms.CharField(widget=forms.HiddenInput)


ALLERGEN_KINDS = {"drug_class": "Drug classes", "ingredient": "Drugs (ingredients)",
                  "food": "Food", "environment": "Environment", "other": "Other"}


class AllergyForm(CheckedForm):
    """An allergen from the list (checkable against orders) or, when none fits, free text."""

    allergen_code = forms.ChoiceField(label="Allergen", required=False)
    substance = forms.CharField(
        max_length=100, required=False, label="Or, if none fits",
        help_text="Free text: recorded, but not checked against orders.")
    reaction = forms.CharField(max_length=200, required=False)
    severity = forms.ChoiceField(choices=[("", "—")] + [(s, SEVERITY_LABELS[s]) for s in SEVERITIES])
    criticality = forms.ChoiceField(choices=[(c, CRITICALITY_LABELS[c]) for c in CRITICALITIES],
                                    initial="unable-to-assess", required=False)
    etag = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, allergens: dict[str, dict[str, Any]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        groups: dict[str, list[tuple[str, str]]] = {}
        for code, entry in (allergens or {}).items():
            if entry.get("active", True):
                groups.setdefault(entry.get("kind", "other"), []).append((code, entry["name"]))
        self.fields["allergen_code"].choices = [("", "— choose an allergen —")] + [
            (ALLERGEN_KINDS.get(kind, kind), sorted(groups[kind], key=lambda c: c[1]))
            for kind in sorted(groups, key=lambda k: list(ALLERGEN_KINDS).index(k)
                               if k in ALLERGEN_KINDS else len(ALLERGEN_KINDS))]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        code, text = data.get("allergen_code"), (data.get("substance") or "").strip()
        if code and text:
            self.add_error("substance", "Choose an allergen or describe it, not both.")
        elif not code and not text and "substance" not in self.errors:
            self.add_error("substance", "Choose an allergen from the list, or describe the "
                                        "substance when none fits.")
        data["criticality"] = data.get("criticality") or "unable-to-assess"
        return data


class RemoveAllergyForm(CheckedForm):
    reason = forms.ChoiceField(choices=list(REMOVAL_LABELS.items()), widget=forms.RadioSelect,
                               label="Why remove it?")
    detail = forms.CharField(max_length=300, required=False, label="Say why",
                             widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                             help_text="Required when the reason is other.")
    etag = forms.CharField(widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("reason") == "other" and not (data.get("detail") or "").strip():
            self.add_error("detail", "Say why the allergy is removed.")
        return data


class ConfirmForm(CheckedForm):
    etag = forms.CharField(widget=forms.HiddenInput)


class CancelOrderForm(CheckedForm):
    """The cancel confirmation. ``seen_*``: the order as the page showed it, to put beside
    how it is on record if someone changed it meanwhile; ``confirm``: the page's own button."""

    reason = forms.CharField(max_length=300, label="Reason for cancelling",
                             widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                             error_messages={"required": "Give a reason for cancelling."})
    etag = forms.CharField(widget=forms.HiddenInput)
    seen_status = forms.CharField(required=False, widget=forms.HiddenInput)
    seen_assignee = forms.CharField(required=False, widget=forms.HiddenInput)
    confirm = forms.CharField(required=False, widget=forms.HiddenInput)


class TransferForm(CheckedForm):
    """Like the admit form: department, its wards, the ward's free beds
    (:func:`patients.pages.beds.offer`). The department only narrows the wards offered (the
    ward's own department is the stay's new one); ward and bed are judged by the transfer."""

    department_id = forms.ChoiceField(label="Department", required=False)
    ward_id = forms.CharField(label="Ward", widget=forms.Select,
                              help_text="The department's wards.")
    bed = forms.CharField(max_length=20, required=False, widget=forms.Select)
    etag = forms.CharField(widget=forms.HiddenInput)


CHOOSE = ("", "— choose —")  # nothing clinical is chosen for the prescriber


class OrderForm(CheckedForm):
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
    dose = DecimalText(min_value=0.001, max_digits=10, decimal_places=3,
                       help_text="A decimal point or comma: 0.5 or 0,5.",
                       error_messages={"min_value": "The dose must be more than 0."})
    unit = forms.ChoiceField()
    route = forms.ChoiceField()
    frequency = forms.ChoiceField()
    first_dose = forms.ChoiceField(
        label="First dose", choices=list(FIRST_DOSE_LABELS.items()), initial=FIRST_DOSE_NEXT,
        widget=forms.RadioSelect, help_text="Doses are given at the frequency's standard "
        "times (hospital time); Once and STAT: one dose now.")
    as_needed = forms.BooleanField(required=False, label="As needed (PRN)")
    CHOSEN = (("medication_code", "Medication"), ("unit", "Unit"), ("route", "Route"),
              ("frequency", "Frequency"))
    field_order = ("medication_code", "dose", "unit", "route", "frequency", "first_dose",
                   "as_needed", "urgency", "note")


class ImagingForm(OrderForm):
    modality = forms.ChoiceField()
    body_part = forms.ChoiceField(label="Body part")
    CHOSEN = (("modality", "Modality"), ("body_part", "BodyPart"))
    field_order = ("modality", "body_part", "urgency", "note")


class LabForm(OrderForm):
    test_code = forms.ChoiceField(label="Test")
    CHOSEN = (("test_code", "LabTest"),)
    field_order = ("test_code", "urgency", "note")


class OverrideForm(CheckedForm):
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
                help_text=f"At least {REASON_MIN_CHARACTERS} characters and "
                          f"{REASON_MIN_WORDS} words.",
                widget=forms.Textarea(attrs={"rows": 2, "required": True,
                                             "class": "override-reason",
                                             "data-check": c["type"]}))

    @staticmethod
    def field_name(check: str) -> str:
        return "override_" + check.replace("-", "_")

    def reasons(self) -> dict[str, str]:
        """The reasons given on this submit, by check type (blank ones left out; one too
        short is kept, for the use case to refuse and say why)."""
        found = {}
        for check in CHECK_TYPES:
            reason = " ".join(str(self.data.get(self.field_name(check), "")).split())
            if reason and text_error(reason) is None:  # a refused reason is no reason
                found[check] = reason
        return found

    def warnings(self) -> list[dict[str, Any]]:
        """Each conflict with its reason field, for the template; a detail that starts by
        naming its check ("Allergies not yet asked: …") does not say it twice."""
        out = []
        for c in self.shown:
            label = CHECK_LABELS.get(c["type"], c["type"])
            detail = str(c.get("detail") or "")
            if detail.casefold().startswith(f"{label}:".casefold()):
                rest = detail[len(label) + 1:].strip()
                detail = rest[:1].upper() + rest[1:]
            out.append({**c, "label": label, "detail": detail,
                        "field": self[self.field_name(c["type"])]})
        return out


ORDER_FORMS = {"medication": (PrescriptionForm, "Prescribe medication"),
               "imaging": (ImagingForm, "Request imaging"),
               "lab": (LabForm, "Request lab test")}
