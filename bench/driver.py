"""The client workload, identical for the product and the baseline (same paths, same bodies).

A *client* is anything with ``call(method, path, body=None, token=None) -> (status, json)``:
an HTTP session for the timed runs, Django's test client for the in-process cost counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bench import workload

API = "/api/v1"


class Client(Protocol):
    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             token: str | None = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]: ...


class Failed(RuntimeError):
    pass


@dataclass
class Tokens:
    admin: str  # superuser: every role (registration, orders, nursing)
    nurse: str  # whose My Orders worklist is read


@dataclass
class Timings:
    by_command: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, ms: float) -> None:
        self.by_command.setdefault(name, []).append(ms)


def _ok(status: int, body: Any, what: str) -> Any:
    if status >= 300:
        raise Failed(f"{what}: HTTP {status} {str(body)[:300]}")
    return body


def turn_over(client: Client, tokens: Tokens, bed: tuple[str, str, str], *,
              wait_s: float = 60.0) -> None:
    """Untimed, before a stay takes ``bed`` again: once its last patient's leaving is recorded
    (the worker sets the bed to cleaning), the ward's nurse marks it clean. The wait is as
    long as the worker is behind: in the ward mix, seconds. A system without
    the beds API (the baseline: not 200) has nothing to turn over."""
    _, ward, code = bed
    deadline = time.monotonic() + wait_s
    while True:
        status, beds = client.call("GET", f"{API}/wards/{ward}/beds", None, tokens.admin)
        if status != 200:
            return
        state = next((b["state"] for b in beds if b["code"] == code), "free")
        if state == "cleaning":
            client.call("POST", f"{API}/wards/{ward}/beds/{code}/clean", None, tokens.admin)
            return
        if state == "free" or time.monotonic() > deadline:
            return  # still occupied after the wait: the admission says why
        time.sleep(0.05)


POSSIBLE_DUPLICATE = "/api/v1/problems/possible-duplicate"


def register(client: Client, tokens: Tokens, body: dict[str, Any]) -> Any:
    """Register a new patient as a clerk does: when the product answers that a patient of the
    same name and birth date is already registered (at 100,000 patients the workload's new
    names meet a seeded one now and then), the clerk looks and confirms it is another person.
    Both calls are the registration's time. The baseline has no such check."""
    status, out = client.call("POST", f"{API}/patients", body, tokens.admin)
    if status == 409 and isinstance(out, dict) and out.get("type") == POSSIBLE_DUPLICATE:
        status, out = client.call("POST", f"{API}/patients",
                                  {**body, "confirm_not_duplicate": True}, tokens.admin)
    return _ok(status, out, "register")


def iteration(client: Client, tokens: Tokens, i: int, bed: tuple[str, str, str],
              timings: Timings | None = None,
              hook: Callable[[str], None] | None = None) -> dict[str, Any]:
    """One short stay, nine commands: register, admit, no known allergies (a medication is
    ordered once the allergies are asked), two orders, assign, ready, administer (the first
    dose, given now), discharge. ``hook(name)`` runs after each command (cost counters)."""
    dept, ward, bed_code = bed

    def timed(name: str, send: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return send()
        finally:
            if timings is not None:
                timings.add(name, (time.perf_counter() - start) * 1000)
            if hook is not None:
                hook(name)

    def cmd(name: str, method: str, path: str, body: dict[str, Any],
            etag: str | None = None) -> Any:
        status, out = timed(name, lambda: client.call(method, API + path, body, tokens.admin,
                                                      {"If-Match": etag} if etag else None))
        return _ok(status, out, name)

    patient = timed("register", lambda: register(client, tokens, workload.identity("stay", i)))
    pid = patient["id"]
    cmd("admit", "POST", f"/patients/{pid}/admissions", {
        "department_id": dept, "ward_id": ward, "bed": bed_code, "reason": "Chest pain"})
    cmd("allergies", "POST", f"/patients/{pid}/allergies/none", {})
    med = cmd("place_order", "POST", f"/patients/{pid}/orders", {
        "kind": "medication", "medication_code": "PARA", "dose": "1000", "unit": "mg",
        "route": "PO", "frequency": "Q6H", "first_dose": "now"})
    cmd("place_order", "POST", f"/patients/{pid}/orders", {
        "kind": "lab", "test_code": "TROP", "urgency": "stat"})
    med_id = med["order_id"]
    cmd("assign", "PUT", f"/patients/{pid}/orders/{med_id}/assignee", {"assignee": "nurse"},
        med["etag"])  # an edit names the version it changes
    cmd("progress", "POST", f"/patients/{pid}/orders/{med_id}/ready", {"reason": ""})
    cmd("administer", "POST", f"/patients/{pid}/orders/{med_id}/administrations", {
        "dose": "1000", "unit": "mg"})
    cmd("discharge", "POST", f"/patients/{pid}/discharge", {"disposition": "home"})
    return {"id": pid, "mrn": patient["mrn"], "department": dept, "ward": ward}


def read_paths(departments: list[str], wards: dict[str, list[str]], prefixes: list[str]
               ) -> dict[str, list[str]]:
    """The worklist pages clinicians poll, by worklist (first 50-row page each)."""
    out: dict[str, list[str]] = {"admitted": [], "admitted_ward": [], "active_orders": [],
                                 "my_orders": [], "name_search": []}
    for dept in departments:
        out["admitted"].append(f"{API}/worklists/admitted?department={dept}&page_size=50")
        for ward in wards[dept]:
            out["admitted_ward"].append(
                f"{API}/worklists/admitted?department={dept}&ward={ward}&page_size=50")
        out["active_orders"].append(f"{API}/worklists/orders?department={dept}&page_size=50")
    out["my_orders"].append(f"{API}/worklists/my-orders?page_size=50")
    for prefix in prefixes:
        out["name_search"].append(f"{API}/worklists/patients?q={prefix}&page_size=50")
    return out


def read_once(client: Client, tokens: Tokens, worklist: str, path: str) -> tuple[float, int]:
    token = tokens.nurse if worklist == "my_orders" else tokens.admin
    start = time.perf_counter()
    status, body = client.call("GET", path, None, token)
    ms = (time.perf_counter() - start) * 1000
    _ok(status, body, worklist)
    return ms, len(body.get("items", []))
