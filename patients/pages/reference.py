"""Reference data pages for admins: list a type, add or edit an entry, retire it."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore, validate_id
from cosmos_backend.uow import StaleWrite
from hisadmin.core.inputs import CheckedForm
from hisadmin.core.numbers import DecimalText
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain import reference as rules
from patients.domain.checks import hard_limits
from patients.domain.errors import DomainError
from patients.persistence import reference


class EntryForm(CheckedForm):
    code = forms.CharField(max_length=40)
    name = forms.CharField(max_length=120)
    active = forms.BooleanField(required=False, initial=True,
                                help_text="Retired entries stay on old records but cannot be chosen.")
    etag = forms.CharField(widget=forms.HiddenInput, required=False)

    def clean_code(self) -> str:
        code = self.cleaned_data["code"].strip()
        try:
            validate_id(code)
        except errors.InvalidId as exc:
            raise forms.ValidationError("Use letters, digits and dashes only.") from exc
        return code


class WardForm(EntryForm):
    department_id = forms.ChoiceField(label="Department")
    beds = forms.CharField(required=False, max_length=2000,
                           help_text="Bed labels separated by commas, e.g. A01, A02.")

    def __init__(self, *args: Any, store: DocumentStore, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.fields["department_id"].choices = reference.choices(store, "Department")

    def clean_beds(self) -> list[str]:
        labels = [b.strip() for b in self.cleaned_data["beds"].split(",") if b.strip()]
        for label in labels:
            if len(label) > 20 or not label.replace("-", "").isalnum():
                raise forms.ValidationError(
                    f"Bed {label!r}: use at most 20 letters, digits or dashes.")
        if len(set(labels)) != len(labels):
            raise forms.ValidationError("Each bed label may appear once.")
        return labels


class FrequencyForm(EntryForm):
    times = forms.CharField(required=False, max_length=200, label="Standard times",
                            help_text="Local clock times, e.g. 08:00, 14:00, 20:00.")
    hours = forms.IntegerField(min_value=0, max_value=168, required=False,
                               help_text="Hours between doses: with an anchor, doses every "
                               "so many hours from that clock time; 0 for once.")
    anchor = forms.CharField(required=False, max_length=5, label="Anchor time",
                             help_text="HH:MM the interval counts from (e.g. 02:00 for every "
                             "4 hours at 02, 06, 10 …).")
    min_interval_hours = DecimalText(required=False, min_value=0.25, max_digits=5,
                                            decimal_places=2, label="Minimum interval (h)")
    once = forms.BooleanField(required=False, label="Once only (one dose at the start)")
    prn = forms.BooleanField(required=False, label="As needed (PRN)")

    def clean_times(self) -> list[str] | None:
        times = [t.strip() for t in self.cleaned_data["times"].split(",") if t.strip()]
        return times or None


def _named(store: DocumentStore, type_name: str, kind: str | None = None
           ) -> list[tuple[str, str]]:
    """Choices labelled by name; only the entries of one kind when ``kind`` is given."""
    return [(e["code"], e["name"]) for e in sorted(reference.active(store, type_name),
                                                     key=lambda e: e["name"].casefold())
            if kind is None or e.get("kind") == kind]


def _json_number(value: Decimal | None) -> int | float | None:
    """A form's Decimal as the JSON number stored (an int when whole)."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


