"""The baseline's JSON API: the product's paths, bodies and response shapes (django-ninja,
bearer tokens, role checks by group), worklists as JOIN/filter queries with offset paging."""

from __future__ import annotations

import copy
import hashlib
import re
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, FilteredRelation, OuterRef, Prefetch, Q
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Query, Schema
from ninja.renderers import BaseRenderer
from ninja.responses import NinjaJSONEncoder
from ninja.security import HttpBearer

from bench.relational import services
from bench.relational.models import (
    ACTIVE_ORDER,
    AT_RISK,
    Administration,
    Admission,
    Allergy,
    ApiToken,
    Bed,
    Order,
    Patient,
    Ward,
    fold,
)


class TokenAuth(HttpBearer):
    """The product's token handling, so reads compare data access, not auth: a lookup (with
    the user's groups) is remembered for 5 s per process."""

    CACHE_SECONDS = 5.0
    _cache: dict[str, tuple[float, Any]] = {}

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        digest = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        hit = self._cache.get(digest)
        if hit is None or hit[0] <= now:
            record = ApiToken.objects.select_related("user").filter(key_hash=digest).first()
            if record is None or not record.user.is_active:
                return None
            record.user._groups = frozenset(record.user.groups.values_list("name", flat=True))
            hit = (now + self.CACHE_SECONDS, record.user)
            self._cache[digest] = hit
        user = copy.copy(hit[1])
        request.user = user
        return user


class ORJSONRenderer(BaseRenderer):
    """The product's renderer (``hisadmin/core/renderers.py``), written again on purpose: the
    baseline imports nothing of the product's (importing ``hisadmin`` would load Celery
    into its workers, about 6 MB each, and skew the memory comparison)."""

    media_type = "application/json"
    encoder = NinjaJSONEncoder()

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> bytes:
        return orjson.dumps(data, default=self.encoder.default,
                            option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS)


api = NinjaAPI(auth=TokenAuth(), urls_namespace="relational", renderer=ORJSONRenderer())


def require(user: Any, *roles: str) -> None:
    if user.is_superuser:
        return
    if not user._groups & set(roles):  # set by TokenAuth, the API's only authentication
        raise PermissionDenied


@api.exception_handler(services.DomainError)
def _domain(request: HttpRequest, exc: services.DomainError) -> HttpResponse:
    return api.create_response(request, {"title": str(exc), "status": exc.status},
                               status=exc.status)


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return api.create_response(request, {"title": "Forbidden", "status": 403}, status=403)


class PatientIn(Schema):
    given_name: str
    family_name: str
    birth_date: date
    sex: str = "unknown"
    mrn: str = ""


class AdmitIn(Schema):
    department_id: str
    ward_id: str
    bed: str = ""
    reason: str
    attending_name: str = ""


class OrderIn(Schema):
    kind: str
    urgency: str = "routine"
    medication_code: str = ""
    dose: Decimal | None = None
    unit: str = ""
    route: str = ""
    frequency: str = ""
    modality: str = ""
    body_part: str = ""
    test_code: str = ""


class ActionIn(Schema):
    reason: str = ""


class AssignIn(Schema):
    assignee: str | None = None


class AdministrationIn(Schema):
    dose: Decimal
    unit: str


class DischargeIn(Schema):
    disposition: str


def patient_out(p: Patient) -> dict[str, Any]:
    return {"id": str(p.id), "mrn": p.mrn, "given_name": p.given_name,
            "family_name": p.family_name, "birth_date": p.birth_date.isoformat(),
            "sex": p.sex, "version": p.version, "etag": str(p.version)}


def admission_out(a: Admission) -> dict[str, Any]:
    return {"id": str(a.id), "patient_id": str(a.patient_id), "status": a.status,
            "department_id": a.department_id, "ward_id": a.ward_id,
            "bed": a.bed.code if a.bed_id else None, "reason": a.reason,
            "started_at": a.started_at.isoformat(), "etag": str(a.version)}


def order_out(o: Order) -> dict[str, Any]:
    return {"order_id": str(o.id), "patient_id": str(o.patient_id), "kind": o.kind,
            "status": o.status, "urgency": o.urgency, "description": o.description,
            "assignee_name": o.assignee_name, "version": o.version, "etag": str(o.version)}


def _actor(request: HttpRequest) -> str:
    return request.user.get_username()


@api.post("/patients")
def register(request: HttpRequest, payload: PatientIn) -> Any:
    require(request.user, "clerk")
    p = services.register(actor=_actor(request), **payload.dict())
    return api.create_response(request, patient_out(p), status=201)


