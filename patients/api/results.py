"""JSON API for results: a patient's lab and imaging results, and acknowledging them.

Results are entered by completing the order (``POST …/orders/{order_id}/complete`` with
``results`` or ``report``, in ``clinical.py``); this router reads them and marks them reviewed.
Mounted before the clinical router: its ``…/{action}`` path would catch ``acknowledge``.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Header, Router, Schema
from pydantic import Field

from hisadmin.core import policy
from hisadmin.core.policy import actor_for
from hisadmin.core.problems import json_response
from hisadmin.core.store import get_store, new_uow
from patients import use_cases
from patients.api.schemas import ERRORS_SCHEMA, snake_keys
from patients.domain.results import flags_summary, resulted
from patients.persistence import queries

router = Router(tags=["results"])


class ResultValueOut(Schema):
    analyte: str = Field(description="the analyte's code")
    name: str
    value: float
    unit: str | None = Field(None, description="a Unit code: the analyte's unit")
    low: float | None = None
    high: float | None = None
    flag: str | None = Field(None, description="H above high, L below low, null in range")
    text: str | None = Field(None, description="the value as measured, with its comparator "
                             "when the laboratory gave one (\"<20\")")
    comparator: str | None = Field(None, description="<, <=, > or >= when the value is a "
                                   "bound (below or above what the method measures)")
    lab_range: str | None = Field(None, description="the laboratory's own reference range "
                                  "(HL7 OBX-7), beside ours")
    lab_flags: list[str] | None = Field(None, description="the laboratory's own flags (HL7 "
                                        "OBX-8), beside ours")
    observed_at: str | None = Field(None, description="when the laboratory observed it")
    comments: list[str] | None = Field(None, description="the laboratory's comments on it")


class EarlierResultOut(Schema):
    status: str = Field(description="preliminary, final or corrected")
    resulted_at: str
    resulted_by: str
    values: list[ResultValueOut]


class ResultOut(Schema):
    order_id: str
    kind: str = Field(description="lab | imaging")
    description: str
    test_code: str | None = None
    modality: str | None = None
    body_part: str | None = None
    placed_at: str
    placed_by: str = Field(description="the ordering clinician's user id")
    resulted_at: str
    resulted_by: str
    values: list[ResultValueOut] = Field(description="lab: one per analyte; imaging: empty")
    report: str = Field(description="imaging: the report; lab: an optional comment")
    abnormal: bool = Field(description="a value is flagged H or L")
    high: list[str] = Field(description="analyte codes flagged H")
    low: list[str] = Field(description="analyte codes flagged L")
    acknowledged_at: str | None = None
    acknowledged_by: str | None = None
    status: str = Field("final", description="preliminary (the order still in progress: not "
                        "final), final, or corrected (amended after a final result)")
    observed_at: str | None = Field(None, description="when the specimen was observed "
                                    "(a laboratory's OBR-7)")
    comments: list[str] = Field([], description="the laboratory's comments on the result")
    history: list[EarlierResultOut] = Field([], description="the results this one replaced, "
                                            "oldest first")
    etag: str = Field(description="the order's ETag (If-Match for acknowledge)")


_VALUE_FIELDS = tuple(ResultValueOut.model_fields)


def value_out(v: dict[str, Any]) -> dict[str, Any]:
    """A result value as kept on the order, snake_case, its documented fields only."""
    out = snake_keys(v)
    return {k: out.get(k) for k in _VALUE_FIELDS}


def result_out(order: dict[str, Any]) -> dict[str, Any]:
    """A completed order's results, snake_case (the answer of the list and of acknowledge
    alike: every key, at any depth)."""
    r = order["results"]
    values = r.get("values", [])
    return {"order_id": order["orderId"], "kind": order["kind"],
            "description": order["description"], "test_code": order.get("testCode"),
            "modality": order.get("modality"), "body_part": order.get("bodyPart"),
            "placed_at": order["placedAt"], "placed_by": order.get("placedBy", ""),
            "resulted_at": r["resultedAt"], "resulted_by": r["resultedBy"],
            "values": [value_out(v) for v in values], "report": r.get("report", ""), **flags_summary(values),
            "acknowledged_at": r.get("acknowledgedAt"),
            "acknowledged_by": r.get("acknowledgedBy"), "status": r.get("status") or "final",
            "observed_at": r.get("observedAt"), "comments": list(r.get("comments") or []),
            "history": [{"status": h.get("status") or "final", "resulted_at": h["resultedAt"],
                         "resulted_by": h["resultedBy"],
                         "values": [value_out(v) for v in h.get("values", [])]}
                        for h in r.get("history") or []],
            "etag": order["etag"]}


@router.get("/patients/{patient_id}/results", response={200: list[ResultOut], **ERRORS_SCHEMA},
            summary="Lab and imaging results, newest first, with their flags")
def list_results(request: HttpRequest, patient_id: str) -> list[dict[str, Any]]:
    policy.require(request.user, "read")
    store = get_store()
    queries.patient(store, patient_id)
    return [result_out(o) for o in resulted(queries.orders(store, patient_id))]


@router.post("/patients/{patient_id}/orders/{order_id}/acknowledge",
             response={200: ResultOut, **ERRORS_SCHEMA},
             summary="Acknowledge an order's results (mark them reviewed)")
def acknowledge(request: HttpRequest, patient_id: str, order_id: str,
                if_match: str | None = Header(None, alias="If-Match")) -> HttpResponse:
    """Clinicians only. 409 when the order has no results or they were acknowledged
    already; optional ``If-Match``: the order's ETag (stale → 412)."""
    policy.require(request.user, "acknowledge_result")
    uow = new_uow()
    use_cases.acknowledge_result(use_cases.AcknowledgeResult(patient_id, order_id, if_match),
                                 uow, actor=actor_for(request.user))
    view = queries.committed(uow, patient_id, "order", order_id)
    return json_response(request, result_out(view), etag=view["etag"])