class MedicationForm(EntryForm):
    ingredients = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 8}),
        help_text="Active ingredients, as allergens: an allergy to one of them is a conflict.")
    classes = forms.MultipleChoiceField(
        label="Drug classes", required=False, widget=forms.SelectMultiple(attrs={"size": 8}),
        help_text="Classes the drug belongs to (penicillins, NSAIDs, …), checked against "
                  "allergies.")
    routes = forms.MultipleChoiceField(label="Allowed routes",
                                       widget=forms.CheckboxSelectMultiple)
    dose_unit = forms.ChoiceField(label="Dose unit",
                                  help_text="The unit doses and the limits below are given in.")
    max_single_dose = DecimalText(label="Max single dose", min_value=Decimal("0.0001"),
                                         max_digits=12, decimal_places=4)
    max_daily_dose = DecimalText(label="Max daily dose", min_value=Decimal("0.0001"),
                                        max_digits=12, decimal_places=4,
                                        help_text="In 24 hours, in the dose unit.")
    hard_max_single_dose = DecimalText(
        label="Hard limit, single dose", required=False, min_value=Decimal("0.0001"),
        max_digits=12, decimal_places=4,
        help_text="No override passes it, at prescribing or at the bedside; at least the max "
                  "single dose. Empty: twice the max single dose.")
    hard_max_daily_dose = DecimalText(
        label="Hard limit, daily dose", required=False, min_value=Decimal("0.0001"),
        max_digits=12, decimal_places=4,
        help_text="In 24 hours; no override passes it; at least the max daily dose. Empty: "
                  "twice the max daily dose.")
    prn_min_interval_hours = DecimalText(
        label="PRN minimum interval (hours)", required=False, min_value=Decimal("0.25"),
        max_digits=5, decimal_places=2,
        help_text="Least time between two as-needed doses.")
    source = forms.CharField(label="Source of the limits", max_length=500,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Where the dose limits come from, e.g. the product "
                                       "information.")

    def __init__(self, *args: Any, store: DocumentStore, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ingredients"].choices = _named(store, "Allergen", "ingredient")
        self.fields["classes"].choices = _named(store, "Allergen", "drug_class")
        self.fields["routes"].choices = _named(store, "Route")
        self.fields["dose_unit"].choices = [("", "—")] + reference.dose_unit_choices(store)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        single, daily = data.get("max_single_dose"), data.get("max_daily_dose")
        if single is not None and daily is not None and single > daily:
            self.add_error("max_daily_dose", "The daily maximum is below the single-dose "
                                             "maximum.")
        return data


class AllergenForm(EntryForm):
    kind = forms.ChoiceField(choices=[("", "—"), *rules.ALLERGEN_KIND_LABELS.items()])


class UnitForm(EntryForm):
    dimension = forms.CharField(
        max_length=40, help_text="What it measures; units convert only within one dimension "
                                 "(mass, volume, units, count, mass_concentration, …).")
    factor = DecimalText(min_value=Decimal("0.000000001"), max_digits=20,
                                decimal_places=9,
                                help_text="Size relative to the dimension's base unit "
                                          "(mass: 1 mg; a gram is 1000).")


class LabTestForm(EntryForm):
    analytes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "cols": 60}),
        help_text="One analyte a line: code | name | unit | low | high, e.g. "
                  "HGB | Haemoglobin | g_l | 130 | 175 (the unit's code, the adult "
                  "reference range).")

    def __init__(self, *args: Any, store: DocumentStore, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.units = reference.all_of(store, "Unit")
        known = ", ".join(f"{code} ({e['name']})" for code, e in sorted(self.units.items())
                          if e.get("active", True))
        self.fields["analytes"].help_text += f" Units: {known}."

    def clean_analytes(self) -> list[dict[str, Any]]:
        analytes: list[dict[str, Any]] = []
        for number, line in enumerate(self.cleaned_data["analytes"].splitlines(), start=1):
            if not line.strip():
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 5 or not all(parts[:3]):
                raise forms.ValidationError(
                    f"Line {number}: give code | name | unit | low | high.")
            code, name, unit, low, high = parts
            if unit not in self.units:
                raise forms.ValidationError(f"Line {number}: {unit!r} is not a unit code.")
            try:
                low_value, high_value = Decimal(low), Decimal(high)
            except InvalidOperation:
                raise forms.ValidationError(
                    f"Line {number}: the range's low and high must be numbers.") from None
            if not (low_value.is_finite() and high_value.is_finite()) or low_value > high_value:
                raise forms.ValidationError(f"Line {number}: give a range from low to high.")
            analytes.append({"code": code, "name": name, "unit": unit,
                             "low": _json_number(low_value), "high": _json_number(high_value)})
        if not analytes:
            raise forms.ValidationError("Give at least one analyte.")
        if len({a["code"] for a in analytes}) != len(analytes):
            raise forms.ValidationError("Each analyte code may appear once.")
        return analytes


TYPE_LABELS = {"Department": "Departments", "Ward": "Wards", "Allergen": "Allergens",
               "Unit": "Units", "Route": "Routes", "Frequency": "Frequencies",
               "Medication": "Medications", "Modality": "Imaging modalities",
               "BodyPart": "Body parts", "LabTest": "Lab tests"}

# Form field → document field, for the types that carry more than code and name.
EXTRA_FIELDS: dict[str, dict[str, str]] = {
    "Ward": {"department_id": "departmentId", "beds": "beds"},
    "Frequency": {"times": "times", "hours": "hours", "anchor": "anchor",
                  "min_interval_hours": "minIntervalHours", "once": "once", "prn": "prn"},
    "Medication": {"ingredients": "ingredients", "classes": "classes", "routes": "routes",
                   "dose_unit": "doseUnit", "max_single_dose": "maxSingleDose",
                   "max_daily_dose": "maxDailyDose", "hard_max_single_dose": "hardMaxSingleDose",
                   "hard_max_daily_dose": "hardMaxDailyDose",
                   "prn_min_interval_hours": "prnMinIntervalHours", "source": "source"},
    "Allergen": {"kind": "kind"},
    "Unit": {"dimension": "dimension", "factor": "factor"},
    "LabTest": {"analytes": "analytes"},
}
FORMS: dict[str, type[EntryForm]] = {"Ward": WardForm, "Frequency": FrequencyForm,
                                     "Medication": MedicationForm, "Allergen": AllergenForm,
                                     "Unit": UnitForm, "LabTest": LabTestForm}
NEEDS_STORE = (WardForm, MedicationForm, LabTestForm)


def _make_form(type_name: str, data: Any, initial: dict[str, Any],
               store: DocumentStore) -> EntryForm:
    form_class = FORMS.get(type_name, EntryForm)
    extra = EXTRA_FIELDS.get(type_name, {})
    initial = {**initial, **{f: initial.get(d) for f, d in extra.items() if d in initial}}
    for listed in ("beds", "times"):
        if isinstance(initial.get(listed), list):
            initial[listed] = ", ".join(initial[listed])
    if isinstance(initial.get("analytes"), list):
        initial["analytes"] = "\n".join(
            " | ".join(str(a.get(k, "")) for k in ("code", "name", "unit", "low", "high"))
            for a in initial["analytes"])
    if form_class in NEEDS_STORE:
        return form_class(data, initial=initial, store=store)  # type: ignore[call-arg]
    return form_class(data, initial=initial)


def _form_value(value: Any) -> Any:
    """A cleaned form value as stored: None for empty, JSON numbers for decimals."""
    if value is None or value == "":
        return None
    if isinstance(value, Decimal):
        return _json_number(value)
    return value


def _form_field(type_name: str, doc_field: str | None) -> str | None:
    """The form field a domain error's document field is shown on."""
    if not doc_field:
        return None
    top = doc_field.split(".", 1)[0]
    by_doc = {d: f for f, d in EXTRA_FIELDS.get(type_name, {}).items()}
    return by_doc.get(top, top)


def _details(type_name: str, entry: dict[str, Any], store: DocumentStore) -> str:
    def names(type_: str, codes: list[str]) -> str:
        known = reference.all_of(store, type_)
        return ", ".join(known.get(c, {}).get("name", c) for c in codes)

    if "beds" in entry:
        department = reference.all_of(store, "Department").get(entry.get("departmentId") or "")
        named = department["name"] if department else entry.get("departmentId")
        return f"{named}; {len(entry['beds'])} beds"
    if type_name == "Frequency":
        if entry.get("prn"):
            return "as needed"
        if entry.get("times"):
            return ", ".join(entry["times"])
        if entry.get("hours") and entry.get("anchor"):
            return f"every {entry['hours']} h from {entry['anchor']}"
        return f"every {entry['hours']} h" if entry.get("hours") else "once"
    if type_name == "Medication":
        unit = reference.all_of(store, "Unit").get(entry.get("doseUnit") or "", {})
        unit_name = unit.get("name", entry.get("doseUnit") or "")
        parts = [names("Allergen", entry.get("classes", [])),
                 names("Route", entry.get("routes", []))]
        if entry.get("maxSingleDose") is not None:
            parts.append(f"up to {entry['maxSingleDose']} {unit_name} a dose, "
                         f"{entry.get('maxDailyDose')} {unit_name} a day")
            hard_single, hard_daily = hard_limits(entry)
            parts.append(f"hard stop above {_number(hard_single)} {unit_name} a dose, "
                         f"{_number(hard_daily)} {unit_name} a day")
        return "; ".join(p for p in parts if p)
    if type_name == "Allergen":
        return rules.ALLERGEN_KIND_LABELS.get(entry.get("kind", ""), "")
    if type_name == "Unit":
        return f"{entry.get('dimension', '')}, × {entry.get('factor', '')}"
    if type_name == "LabTest":
        units = reference.all_of(store, "Unit")
        return "; ".join(
            f"{a['name']} {a.get('low')}–{a.get('high')} "
            f"{units.get(a['unit'], {}).get('name', a['unit'])}"
            for a in entry.get("analytes", []))
    return ""


def _number(value: Decimal | None) -> str:
    """A limit as typed: 2000, not 2000.0000."""
    return "—" if value is None else format(value.normalize(), "f")


def _type_or_404(type_name: str) -> str:
    if type_name not in reference.TYPES:
        raise Http404("Unknown reference data type.")
    return type_name


@requires("manage_reference_data")
def reference_index(request: HttpRequest) -> HttpResponse:
    store = get_store()
    types = [(t, TYPE_LABELS.get(t, t), len(reference.all_of(store, t)))
             for t in reference.TYPES]
    return admin.site.render(request, "patients/reference_index.html", {"types": types},
                             title="Reference data")


@requires("manage_reference_data")
def reference_edit(request: HttpRequest, type_name: str, code: str = "") -> HttpResponse:
    type_name = _type_or_404(type_name)
    store = get_store()
    found = reference.entry(store, type_name, code) if code else None
    if code and found is None:
        raise Http404("No such entry.")
    initial: dict[str, Any] = {"active": True}
    if found is not None:
        initial = {**found[0], "etag": found[1]}
    form = _make_form(type_name, request.POST or None, initial, store)
    if found is not None:
        form.fields["code"].disabled = True
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        fields = {"name": data["name"], "active": data["active"]}
        for form_field, doc_field in EXTRA_FIELDS.get(type_name, {}).items():
            fields[doc_field] = _form_value(data.get(form_field))
        try:
            use_cases.save_reference_entry(use_cases.SaveReferenceEntry(
                type_name, data["code"], fields, create=found is None,
                expected_version=data["etag"] or None), new_uow(),
                actor=actor_for(request.user))
        except StaleWrite:
            current = reference.entry(store, type_name, data["code"])
            messages.error(request, "This entry was changed by someone else meanwhile. The "
                                    "form now shows the current values; review them and save "
                                    "again.")
            form = _make_form(type_name, None, {**current[0], "etag": current[1]}
                              if current else {}, store)
            form.fields["code"].disabled = True
        except DomainError as exc:
            field = _form_field(type_name, exc.field)
            form.add_error(field if field in form.fields else None, str(exc))
        else:
            messages.success(request, f"{type_name} {data['code']} saved.")
            return redirect("admin:reference_list", type_name)
    entries = [{**e, "details": _details(type_name, e, store)} for e in
               sorted(reference.all_of(store, type_name).values(), key=lambda e: e["code"])]
    return admin.site.render(request, "patients/reference_edit.html",
                             {"form": form, "entries": entries, "type_name": type_name,
                              "editing": code, "type_label": TYPE_LABELS.get(type_name, type_name)},
                             title=f"Reference data: {TYPE_LABELS.get(type_name, type_name)}")