@api.post("/patients/{patient_id}/admissions")
def admit(request: HttpRequest, patient_id: str, payload: AdmitIn) -> Any:
    require(request.user, "clerk")
    a = services.admit(patient_id, department_id=payload.department_id,
                       ward_id=payload.ward_id, bed=payload.bed, reason=payload.reason,
                       attending_id=str(request.user.pk),
                       attending_name=payload.attending_name or _actor(request),
                       actor=_actor(request))
    return api.create_response(request, admission_out(a), status=201)


@api.post("/patients/{patient_id}/allergies/none")
def record_no_known_allergies(request: HttpRequest, patient_id: str) -> Any:
    require(request.user, "clinician")
    return patient_out(services.record_no_known_allergies(patient_id, _actor(request)))


@api.post("/patients/{patient_id}/orders")
def place_order(request: HttpRequest, patient_id: str, payload: OrderIn) -> Any:
    require(request.user, "clinician")
    fields = {k: v for k, v in payload.dict().items()
              if k not in ("kind", "urgency") and v not in ("", None)}
    o = services.place_order(patient_id, kind=payload.kind, urgency=payload.urgency,
                             fields=fields, actor=_actor(request))
    return api.create_response(request, order_out(o), status=201)


@api.put("/patients/{patient_id}/orders/{order_id}/assignee")
def assign(request: HttpRequest, patient_id: str, order_id: str, payload: AssignIn) -> Any:
    require(request.user, "clinician", "nurse")
    user = None
    if payload.assignee:
        user = get_user_model().objects.filter(username=payload.assignee,
                                               is_active=True).first()
        if user is None:
            raise services.DomainError("No such user.")
    return order_out(services.assign(patient_id, order_id, user, _actor(request)))


@api.post("/patients/{patient_id}/orders/{order_id}/administrations")
def administer(request: HttpRequest, patient_id: str, order_id: str,
               payload: AdministrationIn) -> Any:
    require(request.user, "nurse")
    o = services.administer(patient_id, order_id, payload.dose, payload.unit, _actor(request))
    return api.create_response(request, order_out(o), status=201)


@api.post("/patients/{patient_id}/orders/{order_id}/{action}")
def progress(request: HttpRequest, patient_id: str, order_id: str, action: str,
             payload: ActionIn) -> Any:
    require(request.user, "clinician", "nurse")
    if action not in services.TRANSITIONS:
        raise services.NotFoundError("Unknown action.")
    return order_out(services.progress(patient_id, order_id, action, payload.reason,
                                       _actor(request)))


@api.post("/patients/{patient_id}/discharge")
def discharge(request: HttpRequest, patient_id: str, payload: DischargeIn) -> Any:
    require(request.user, "clerk")
    return admission_out(services.discharge(patient_id, payload.disposition, _actor(request)))


# ------------------------------------------------------------------ worklists
def _page(qs: Any, page: str | None, size: int, row: Any) -> dict[str, Any]:
    offset = int(page or 0)
    items = list(qs[offset:offset + size + 1])
    more = len(items) > size
    return {"items": [row(x) for x in items[:size]],
            "continuation": str(offset + size) if more else None}


def _age(born: date, today: date) -> int:
    return today.year - born.year - ((today.month, today.day) < (born.month, born.day))


def census_row(a: Admission) -> dict[str, Any]:
    now = datetime.now(UTC)
    p = a.patient
    return {"patient_id": str(p.id), "mrn": p.mrn, "given_name": p.given_name,
            "family_name": p.family_name, "age": _age(p.birth_date, now.date()),
            "sex": p.sex, "department_id": a.department_id, "ward_id": a.ward_id,
            "bed": a.bed.code if a.bed_id else None, "admitted_at": a.started_at.isoformat(),
            "attending_name": a.attending_name,
            "length_of_stay": max(0, (now - a.started_at).days)}


def order_row(o: Order) -> dict[str, Any]:
    return {"order_id": str(o.id), "patient_id": str(o.patient_id), "mrn": o.patient.mrn,
            "patient_name": f"{o.patient.family_name}, {o.patient.given_name}",
            "kind": o.kind, "status": o.status, "urgency": o.urgency,
            "description": o.description, "department_id": o.department_id,
            "ward_id": o.ward_id, "assignee_name": o.assignee_name,
            "placed_at": o.placed_at.isoformat()}


