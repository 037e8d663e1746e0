"""The home page's content, made for the user's roles.

A clerk, a clinician and a nurse each see their worklists, the wards (with the admitted
patients, the active orders and the bed board of each), finding a patient, and registering one
if they may; an administrator sees reference data, dead letters, users and API tokens. Nothing
is shown that the user's roles do not allow, and there is no empty scaffolding.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from hisadmin.core import policy
from hisadmin.core.store import get_store
from patients.persistence import reference

# The bed board's page name, registered by the ward pages; the home page links to it once it
# exists (reverse fails before that, and the link is left out).
BED_BOARD = "admin:bed_board"


def _url(name: str, *args: str, query: dict[str, str] | None = None) -> str | None:
    try:
        url = reverse(name, args=args)
    except NoReverseMatch:
        return None
    return url + ("?" + urlencode(query) if query else "")


def wards(request: HttpRequest) -> list[dict[str, Any]]:
    """Departments with their wards (active reference data, by name), each ward with the
    links this user may follow: admitted patients, active orders, bed board."""
    user = request.user
    if not policy.allows(user, "read_worklists"):
        return []
    store = get_store()
    departments = reference.choices(store, "Department")
    by_department: dict[str, list[dict[str, Any]]] = {code: [] for code, _ in departments}
    for ward in sorted(reference.active(store, "Ward"), key=lambda w: w.get("name", "")):
        department = ward.get("departmentId", "")
        if department not in by_department:
            continue  # a ward of a retired department is not offered
        code = ward["code"]
        links = [
            (
                "Patients",
                _url("admin:worklist_admitted", query={"department": department, "ward": code}),
            )
        ]
        links.append(("Beds", _url(BED_BOARD, code)))
        by_department[department].append(
            {
                "code": code,
                "name": ward.get("name") or code,
                "beds": len(ward.get("beds", ())),
                "links": [(label, url) for label, url in links if url],
            }
        )
    orders = policy.allows(user, "read_order_worklists")
    return [
        {
            "code": code,
            "name": name,
            "wards": by_department[code],
            "orders_url": _url("admin:worklist_orders", query={"department": code})
            if orders
            else None,
        }
        for code, name in departments
        if by_department[code]
    ]


# Third-party apps name themselves after their package ("Otp_Totp", "Axes"): the admins read
# what the section holds instead.
APP_NAMES = {"otp_totp": "Two-step login devices", "axes": "Login lockouts"}


def _named(section: dict[str, Any]) -> dict[str, Any]:
    """``section`` under its name in words (:data:`APP_NAMES`) when it has one."""
    name = APP_NAMES.get(section.get("app_label", ""))
    return {**section, "name": name} if name else section


def home_context(request: HttpRequest, app_list: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``templates/admin/index.html`` shows to ``request.user``."""
    user = request.user
    sections = {s["name"]: _named(s) for s in app_list}
    worklists = sections.pop("Worklists", None)
    patients = sections.pop("Patients", None)
    ward_pages = sections.pop("Wards", None)
    return {
        "worklists": worklists["models"] if worklists else [],
        "departments": wards(request),
        "can_find": policy.allows(user, "read"),
        "find_url": _url("admin:patient_find"),
        "patients_pages": patients["models"] if patients else [],
        "ward_pages": ward_pages["models"] if ward_pages else [],
        "other_sections": list(sections.values()),  # administration, users, API tokens
    }
