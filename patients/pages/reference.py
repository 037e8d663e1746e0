"""Reference data pages for admins: list a type, add or edit an entry, retire it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from cosmos_backend import errors
from cosmos_backend.store import DocumentStore, validate_id
from cosmos_backend.uow import StaleWrite
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain.errors import DomainError
from patients.persistence import reference


class EntryForm(forms.Form):
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
    hours = forms.IntegerField(min_value=1, max_value=168, required=False,
                               help_text="Hours between doses; empty for once a day at a set time.")


class MedicationForm(EntryForm):
    default_unit = forms.ChoiceField(label="Default unit", required=False)

    def __init__(self, *args: Any, store: DocumentStore, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["default_unit"].choices = [("", "—")] + reference.choices(store, "Unit")


# Form field → document field, for the types that carry more than code and name.
EXTRA_FIELDS: dict[str, dict[str, str]] = {
    "Ward": {"department_id": "departmentId", "beds": "beds"},
    "Frequency": {"hours": "hours"},
    "Medication": {"default_unit": "defaultUnit"},
}
FORMS: dict[str, type[EntryForm]] = {"Ward": WardForm, "Frequency": FrequencyForm,
                                     "Medication": MedicationForm}


def _make_form(type_name: str, data: Any, initial: dict[str, Any],
               store: DocumentStore) -> EntryForm:
    form_class = FORMS.get(type_name, EntryForm)
    extra = EXTRA_FIELDS.get(type_name, {})
    initial = {**initial, **{f: initial.get(d) for f, d in extra.items() if d in initial}}
    if isinstance(initial.get("beds"), list):
        initial["beds"] = ", ".join(initial["beds"])
    if form_class in (WardForm, MedicationForm):
        return form_class(data, initial=initial, store=store)  # type: ignore[call-arg]
    return form_class(data, initial=initial)


def _details(entry: dict[str, Any]) -> str:
    if "beds" in entry:
        return f"{entry.get('departmentId')}; {len(entry['beds'])} beds"
    if entry.get("hours"):
        return f"every {entry['hours']} h"
    return entry.get("defaultUnit", "")


def _type_or_404(type_name: str) -> str:
    if type_name not in reference.TYPES:
        raise Http404("Unknown reference data type.")
    return type_name


@requires("manage_reference_data")
def reference_index(request: HttpRequest) -> HttpResponse:
    store = get_store()
    types = [(t, len(reference.all_of(store, t))) for t in reference.TYPES]
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
            fields[doc_field] = None if data.get(form_field) in (None, "") else data[form_field]
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
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"{type_name} {data['code']} saved.")
            return redirect("admin:reference_list", type_name)
    entries = [{**e, "details": _details(e)} for e in
               sorted(reference.all_of(store, type_name).values(), key=lambda e: e["code"])]
    return admin.site.render(request, "patients/reference_edit.html",
                             {"form": form, "entries": entries, "type_name": type_name,
                              "editing": code},
                             title=f"Reference data: {type_name}")