@api.get("/worklists/admitted")
def admitted(request: HttpRequest, department: str, ward: str = "", q: str = "",
             page: str | None = None, page_size: int = Query(50, ge=1, le=200)) -> Any:
    require(request.user, "clerk", "clinician", "nurse")
    qs = (Admission.objects.filter(status="active", department_id=department)
          .select_related("patient", "bed"))
    if ward:
        qs = qs.filter(ward_id=ward)
    if q and any(c.isdigit() for c in q):
        qs = qs.filter(patient__mrn=q.strip().upper())
    elif q:
        qs = qs.filter(patient__name_key__startswith=fold(q))
    return _page(qs.order_by("ward_id", "bed__code", "id"), page, page_size, census_row)


def _orders(qs: Any, kind: str, status: str, urgency: str) -> Any:
    for field, value in (("kind", kind), ("status", status), ("urgency", urgency)):
        if value:
            qs = qs.filter(**{field: value})
    return qs.select_related("patient").order_by("placed_at", "id")


@api.get("/worklists/orders")
def orders(request: HttpRequest, department: str, kind: str = "", status: str = "",
           urgency: str = "", page: str | None = None,
           page_size: int = Query(50, ge=1, le=200)) -> Any:
    require(request.user, "clinician", "nurse")
    qs = Order.objects.filter(ACTIVE_ORDER, department_id=department)
    return _page(_orders(qs, kind, status, urgency), page, page_size, order_row)


@api.get("/worklists/my-orders")
def my_orders(request: HttpRequest, kind: str = "", status: str = "", urgency: str = "",
              page: str | None = None, page_size: int = Query(50, ge=1, le=200)) -> Any:
    require(request.user, "clinician", "nurse")
    qs = Order.objects.filter(ACTIVE_ORDER, assignee=request.user)
    return _page(_orders(qs, kind, status, urgency), page, page_size, order_row)


@api.get("/worklists/patients")
def patients(request: HttpRequest, q: str = "", mrn: str = "", page: str | None = None,
             page_size: int = Query(50, ge=1, le=200)) -> Any:
    require(request.user, "clerk", "clinician", "nurse")
    if mrn:
        qs = Patient.objects.filter(mrn=mrn.strip().upper())
    else:
        # A range on the folded key: index-friendly on SQLite and PostgreSQL alike (LIKE
        # prefix searches only use a b-tree with special collations or operator classes).
        key = fold(q)
        qs = Patient.objects.filter(name_key__gte=key, name_key__lt=key + "\uffff")
    return _page(qs.order_by("name_key", "id"), page, page_size, lambda p: {
        "patient_id": str(p.id), "mrn": p.mrn, "given_name": p.given_name,
        "family_name": p.family_name, "birth_date": p.birth_date.isoformat(), "sex": p.sex})


