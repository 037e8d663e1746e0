"""Realistic request bodies for the API state machine: the codes of the reference data, the
ids and versions of earlier steps, times near now in the hospital's zone (microseconds,
offset), odd Unicode in names and free text. Each is a Hypothesis strategy, blended with
the schema's own bodies by the machine."""

from __future__ import annotations

from datetime import tzinfo
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from patients.domain.records import SEXES
from tests.integration.api_machine_support import (
    Api,
    birth_dates,
    choose,
    decimal_text,
    moment,
    names,
    text,
)

if TYPE_CHECKING:
    from tests.integration.api_machine_checks import Chart, Context, Reference

ACTIONS = ("ready", "start", "complete", "cancel")
NEXT = {"created": ("ready", "start", "cancel"), "ready": ("start", "cancel"),
        "in_progress": ("complete", "complete", "cancel")}


def patient() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"given_name": names(), "family_name": names(), "birth_date": birth_dates()},
        optional={"sex": st.sampled_from(SEXES),
                  "confirm_not_duplicate": st.sampled_from([True, True, False])})


def demographics(current: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The record as read, a field or more changed (or none: an unchanged PUT)."""
    keep = {k: current[k] for k in ("given_name", "family_name", "birth_date", "sex")}
    return st.fixed_dictionaries({
        "given_name": st.one_of(st.just(keep["given_name"]), names()),
        "family_name": st.one_of(st.just(keep["family_name"]), names()),
        "birth_date": st.one_of(st.just(keep["birth_date"]), birth_dates()),
        "sex": st.one_of(st.just(keep["sex"]), st.sampled_from(SEXES))})


def free_beds(api: Api, ward: str) -> list[str]:
    return [b["code"] for b in api.ok(f"/api/v1/wards/{ward}/beds") if b["state"] == "free"]


def _place(data: st.DataObject, ctx: Context) -> tuple[str, str]:
    """A ward and a bed of it: mostly a free one, sometimes none, or any (maybe taken)."""
    ward = data.draw(st.sampled_from(sorted(ctx.reference.wards)), label="ward")
    free = free_beds(ctx.apis["clerk"], ward) or [""]
    how = data.draw(st.sampled_from(["free", "free", "none", "any"]), label="bed")
    if how == "none":
        return ward, ""
    return ward, choose(data, free if how == "free" else ctx.reference.wards[ward]["beds"],
                        "bed")


def admission(data: st.DataObject, ctx: Context) -> st.SearchStrategy[dict[str, Any]]:
    ward, bed = _place(data, ctx)
    return st.fixed_dictionaries(
        {"department_id": st.just(ctx.reference.wards[ward]["department"]),
         "ward_id": st.just(ward), "bed": st.just(bed), "reason": text(200, min_size=1)},
        optional={"attending_name": names(), "attending": st.just("machine-clinician")})


def transfer(data: st.DataObject, ctx: Context) -> st.SearchStrategy[dict[str, Any]]:
    ward, bed = _place(data, ctx)
    return st.just({"ward_id": ward, "bed": bed})


def order(kind: str, ref: Reference, tz: tzinfo) -> st.SearchStrategy[dict[str, Any]]:
    common = {"kind": st.just(kind)}
    optional = {"urgency": st.sampled_from(["routine", "stat"]), "note": text(200)}
    if kind == "lab":
        return st.fixed_dictionaries({**common, "test_code": st.sampled_from(sorted(ref.lab_tests))},
                                     optional=optional)
    if kind == "imaging":
        return st.fixed_dictionaries({**common, "modality": st.sampled_from(ref.modalities),
                                      "body_part": st.sampled_from(ref.body_parts)},
                                     optional=optional)
    return st.sampled_from(ref.medications).flatmap(
        lambda med: _medication(med, ref, tz, optional))


def _medication(med: dict[str, Any], ref: Reference, tz: tzinfo,
                optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    top = Decimal(str(med.get("max_single_dose") or 1000))
    doses = st.sampled_from([top / 4, top / 2, top, top * 2]).map(decimal_text)
    return st.fixed_dictionaries(
        {"kind": st.just("medication"), "medication_code": st.just(med["code"]),
         "dose": doses, "unit": st.just(med.get("dose_unit") or "mg"),
         "route": st.sampled_from(med.get("routes") or ["PO"]),
         "frequency": st.sampled_from(ref.frequencies),
         "start_at": moment(tz, back_hours=14, ahead_hours=2)},
        optional={**optional, "as_needed": st.booleans(),
                  "end_at": moment(tz, back_hours=-3, ahead_hours=48)})


def pick_order(data: st.DataObject, chart: Chart, kinds: tuple[str, ...], *,
               resulted: bool = False) -> dict[str, Any]:
    """One of the patient's orders: of ``kinds``, active (or, ``resulted``, with results)
    when there are such; else any of them, or (no order) a made-up one."""
    every = list(chart.orders.values())
    fitting = [o for o in every if (not kinds or o["kind"] in kinds)
               and (o.get("results") if resulted else o["status"] in NEXT)]
    made_up = {"order_id": "no-such-order", "kind": "lab", "status": "created", "etag": None}
    return choose(data, fitting or every or [made_up], "order")


def action_for(order: dict[str, Any]) -> st.SearchStrategy[str]:
    """Mostly an action the order's state allows, sometimes any."""
    return st.one_of(st.sampled_from(NEXT.get(order["status"], ACTIONS)),
                     st.sampled_from(NEXT.get(order["status"], ACTIONS)),
                     st.sampled_from(ACTIONS))


def action_body(action: str, order: dict[str, Any], ref: Reference
                ) -> st.SearchStrategy[dict[str, Any]]:
    if action == "cancel":
        return st.fixed_dictionaries({"reason": text(300, min_size=1)})
    if action != "complete":
        return st.just({})
    if order["kind"] == "imaging":
        return st.fixed_dictionaries({"report": text(2000, min_size=1)})
    if order["kind"] == "lab":
        analytes = ref.lab_tests.get(order.get("test_code") or "", [])
        return st.tuples(*(_value(a) for a in analytes)).map(
            lambda values: {"results": list(values)})
    return st.just({})


def _value(analyte: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A value in range, at either end or out of it; as a number or a decimal string; with
    the analyte's unit, or none (its default)."""
    low, high = analyte.get("low") or 0, analyte.get("high") or 100
    values = st.sampled_from([low, high, (low + high) / 2, high * 1.5, low / 2])
    return st.fixed_dictionaries(
        {"analyte_code": st.just(analyte["code"]),
         "value": st.one_of(values, values.map(decimal_text))},
        optional={"unit": st.just(analyte["unit"])})


def administration(order: dict[str, Any], mar: dict[str, Any], tz: tzinfo,
                   reasons: dict[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    """A dose given (the ordered dose or half of it, a time just past) or not given, for one
    of the day's open dose times from the MAR when it lists the order."""
    listed = [o for o in mar.get("orders", []) if o["order_id"] == order["order_id"]]
    times = [s["scheduled_for"] for o in listed for s in o["slots"]
             if s["administration"] is None]
    scheduled = {"scheduled_for": st.sampled_from(times)} if times else {}
    dose = Decimal(order.get("dose") or "1")
    given = st.fixed_dictionaries(
        {"status": st.just("given"), "dose": st.sampled_from([dose, dose / 2]).map(decimal_text),
         "unit": st.just(order.get("unit") or "mg")},
        optional={**scheduled, "administered_at": moment(tz, back_hours=0.5, ahead_hours=0),
                  "note": text(200)})
    not_given = st.sampled_from(sorted(reasons)).flatmap(lambda reason: st.fixed_dictionaries(
        {"status": st.just("not_given"), "reason": st.just(reason),
         **({"reason_detail": text(300, min_size=1)} if reason == "other" else {})},
        optional={**scheduled, "note": text(200)}))
    return st.one_of(given, given, not_given)
