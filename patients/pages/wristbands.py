"""Print pages that identify a patient on paper: the wristband (name, MRN, birth date,
allergy flag, the MRN as a Code 128 barcode) and a lab order's specimen labels (the order's
barcode, the patient, the test, blanks for who collected it and when).

Each is a page of its own with no navigation, sized by its print CSS for a wristband or label
printer (``@page``); the screen shows the same band or labels with a Print button. The barcode
is inline SVG (:mod:`patients.pages.barcodes`): nothing is loaded from another host.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.safestring import mark_safe

from hisadmin.core.policy import requires
from patients.domain.records import SEX_LABELS
from patients.pages import barcodes, mar_shifts
from patients.pages.records import _chart_context

LABELS_MAX = 10  # tubes one lab order needs, at most; more is a typo


def _copies(value: str | None) -> int:
    """``?copies=`` (1 to :data:`LABELS_MAX`, default 1); anything else is the 400 page."""
    if not value:
        return 1
    if not value.isdigit() or not 1 <= int(value) <= LABELS_MAX:
        raise BadRequest(f"copies is a number of labels from 1 to {LABELS_MAX}.")
    return int(value)


@requires("print_wristband")
def wristband(request: HttpRequest, patient_id: str) -> HttpResponse:
    """The patient's wristband to print; an unknown patient is the 404 page."""
    context = _chart_context(patient_id)
    mrn = context["banner"]["mrn"]
    return TemplateResponse(request, "patients/wristband.html", {
        **context, "printed_at": mar_shifts.local_now(),
        "sex_label": SEX_LABELS.get(context["banner"]["sex"], ""),
        # the library's own SVG, attributes escaped by minidom: safe to put in the page
        "barcode": mark_safe(barcodes.code128_svg(  # noqa: S308
            mrn, height_mm=11, label=f"Barcode of MRN {mrn}"))})


@requires("print_specimen_label")
def specimen_labels(request: HttpRequest, patient_id: str, order_id: str) -> HttpResponse:
    """``?copies=N`` labels (default 1) for one lab order of the patient; any other order,
    or an unknown one, is the 404 page."""
    copies = _copies(request.GET.get("copies"))
    context = _chart_context(patient_id)
    order: dict[str, Any] | None = next((o for o in context["orders"]
                                         if o["orderId"] == order_id), None)
    if order is None or order["kind"] != "lab":
        raise Http404("No such lab order on this patient.")
    code = barcodes.order_barcode_text(order_id)
    number = barcodes.short_order_number(order_id)
    return TemplateResponse(request, "patients/specimen_labels.html", {
        **context, "order": order, "number": number, "copies": range(copies),
        "copies_count": copies, "copies_max": LABELS_MAX,
        "barcode": mark_safe(barcodes.code128_svg(  # noqa: S308
            code, height_mm=8, module_mm=0.2, label=f"Barcode of order {number}"))})