# ------------------------------------------------------------------ bed boards
def _instant(moment: datetime) -> str:
    """An instant as the product answers one: ISO 8601 in UTC, to the second."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def _allergy_status(has_allergies: bool, no_known_at: datetime | None) -> str:
    if has_allergies:
        return "has_allergies"
    return "no_known_allergies" if no_known_at is not None else "unknown"


def bed_row(b: dict[str, Any], today: date) -> dict[str, Any]:
    """A bed as the product's ``BedOut``: free, or occupied by the active stay's patient (the
    baseline has no cleaning state: a bed is free once its stay has ended)."""
    if b["stay__id"] is None:
        return {"code": b["code"], "state": "free", "since": None, "patient_id": None,
                "patient": None, "etag": None}
    started: datetime = b["stay__started_at"]
    born: date = b["stay__patient__birth_date"]
    pid = str(b["stay__patient_id"])
    return {"code": b["code"], "state": "occupied", "since": _instant(started),
            "patient_id": pid,
            "patient": {
                "id": pid,
                "name": f"{b['stay__patient__family_name'].upper()}, "
                        f"{b['stay__patient__given_name']}",
                "sex": b["stay__patient__sex"], "birth_date": born.isoformat(),
                "age": _age(born, today), "admitted_at": _instant(started),
                "length_of_stay": max(0, (today - started.date()).days),
                "allergies": _allergy_status(b["has_allergies"],
                                             b["stay__patient__no_known_allergies_at"])},
            "etag": str(b["stay__version"])}


@api.get("/wards/{ward}/beds")
def ward_beds(request: HttpRequest, ward: str) -> Any:
    """The ward's bed board in bed-code order: one query, the beds LEFT JOINed to their active
    stay (the partial unique index one_patient_per_bed) and its patient, the allergy status
    from an EXISTS. A ward without beds is looked up once more (unknown: 404)."""
    require(request.user, "clerk", "clinician", "nurse")
    rows = list(
        Bed.objects.filter(ward_id=ward)
        .annotate(stay=FilteredRelation("admission", condition=Q(admission__status="active")),
                  has_allergies=Exists(Allergy.objects.filter(
                      patient_id=OuterRef("stay__patient_id"))))
        .order_by("code")
        .values("code", "stay__id", "stay__started_at", "stay__version", "stay__patient_id",
                "stay__patient__given_name", "stay__patient__family_name",
                "stay__patient__sex", "stay__patient__birth_date",
                "stay__patient__no_known_allergies_at", "has_allergies"))
    if not rows and not Ward.objects.filter(pk=ward).exists():
        raise services.NotFoundError("No such ward.")
    today = datetime.now(UTC).date()
    return [bed_row(b, today) for b in rows]


# ------------------------------------------------------------------ medication record
# The baseline's own table of frequency → hours between doses (the codes the workload and the
# driver order, and their usual synonyms); anything else: the start time only.
FREQUENCY_HOURS = {"Q4H": 4, "Q6H": 6, "Q8H": 8, "Q12H": 12, "Q24H": 24, "QAM": 24,
                   "NOCTE": 24, "OD": 24, "BID": 12, "BD": 12, "TID": 8, "TDS": 8, "QID": 6,
                   "QDS": 6}
DUE_BEFORE, DUE_AFTER = timedelta(minutes=30), timedelta(minutes=60)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadRequest(services.DomainError):
    status = 400


def _day(value: str | None) -> date:
    if not value:
        return datetime.now(UTC).date()
    try:
        if not _DAY.fullmatch(value):
            raise ValueError(value)
        day = date.fromisoformat(value)
        if not date(1900, 1, 1) <= day <= date(2100, 12, 31):  # the product's range
            raise ValueError(value)
        return day
    except ValueError:
        raise BadRequest(f"date must be YYYY-MM-DD, not {value[:20]!r}.") from None


def _minute(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def _decimal(value: Decimal | None) -> str | None:
    return None if value is None else format(value.normalize(), "f")


def _slot_status(slot: datetime, now: datetime, day_end: datetime) -> str:
    if now < slot - DUE_BEFORE:
        return "upcoming"
    if now <= slot + DUE_AFTER:
        return "due"
    return "late" if now < day_end else "missed"


def administration_row(a: Administration, slot: datetime | None, order_id: str
                       ) -> dict[str, Any]:
    """As the product's ``AdministrationOut`` (the fields the baseline keeps)."""
    return {"administration_id": str(a.pk), "status": "given",
            "recorded_at": _instant(a.at), "administered_at": _instant(a.at),
            "scheduled_for": slot.isoformat() if slot else None,
            "slot_id": f"{order_id}.{slot:%Y%m%dT%H%MZ}" if slot else None,
            "dose": _decimal(a.dose), "unit": a.unit, "reason": None, "by": a.by,
            "note": a.note}


