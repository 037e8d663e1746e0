"""Pages for results: the form that completes a lab or imaging order, and acknowledging."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect

from cosmos_backend.uow import StaleWrite
from hisadmin.core.inputs import CheckedForm, safe_next
from hisadmin.core.numbers import DecimalText
from hisadmin.core.policy import actor_for, requires
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.domain.errors import DomainError
from patients.domain.results import MAX_REPORT, GivenValue
from patients.pages.clinical import rebind_etag
from patients.pages.records import STALE_MESSAGE, _attach, _chart_context, _report
from patients.persistence import reference


def _number(value: Any) -> str:
    return "" if value is None else format(Decimal(str(value)).normalize(), "f")


class ResultsForm(CheckedForm):
    """One number per analyte (``results.<code>``) for a lab test; a report for imaging."""

    etag = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, kind: str, analytes: list[dict[str, Any]],
                 units: dict[str, dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.analytes = analytes
        for a in analytes:
            unit = (units.get(a.get("unit") or "") or {}).get("name", a.get("unit") or "")
            self.fields[f"results.{a['code']}"] = DecimalText(
                label=f"{a['name']} ({unit})", max_digits=16, decimal_places=6,
                help_text=f"Reference range {_number(a.get('low'))}–{_number(a.get('high'))} "
                          f"{unit}",
                widget=forms.TextInput(attrs={"data-analyte": a["code"]}),
                error_messages={"required": f"Enter the {a['name'].lower()} value."})
        self.fields["report"] = forms.CharField(
            label="Report" if kind == "imaging" else "Comment", required=kind == "imaging",
            max_length=MAX_REPORT, widget=forms.Textarea(attrs={"rows": 10 if kind == "imaging"
                                                                else 3, "cols": 80}),
            error_messages={"required": "Write the report to complete the exam."})
        self.order_fields(["report", "etag"] if kind == "imaging" else None)

    def given(self) -> tuple[GivenValue, ...]:
        return tuple(GivenValue(a["code"], self.cleaned_data[f"results.{a['code']}"])
                     for a in self.analytes)


@requires("progress_order")
def complete_order(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """Complete a lab order with its values or an imaging order with its report."""
    context = _chart_context(patient_id)
    order = next((o for o in context["orders"] if o["orderId"] == order_id), None)
    if order is None:
        raise Http404("No such order on this patient.")
    if order["kind"] not in ("lab", "imaging"):
        return redirect("admin:patient_chart", patient_id)
    store = get_store()
    analytes: list[dict[str, Any]] = []
    if order["kind"] == "lab":
        test = reference.all_of(store, "LabTest").get(order.get("testCode") or "") or {}
        analytes = list(test.get("analytes", []))
    form = ResultsForm(request.POST or None, initial={"etag": order["etag"]},
                       kind=order["kind"], analytes=analytes,
                       units=reference.all_of(store, "Unit"))
    if request.method == "POST" and form.is_valid():
        try:
            use_cases.complete_order(use_cases.CompleteOrder(
                patient_id, order_id, form.given(), form.cleaned_data["report"],
                form.cleaned_data["etag"]), new_uow(), actor=actor_for(request.user))
        except StaleWrite:  # re-shown with the current record, under its version now
            form.add_error(None, STALE_MESSAGE)
            rebind_etag(form, order["etag"])
        except DomainError as exc:
            _attach(form, exc)
        else:
            messages.success(request, "Results recorded; the order is completed.")
            return redirect("admin:patient_chart", patient_id)
    verb = "Enter results" if order["kind"] == "lab" else "Report"
    return admin.site.render(request, "patients/form.html", {
        **context, "form": form, "submit": "Record results and complete", "order": order},
        title=f"{verb}: {order['description']}")


@requires("acknowledge_result")
def acknowledge(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """POST-only button in the chart's Results section and the "Results to review" list;
    back to ``next`` (a page of this site) when given, else to the chart."""
    if request.method == "POST":
        _report(request, lambda: use_cases.acknowledge_result(use_cases.AcknowledgeResult(
            patient_id, order_id, request.POST.get("etag") or None), new_uow(),
            actor=actor_for(request.user)), "Results acknowledged.")
    back = safe_next(request)
    if back:
        return redirect(back)
    return redirect("admin:patient_chart", patient_id)
