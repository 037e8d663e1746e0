"""Every code the patient pages show has its label, defined once next to the code."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from patients.domain import mar
from patients.domain.checks import CHECK_LABELS, CHECK_TYPES
from patients.domain.events import EVENT_LABELS, EventType
from patients.domain.orders import (
    KIND_LABELS,
    KINDS,
    STATUS_LABELS,
    URGENCY_LABELS,
    OrderStatus,
    Urgency,
)
from patients.domain.records import (
    ADMISSION_STATUS_LABELS,
    ALLERGY_STATUS_LABELS,
    CRITICALITIES,
    CRITICALITY_LABELS,
    DISPOSITION_LABELS,
    DISPOSITIONS,
    REMOVAL_LABELS,
    REMOVAL_REASONS,
    SEVERITIES,
    SEVERITY_LABELS,
    SEX_LABELS,
    SEXES,
    AdmissionStatus,
    AllergyStatus,
)

CODES_AND_LABELS: list[tuple[str, Iterable[str], Mapping[str, str]]] = [
    ("event", EventType, EVENT_LABELS),
    ("order status", OrderStatus, STATUS_LABELS),
    ("urgency", Urgency, URGENCY_LABELS),
    ("order kind", KINDS, KIND_LABELS),
    ("check", CHECK_TYPES, CHECK_LABELS),
    ("dose status", mar.SLOT_STATUSES, mar.STATUS_LABELS),
    (
        "reason not given",
        ("refused", "held", "unavailable", "patient-absent", "other"),
        mar.NOT_GIVEN_REASONS,
    ),
    ("admission status", AdmissionStatus, ADMISSION_STATUS_LABELS),
    ("disposition", DISPOSITIONS, DISPOSITION_LABELS),
    ("allergy status", AllergyStatus, ALLERGY_STATUS_LABELS),
    ("sex", SEXES, SEX_LABELS),
    ("severity", SEVERITIES, SEVERITY_LABELS),
    ("criticality", CRITICALITIES, CRITICALITY_LABELS),
    ("removal reason", REMOVAL_REASONS, REMOVAL_LABELS),
]


@pytest.mark.parametrize(
    ("what", "codes", "labels"), CODES_AND_LABELS, ids=[c[0] for c in CODES_AND_LABELS]
)
def test_every_code_has_a_label_in_words(what, codes, labels) -> None:
    for code in codes:
        said = labels.get(code)
        assert said, f"the {what} {code!r} has no label"
        assert said != code and "_" not in said, f"the {what} {code!r} is labelled {said!r}"