def mar_row(o: Order, start: datetime, end: datetime, now: datetime) -> dict[str, Any]:
    """The order's day: dose times every N hours from when it was placed, within the day; a
    slot is given when an administration falls within half an interval of it."""
    hours = FREQUENCY_HOURS.get(o.frequency, 0)
    order_id = str(o.id)
    first = _minute(o.placed_at)
    times: list[datetime] = []
    if hours and not o.as_needed:
        step = timedelta(hours=hours)
        k = max(0, -((first - start) // step))  # the first dose time at or after the day start
        t = first + k * step
        while t < end:
            times.append(t)
            t += step
    elif not o.as_needed and start <= first < end:
        times.append(first)
    half = timedelta(hours=hours) / 2 if hours else timedelta(days=1)
    entries = list(o.administrations.all())  # prefetched, oldest first
    taken: dict[datetime, Administration] = {}
    slot_of: dict[int, datetime] = {}
    for t in times:
        hit = next((a for a in entries if a.pk not in slot_of and t - half <= a.at < t + half),
                   None)
        if hit is not None:
            taken[t], slot_of[hit.pk] = hit, t
    slots = [{"slot_id": f"{order_id}.{t:%Y%m%dT%H%MZ}", "scheduled_for": t.isoformat(),
              "status": "given" if t in taken else _slot_status(t, now, end),
              "administration": administration_row(taken[t], t, order_id)
              if t in taken else None} for t in times]
    return {"order_id": order_id, "description": o.description, "status": o.status,
            "medication_code": o.medication_code or None,
            "medication_name": o.medication_name or None, "dose": _decimal(o.dose),
            "unit": o.unit or None, "route": o.route or None, "frequency": o.frequency or None,
            "frequency_hours": float(hours), "as_needed": o.as_needed,
            "prn_min_interval_hours": None, "start_at": _instant(o.placed_at),
            "end_at": None, "etag": str(o.version), "slots": slots,
            "administrations": [administration_row(a, slot_of.get(a.pk), order_id)
                                for a in entries if start <= a.at < end],
            "data_errors": []}


@api.get("/patients/{patient_id}/mar")
def medication_record(request: HttpRequest, patient_id: str, date: str | None = None) -> Any:
    """The patient's medication orders active on ``date`` (YYYY-MM-DD, a UTC day; default
    today): open ones placed before the day ends, and ended ones given a dose that day, oldest
    first, each with the day's dose times and administrations. Three queries: the patient, its
    orders (of the stays that overlap the day), their administrations (prefetched)."""
    require(request.user, "clerk", "clinician", "nurse")
    day = _day(date)
    try:
        patient = Patient.objects.only("id").get(pk=uuid.UUID(patient_id))
    except (ValueError, Patient.DoesNotExist):
        raise services.NotFoundError("No such patient.") from None
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    end = start + timedelta(days=1)
    now = datetime.now(UTC)
    given_that_day = Administration.objects.filter(order=OuterRef("pk"), at__gte=start,
                                                   at__lt=end)
    orders = (Order.objects
              .filter(patient=patient, kind="medication", placed_at__lt=end,
                      admission__started_at__lt=end)
              .filter(Q(admission__ended_at__isnull=True) | Q(admission__ended_at__gte=start))
              .filter(ACTIVE_ORDER | Q(Exists(given_that_day)))
              .prefetch_related(Prefetch("administrations",
                                         queryset=Administration.objects.order_by("at", "id")))
              .order_by("placed_at", "id"))
    return {"patient_id": str(patient.id), "date": day.isoformat(),
            "now": _instant(now),
            "orders": [mar_row(o, start, end, now) for o in orders]}


# ------------------------------------------------------------------ observations (NEWS2)
class ObservationIn(Schema):
    respiration_rate: Any = None
    spo2: Any = None
    on_oxygen: bool | None = None
    oxygen_device: str | None = None
    oxygen_flow_l_min: Any = None
    systolic_bp: Any = None
    diastolic_bp: Any = None
    pulse: Any = None
    consciousness: str | None = None
    temperature: Any = None
    pain_score: Any = None
    comment: str = ""
    taken_at: datetime | None = None


@api.post("/patients/{patient_id}/observations")
def record_observations(request: HttpRequest, patient_id: str, payload: ObservationIn) -> Any:
    require(request.user, "clinician", "nurse")
    values = payload.dict(exclude={"taken_at"})
    made = services.record_observations(patient_id, values, payload.taken_at, _actor(request))
    return api.create_response(request, {
        "observation_id": str(made.id), "taken_at": made.taken_at.isoformat(), **made.values,
        "news2": {"score": made.score, "risk": made.risk or None, "complete": made.complete,
                  "next_due_at": made.next_due_at.isoformat() if made.next_due_at else None}},
        status=201)


def _news2_row(a: Admission, now: datetime) -> dict[str, Any]:
    due = a.news2_next_due or a.started_at
    late = int((now - due).total_seconds() // 60)
    return {**census_row(a), "score": a.news2_score, "risk": a.news2_risk or None,
            "taken_at": a.news2_taken_at.isoformat() if a.news2_taken_at else None,
            "next_due_at": due.isoformat(), "overdue": late > 0, "minutes_late": max(0, late)}


@api.get("/worklists/observations-due")
def observations_due(request: HttpRequest, ward: str) -> Any:
    """Every patient of the ward by when the next set is due (the stay's start before the
    first), overdue first: one indexed query."""
    require(request.user, "clinician", "nurse")
    now = datetime.now(UTC)
    qs = (Admission.objects.filter(status="active", ward_id=ward)
          .select_related("patient", "bed")
          .order_by(Coalesce("news2_next_due", "started_at"), "id"))
    rows = [_news2_row(a, now) for a in qs]
    return {"items": rows, "continuation": None}


@api.get("/worklists/at-risk")
def at_risk(request: HttpRequest, department: str, ward: str = "", page: str | None = None,
            page_size: int = Query(50, ge=1, le=200)) -> Any:
    require(request.user, "clinician", "nurse")
    now = datetime.now(UTC)
    qs = (Admission.objects.filter(status="active", department_id=department,
                                   news2_risk__in=AT_RISK).select_related("patient", "bed"))
    if ward:
        qs = qs.filter(ward_id=ward)
    return _page(qs.order_by("-news2_score", "id"), page, page_size,
                 lambda a: _news2_row(a, now))
