"""Words for codes on the patient pages: the labels defined next to the codes in
``patients.domain``, reference data by name, and users by their full name.

Pages add these to what they show (``*_label`` / ``*_name`` keys beside the stored codes), so
templates print words and keep the codes for ``data-`` attributes and links only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model

from cosmos_backend.store import DocumentStore
from patients.domain import mar
from patients.domain.checks import CHECK_LABELS
from patients.domain.mar import NOT_GIVEN_REASONS, entry_status
from patients.domain.mar import STATUS_LABELS as DOSE_STATUS_LABELS
from patients.domain.orders import (
    ACTIVE,
    KIND_LABELS,
    STATUS_LABELS,
    URGENCY_LABELS,
)
from patients.domain.records import (
    ADMISSION_STATUS_LABELS,
    CRITICALITY_LABELS,
    DISPOSITION_LABELS,
    SEVERITY_LABELS,
    SEX_LABELS,
)
from patients.persistence import reference

# The reference types an order or an admission names by code.
NAMED_TYPES = (
    "Ward",
    "Department",
    "Route",
    "Frequency",
    "Unit",
    "Medication",
    "Modality",
    "BodyPart",
    "LabTest",
)


def label(labels: Mapping[str, str], code: str | None) -> str:
    """The label of ``code``; a code without one (written by an older or newer version) is
    shown in words rather than raw: ``in_progress``, ``care-home`` and ``BedCleaned`` become
    "In progress", "Care home" and "Bed cleaned"; None → ""."""
    if not code:
        return ""
    if labels.get(code):
        return labels[code]
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(code)).replace("_", " ").replace("-", " ")
    return words.lower().capitalize()


@dataclass(frozen=True)
class Names:
    """Reference data names by type and code, and users' full names by username."""

    reference: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    people: Mapping[str, str] = field(default_factory=dict)

    def of(self, type_name: str, code: str | None) -> str:
        """The name of a reference entry; its code when the entry is unknown."""
        if not code:
            return ""
        return self.reference.get(type_name, {}).get(code) or code

    def person(self, username: str | None) -> str:
        """A user's full name; the username when the user has none (or is gone)."""
        if not username:
            return ""
        return self.people.get(username) or username


def reference_names(store: DocumentStore) -> dict[str, dict[str, str]]:
    """``{type: {code: name}}`` for the types pages name (from the per-process cache)."""
    return {
        t: {code: e.get("name") or code for code, e in reference.all_of(store, t).items()}
        for t in NAMED_TYPES
    }


def full_names(usernames: Iterable[str | None]) -> dict[str, str]:
    """``{username: full name}`` of the users named (one query); users without a full name
    are left out, so :meth:`Names.person` shows their username."""
    wanted = {u for u in usernames if u}
    if not wanted:
        return {}
    users = get_user_model().objects.filter(username__in=wanted)
    return {u.get_username(): u.get_full_name() for u in users if u.get_full_name()}


def names(store: DocumentStore, usernames: Iterable[str | None] = ()) -> Names:
    return Names(reference_names(store), full_names(usernames))


def order_usernames(order: Mapping[str, Any]) -> list[str]:
    """The usernames an order's record names (overrides, administrations, results)."""
    results = order.get("results") or {}
    return [
        *(o.get("by") for o in order.get("overrides") or []),
        *(a.get("by") for a in order.get("administrations") or []),
        *(o.get("by") for a in order.get("administrations") or [] for o in dose_overrides(a)),
        results.get("resultedBy"),
        results.get("acknowledgedBy"),
    ]


def label_order(order: dict[str, Any], n: Names) -> dict[str, Any]:
    """Add words to an order (as stored): status, urgency, kind, the reference entries it
    names, its overrides' checks and who overrode, its administrations. Returns ``order``."""
    order["status_label"] = label(STATUS_LABELS, order.get("status"))
    order["urgency_label"] = label(URGENCY_LABELS, order.get("urgency"))
    order["kind_label"] = label(KIND_LABELS, order.get("kind"))
    order["is_active"] = order.get("status") in ACTIVE
    order["department_name"] = n.of("Department", order.get("departmentId"))
    order["ward_name"] = n.of("Ward", order.get("wardId"))
    for key, type_name in (
        ("route", "Route"),
        ("frequency", "Frequency"),
        ("unit", "Unit"),
        ("modality", "Modality"),
        ("bodyPart", "BodyPart"),
    ):
        if order.get(key):
            order[f"{key}_name"] = n.of(type_name, order[key])
    if order.get("kind") == "imaging" and order.get("modality_name") and order.get("bodyPart"):
        # placed before descriptions named the modality ("CR Chest"): said by the names
        order["description"] = f"{order['modality_name']} — {order['bodyPart_name']}"
    order["overrides_shown"] = [label_override(o, n) for o in order.get("overrides") or []]
    # Stored fields no reader can interpret (older data, restores): named, never a 500.
    order["dataErrors"] = mar.data_errors(order)
    order["administrations_shown"] = [
        label_administration(a, n) for a in order.get("administrations") or []
    ]
    results = order.get("results")
    if isinstance(results, dict):
        results["resultedByName"] = results.get("resultedByName") or n.person(
            results.get("resultedBy"))
        results["acknowledgedByName"] = n.person(results.get("acknowledgedBy"))
    return order


def label_override(override: Mapping[str, Any], n: Names) -> dict[str, Any]:
    return {
        **override,
        "check_label": label(CHECK_LABELS, override.get("check")),
        "by_name": n.person(override.get("by")),
    }


def dose_overrides(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every guard a dose overrode (``overrides``; an entry from before them has only the
    one ``override``, a PRN interval)."""
    return list(entry.get("overrides") or ([entry["override"]] if entry.get("override") else []))


def label_administration(entry: Mapping[str, Any], n: Names) -> dict[str, Any]:
    """A dose given or not given, in words: its status, reason, unit, who recorded it and
    each guard it overrode, by whom and why (``overrides_shown``)."""
    status = entry_status(dict(entry))
    shown = [label_override(o, n) for o in dose_overrides(entry)]
    return {
        **entry,
        "status": status,
        "status_label": label(DOSE_STATUS_LABELS, status),
        "reason_label": label(NOT_GIVEN_REASONS, entry.get("reason")),
        "unit_name": n.of("Unit", entry.get("unit")),
        "by_name": n.person(entry.get("by")),
        "overrides_shown": shown,
        "override_shown": shown[0] if shown else None,
    }


def label_admission(admission: dict[str, Any], n: Names) -> dict[str, Any]:
    admission["status_label"] = label(ADMISSION_STATUS_LABELS, admission.get("status"))
    admission["department_name"] = n.of("Department", admission.get("departmentId"))
    admission["ward_name"] = n.of("Ward", admission.get("wardId"))
    admission["disposition_label"] = label(DISPOSITION_LABELS, admission.get("disposition"))
    return admission


def label_allergy(allergy: dict[str, Any]) -> dict[str, Any]:
    allergy["severity_label"] = label(SEVERITY_LABELS, allergy.get("severity"))
    allergy["criticality_label"] = label(CRITICALITY_LABELS, allergy.get("criticality"))
    return allergy


def sex_label(code: str | None) -> str:
    return label(SEX_LABELS, code)
