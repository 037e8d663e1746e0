"""End to end, as a property: Hypothesis drives sequences of API commands against the real
stack (the embedded store file, a real Redis, the light Celery worker with its relay thread,
a webhook receiver) and checks after every step what integrators rely on.

Bodies come from the OpenAPI document's request schemas, blended with realistic values
(reference codes, ids from earlier steps, times with microseconds and the hospital's offset,
odd Unicode), so commands succeed often and still meet odd input. After each step: no 5xx
anywhere, every 4xx a problem, a refused command writes no event; a 2xx command carries
``X-Consistency-Token`` and the worklists read with it show the record as the API reads it;
the patient's reads, FHIR ``$everything``, chart and MAR pages and every worklist (API and
page) answer; no dead letters. At the end of each example ``check_worklists`` agrees and a
rebuild gives the same rows (``api_machine_checks``).

Bounded for ``make test`` (a few examples of about twenty steps); ``HYPOTHESIS_PROFILE=long``
runs the nightly length.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from hisadmin.core import store as handles
from hisadmin.core.actor import Actor
from hisadmin.core.consistency import HEADER
from hisadmin.models import ApiToken
from patients.domain.mar import NOT_GIVEN_REASONS
from patients.domain.records import (
    CRITICALITIES,
    DISPOSITIONS,
    REMOVAL_REASONS,
    SEVERITIES,
)
from patients.persistence import reference as stored_reference
from testkit.fixtures import TEST_PASSWORD
from tests.integration import api_machine_bodies as realistic
from tests.integration.api_machine_checks import (
    Chart,
    Context,
    Reference,
    check_dead_letters,
    check_worklists,
    read_chart,
    settle_check_and_rebuild,
)
from tests.integration.api_machine_support import (
    Api,
    Bodies,
    Pages,
    Transcript,
    blended,
    choose,
    text,
)
from tests.integration.processes import start_light_worker, wait_for
from tests.integration.test_light_worker import relay_owner
from tests.integration.test_webhooks_delivery import (  # noqa: F401 - fixture
    RECEIVER_REACHABLE,
    receiver,
)
from tests.integration.worklist_stack import (  # noqa: F401 - fixtures
    WorklistStack,
    stack_per_test,
    worklist_stack,
)
from webhooks import use_cases as webhook_use_cases
from webhooks.domain.subscriptions import PATIENT_EVENT_TYPES

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# A zone with a half-hour offset and summer time: local days and UTC days part differently.
HOSPITAL_ZONE = "Australia/Adelaide"
# Generation only: the stack outside the machine (the clock, the store's earlier examples, the
# worker's timing) is not replayed, so shrinking would chase a failure that moves; the
# transcript in the failure message is the reproduction. No example database in the tree.
settings.register_profile(
    "api-machine:default", max_examples=10, stateful_step_count=25, deadline=None,
    database=None, phases=(Phase.generate,),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])
settings.register_profile(
    "api-machine:long", parent=settings.get_profile("api-machine:default"),
    max_examples=150, stateful_step_count=50)
PROFILE = settings.get_profile(f"api-machine:{os.environ.get('HYPOTHESIS_PROFILE', 'default')}")
P = "/api/v1/patients/{patient_id}"


class ApiMachine(RuleBasedStateMachine):
    """Clerks, clinicians and nurses at work through the API; ``charts`` are the patients
    registered so far, as the API last read them."""

    def __init__(self, ctx: Context) -> None:
        super().__init__()
        self.ctx = ctx
        self.charts: dict[str, Chart] = {}
        self.clerk, self.doc, self.nurse = (ctx.apis[r] for r in ("clerk", "clinician", "nurse"))

    # -- after every step ---------------------------------------------------------------

    def after(self, chart: Chart | None, answer: Any, *, writes: bool = True) -> None:
        """The checks of a step: ``writes`` False when a 2xx may have written nothing (an
        unchanged record, a replayed answer)."""
        ok = 200 <= answer.status_code < 300
        token = answer.get(HEADER) if ok else None
        if ok and writes:
            self.clerk.expect(token, f"a {answer.status_code} command without {HEADER}")
        if chart is not None:
            head = chart.head
            read_chart(self.ctx, chart)
            if not ok:
                self.clerk.expect(chart.head == head, f"a refused command ({answer.status_code})"
                                  f" wrote events {head + 1}..{chart.head}")
            check_worklists(self.ctx, chart, token)
        elif token:
            self.clerk.ok("/api/v1/worklists/admitted", headers={HEADER: token})
        check_dead_letters(self.ctx)

    def pick(self, data: st.DataObject, *, admitted: bool = False) -> Chart:
        """A patient; ``admitted``: an admitted one if there is any (orders need a stay)."""
        charts = list(self.charts.values())
        return choose(data, [c for c in charts if c.admission] if admitted and any(
            c.admission for c in charts) else charts, "patient")

    def body(self, data: st.DataObject, method: str, path: str,
             realistic_body: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
        return data.draw(blended(self.ctx.bodies.of(method, path), realistic_body), label="body")

    def if_match(self, data: st.DataObject, current: str | None, *older: str) -> str | None:
        """Mostly the version just read; sometimes none, or one that went stale."""
        choices: list[str | None] = [current, current, current, None, *older[-2:-1]]
        return data.draw(st.sampled_from(choices), label="If-Match")

    def refused_if_stale(self, answer: Any, sent: str | None, current: str | None) -> None:
        """A command sent with a version that is not the current one changes nothing."""
        if sent is not None and sent != current:
            self.clerk.expect(answer.status_code >= 400, f"If-Match {sent!r}, not the current "
                              f"{current!r}, answered {answer.status_code}")

    # -- registration and demographics --------------------------------------------------

    @initialize(data=st.data())
    def admitted_patient(self, data: st.DataObject) -> None:
        """Every example starts with one patient registered, admitted and given an order of
        each kind, from realistic values alone: Hypothesis enables a random subset of the
        rules in each example (swarm testing), and the order rules need orders to act on."""
        body = {**data.draw(realistic.patient(), label="patient"), "confirm_not_duplicate": True}
        answer = self.clerk.send("POST", "/api/v1/patients", body)
        if answer.status_code != 201:
            return self.after(None, answer)
        chart = Chart(answer.json()["id"], answer.json()["mrn"])
        self.charts[chart.id] = chart
        self.after(chart, answer)
        stay = data.draw(realistic.admission(data, self.ctx), label="admission")
        self.after(chart, self.clerk.send("POST", f"/api/v1/patients/{chart.id}/admissions",
                                          stay))
        for kind in ("medication", "imaging", "lab"):
            order = data.draw(realistic.order(kind, self.ctx.reference, self.ctx.tz),
                              label=kind)
            self.after(chart, self.doc.send("POST", f"/api/v1/patients/{chart.id}/orders",
                                            order))

    @rule(data=st.data())
    def register(self, data: st.DataObject) -> None:
        body = self.body(data, "POST", "/api/v1/patients", realistic.patient())
        # Keys never come from Hypothesis: a replayed draw would replay a stored answer.
        key = str(uuid.uuid4()) if data.draw(st.booleans(), label="Idempotency-Key") else None
        retry = data.draw(st.booleans(), label="retry")
        answer = self.clerk.send("POST", "/api/v1/patients", body,
                                 headers={"Idempotency-Key": key})
        if answer.status_code != 201:
            return self.after(None, answer)
        created = answer.json()
        chart = Chart(created["id"], created["mrn"])
        self.charts[chart.id] = chart
        if key and retry:
            again = self.clerk.send("POST", "/api/v1/patients", body,
                                    headers={"Idempotency-Key": key})
            self.clerk.expect(again.status_code == 201 and again.json()["id"] == chart.id,
                              "a retry with the same Idempotency-Key registered again")
        self.after(chart, answer)

    @precondition(lambda self: self.charts)
    @rule(data=st.data())
    def correct_demographics(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        body = self.body(data, "PUT", P, realistic.demographics(chart.patient))
        version = self.if_match(data, chart.etags[-1], *chart.etags)
        answer = self.clerk.send("PUT", f"/api/v1/patients/{chart.id}", body,
                                 headers={"If-Match": version})
        self.refused_if_stale(answer, version, chart.etags[-1])
        if version is None:
            self.clerk.expect(answer.status_code >= 400, "a PUT without If-Match "
                              f"answered {answer.status_code}")
        same = all(chart.patient.get(k) == v for k, v in body.items())
        self.after(chart, answer, writes=not same)

    # -- admission, transfer, discharge, beds -------------------------------------------

    @precondition(lambda self: self.charts)
    @rule(data=st.data())
    def admit(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        body = self.body(data, "POST", f"{P}/admissions",
                         realistic.admission(data, self.ctx))
        version = self.if_match(data, chart.etags[-1], *chart.etags)
        answer = self.clerk.send("POST", f"/api/v1/patients/{chart.id}/admissions", body,
                                 headers={"Idempotency-Key": str(uuid.uuid4()),
                                          "If-Match": version})
        self.refused_if_stale(answer, version, chart.etags[-1])
        self.after(chart, answer)

    @precondition(lambda self: any(c.admission for c in self.charts.values()))
    @rule(data=st.data())
    def transfer(self, data: st.DataObject) -> None:
        chart = self.pick(data, admitted=True)
        body = self.body(data, "POST", f"{P}/transfer", realistic.transfer(data, self.ctx))
        stay = chart.admission or {}
        answer = self.clerk.send("POST", f"/api/v1/patients/{chart.id}/transfer", body,
                                 headers={"If-Match": self.if_match(data, stay.get("etag"))})
        self.after(chart, answer)

    @precondition(lambda self: any(c.admission for c in self.charts.values()))
    @rule(data=st.data())
    def discharge(self, data: st.DataObject) -> None:
        chart = self.pick(data, admitted=True)
        realistic_body = st.fixed_dictionaries(
            {"disposition": st.sampled_from(DISPOSITIONS)},
            optional={"note": text(300),
                      "cancel_orders": st.just(sorted(chart.active_orders()))})
        body = self.body(data, "POST", f"{P}/discharge", realistic_body)
        stay = chart.admission or {}
        answer = self.clerk.send("POST", f"/api/v1/patients/{chart.id}/discharge", body,
                                 headers={"If-Match": self.if_match(data, stay.get("etag"))})
        self.after(chart, answer)

    @precondition(lambda self: self.charts)
    @rule(data=st.data())
    def clean_bed(self, data: st.DataObject) -> None:
        cleaning = [(code, bed["code"]) for code in self.ctx.reference.wards
                    for bed in self.doc.ok(f"/api/v1/wards/{code}/beds")
                    if bed["state"] == "cleaning"]
        any_bed = [(code, b) for code, w in self.ctx.reference.wards.items() for b in w["beds"]]
        ward, bed = choose(data, cleaning or any_bed, "bed")
        role = data.draw(st.sampled_from(["nurse", "clerk"]), label="role")
        answer = self.ctx.apis[role].send("POST", f"/api/v1/wards/{ward}/beds/{bed}/clean")
        self.after(None, answer)

    # -- allergies ------------------------------------------------------------------------

    @precondition(lambda self: self.charts)
    @rule(data=st.data())
    def add_allergy(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        realistic_body = st.fixed_dictionaries(
            {"severity": st.sampled_from(SEVERITIES)},
            optional={"criticality": st.sampled_from(CRITICALITIES), "reaction": text(200)},
        ).flatmap(lambda b: st.one_of(
            st.sampled_from(self.ctx.reference.allergens).map(
                lambda code: {**b, "allergen_code": code}),
            text(100, min_size=1).map(lambda s: {**b, "substance": s})))
        body = self.body(data, "POST", f"{P}/allergies", realistic_body)
        api = self.ctx.apis[data.draw(st.sampled_from(["clinician", "nurse"]), label="role")]
        version = self.if_match(data, chart.etags[-1], *chart.etags)
        answer = api.send("POST", f"/api/v1/patients/{chart.id}/allergies", body,
                          headers={"If-Match": version})
        self.refused_if_stale(answer, version, chart.etags[-1])
        self.after(chart, answer)

    @precondition(lambda self: self.charts)
    @rule(data=st.data())
    def no_known_allergies(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        answer = self.doc.send("POST", f"/api/v1/patients/{chart.id}/allergies/none",
                               headers={"If-Match": self.if_match(data, chart.etags[-1])})
        self.after(chart, answer)

    @precondition(lambda self: any(c.active_allergies() for c in self.charts.values()))
    @rule(data=st.data())
    def remove_allergy(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        allergy = choose(data, chart.active_allergies() or ["no-such-allergy"], "allergy")
        query = data.draw(st.fixed_dictionaries(
            {"reason": st.sampled_from(REMOVAL_REASONS)}, optional={"detail": text(100)}),
            label="query")
        answer = self.doc.send("DELETE", f"/api/v1/patients/{chart.id}/allergies/{allergy}",
                               query=query, headers={"If-Match": chart.etags[-1]})
        self.after(chart, answer)

    # -- orders ---------------------------------------------------------------------------

    @precondition(lambda self: self.charts)
    @rule(data=st.data(), kind=st.sampled_from(["medication", "imaging", "lab"]))
    def place_order(self, data: st.DataObject, kind: str) -> None:
        chart = self.pick(data, admitted=True)
        body = self.body(data, "POST", f"{P}/orders",
                         realistic.order(kind, self.ctx.reference, self.ctx.tz))
        path = f"/api/v1/patients/{chart.id}/orders"
        version = self.if_match(data, chart.etags[-1], *chart.etags)
        answer = self.doc.send("POST", path, body, headers={"Idempotency-Key": str(uuid.uuid4()),
                                                            "If-Match": version})
        self.refused_if_stale(answer, version, chart.etags[-1])
        conflicts = answer.json().get("conflicts") if answer.status_code == 409 else None
        reason = data.draw(text(100, min_size=1), label="override reason")
        if conflicts and data.draw(st.booleans(), label="override"):
            self.after(chart, answer)
            overrides = {c["type"]: reason for c in conflicts}
            answer = self.doc.send("POST", path, {**body, "overrides": overrides})
        self.after(chart, answer)

    @precondition(lambda self: any(c.orders for c in self.charts.values()))
    @rule(data=st.data())
    def progress_order(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        order = realistic.pick_order(data, chart, ())
        action = data.draw(realistic.action_for(order), label="action")
        body = self.body(data, "POST", f"{P}/orders/{{order_id}}/{{action}}",
                         realistic.action_body(action, order, self.ctx.reference))
        role = "clinician" if action == "cancel" else data.draw(
            st.sampled_from(["nurse", "nurse", "clinician"]), label="role")
        answer = self.ctx.apis[role].send(
            "POST", f"/api/v1/patients/{chart.id}/orders/{order['order_id']}/{action}", body,
            headers={"If-Match": self.if_match(data, order["etag"])})
        self.after(chart, answer)

    @precondition(lambda self: any(c.orders for c in self.charts.values()))
    @rule(data=st.data())
    def assign_order(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        order = realistic.pick_order(data, chart, ())
        assignee = data.draw(st.sampled_from([self.ctx.nurse_username, None]), label="assignee")
        answer = self.nurse.send(
            "PUT", f"/api/v1/patients/{chart.id}/orders/{order['order_id']}/assignee",
            {"assignee": assignee}, headers={"If-Match": order["etag"]})
        self.after(chart, answer, writes=order.get("assignee_id") != (
            self.ctx.nurse_id if assignee else None))

    @precondition(lambda self: any(c.orders for c in self.charts.values()))
    @rule(data=st.data())
    def administer(self, data: st.DataObject) -> None:
        chart = self.pick(data)
        order = realistic.pick_order(data, chart, ("medication",))
        body = self.body(data, "POST", f"{P}/orders/{{order_id}}/administrations",
                         realistic.administration(order, chart.mar, self.ctx.tz,
                                                  NOT_GIVEN_REASONS))
        answer = self.nurse.send(
            "POST", f"/api/v1/patients/{chart.id}/orders/{order['order_id']}/administrations",
            body, headers={"If-Match": self.if_match(data, order["etag"]),
                           "Idempotency-Key": str(uuid.uuid4())})
        self.after(chart, answer)

    @precondition(lambda self: any(o.get("results") for c in self.charts.values()
                                   for o in c.orders.values()))
    @rule(data=st.data())
    def acknowledge(self, data: st.DataObject) -> None:
        charts = [c for c in self.charts.values() if any(o.get("results")
                                                        for o in c.orders.values())]
        chart = choose(data, charts, "patient")
        order = realistic.pick_order(data, chart, ("lab", "imaging"), resulted=True)
        answer = self.doc.send(
            "POST", f"/api/v1/patients/{chart.id}/orders/{order['order_id']}/acknowledge")
        self.after(chart, answer)

    def teardown(self) -> None:
        settle_check_and_rebuild(self.ctx)


def _user(username: str, role: str) -> User:
    user = User.objects.create_user(username, password=TEST_PASSWORD)
    user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def machine_context(stack: WorklistStack, receiver: Any, settings: Any  # noqa: F811
                    ) -> Iterator[Context]:
    """This process's store handles on the stack's store, the light worker (relay thread
    inside) running, every patient event subscribed to a receiver, one user per role."""
    from hisadmin.core.roles import ensure_groups

    config = dict(settings.DOCUMENT_STORE)
    config.update(backend="embedded", path=str(stack.store_path))
    settings.DOCUMENT_STORE = config
    settings.CELERY_BROKER_URL = stack.redis.url
    settings.TIME_ZONE = settings.HOSPITAL_TIME_ZONE = HOSPITAL_ZONE
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    handles.reset_handles()
    store = handles.get_store()
    with mock.patch.dict(os.environ, RECEIVER_REACHABLE):  # named here as for the worker
        webhook_use_cases.subscribe(webhook_use_cases.Subscribe(
            url=receiver.url("/ok"), events=[t.value for t in PATIENT_EVENT_TYPES]), store,
            actor=Actor(id="1", username="admin", roles=("admin",)))
    proc = start_light_worker({**stack.env, "TIME_ZONE": HOSPITAL_ZONE,
                               "HOSPITAL_TIME_ZONE": HOSPITAL_ZONE, "WEBHOOK_TIMEOUT": "10",
                               "CELERY_SKIP_CHECKS": "1", **RECEIVER_REACHABLE},
                              stack.base / "machine.log", "--relay-lease-ttl", "2")
    stack.procs.append(proc)
    wait_for(lambda: relay_owner(stack, "machine"), 30, what="the worker's relay thread")

    ensure_groups()
    transcript = Transcript()
    apis, pages = {}, {}
    for role in ("clerk", "clinician", "nurse"):
        user = _user(f"machine-{role}", role)
        _, raw = ApiToken.issue(user, "state machine")
        apis[role] = Api(role, Client(HTTP_AUTHORIZATION=f"Bearer {raw}"), transcript)
        if role != "clerk":
            browser = Client()
            browser.force_login(user)
            pages[role] = Pages(role, browser, transcript)
    nurse = User.objects.get(username="machine-nurse")
    yield Context(store=store, apis=apis, pages=pages,
                  reference=_reference(apis["clinician"], store),
                  bodies=Bodies(apis["clinician"].ok("/api/v1/openapi.json")),
                  tz=ZoneInfo(HOSPITAL_ZONE), nurse_id=str(nurse.pk),
                  nurse_username=nurse.username, transcript=transcript)
    handles.reset_handles()


def _reference(api: Api, store: Any) -> Reference:
    codes = {t: sorted(stored_reference.all_of(store, t))
             for t in ("Frequency", "Modality", "BodyPart")}
    return Reference(
        medications=api.ok("/api/v1/reference/medications"),
        allergens=[a["code"] for a in api.ok("/api/v1/reference/allergens")],
        lab_tests={t["code"]: t["analytes"] for t in api.ok("/api/v1/reference/lab-tests")},
        wards={w["code"]: {"department": w["department"],
                           "beds": [b["code"] for b in api.ok(f"/api/v1/wards/{w['code']}/beds")]}
               for w in api.ok("/api/v1/wards")},
        frequencies=codes["Frequency"], modalities=codes["Modality"],
        body_parts=codes["BodyPart"])


# The examples in two tests of half as many each: two of the suite's workers run them side
# by side, and neither comes near the per-test timeout on a busy machine (one test of ten
# examples took 281 s of a 300 s limit once).
HALVES = 2


@pytest.mark.parametrize("half", range(HALVES))
def test_api_commands_in_any_order_keep_every_read_and_worklist_right(
        machine_context: Context, half: int) -> None:
    examples = settings(PROFILE, max_examples=max(1, PROFILE.max_examples // HALVES))
    try:
        run_state_machine_as_test(lambda: ApiMachine(machine_context), settings=examples)
    except Flaky as replayed:
        # Hypothesis replays a failing example to report it, but not the store, the clock
        # or the worker around it: the replay may go another way. The first failure stands.
        failure = machine_context.transcript.first_failure
        if failure is None:
            raise
        raise AssertionError(failure) from replayed
