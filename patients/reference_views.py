"""Reference data pages for admins: list a type, add or edit an entry, retire it."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from cosmos_backend import errors, keys
from cosmos_backend.envelope import wrap
from cosmos_backend.store import validate_id
from hisadmin.roles import Role, role_required
from hisadmin.store import get_store

from . import reference


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


def _type_or_404(type_name: str) -> str:
    if type_name not in reference.TYPES:
        raise Http404("Unknown reference data type.")
    return type_name


@role_required(Role.ADMIN)
def reference_index(request: HttpRequest) -> HttpResponse:
    store = get_store()
    types = [(t, len(reference.all_of(store, t))) for t in reference.TYPES]
    return admin.site.render(request, "patients/reference_index.html", {"types": types},
                             title="Reference data")


@role_required(Role.ADMIN)
def reference_edit(request: HttpRequest, type_name: str, code: str = "") -> HttpResponse:
    type_name = _type_or_404(type_name)
    store = get_store()
    existing = store.try_read(keys.reference(type_name), code) if code else None
    if code and existing is None:
        raise Http404("No such entry.")
    initial = {"active": True}
    if existing is not None:
        initial = {**existing["docContents"], "etag": existing["_etag"]}
    form = EntryForm(request.POST or None, initial=initial)
    if existing is not None:
        form.fields["code"].disabled = True
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        contents = {**(existing["docContents"] if existing else {}), "code": data["code"],
                    "name": data["name"], "active": data["active"]}
        doc = wrap(doc_id=data["code"], pk=keys.reference(type_name), doc_type="Reference",
                   sub_type=type_name, contents=contents)
        try:
            if existing is None:
                store.create(doc)
            else:
                store.replace(doc, if_match=data["etag"] or existing["_etag"])
        except errors.Conflict:
            form.add_error("code", "An entry with this code exists; edit it instead.")
        except errors.PreconditionFailed:
            form.add_error(None, "Someone changed this entry meanwhile; reload to see it.")
        else:
            reference.invalidate()
            messages.success(request, f"{type_name} {data['code']} saved.")
            return redirect("admin:reference_list", type_name)
    entries = sorted(reference.all_of(store, type_name).values(), key=lambda e: e["code"])
    return admin.site.render(request, "patients/reference_edit.html",
                             {"form": form, "entries": entries, "type_name": type_name,
                              "editing": code},
                             title=f"Reference data: {type_name}")
