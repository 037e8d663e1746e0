"""Partition-key rules: every key is a prefix plus a name, so categories never collide.

| prefix | holds | example |
|--------|-------|---------|
| ``P_`` | one patient's aggregates and events | ``P_5f0c...`` |
| ``U_`` | one user's documents | ``U_42`` |
| ``R_`` | one type of reference data | ``R_Department`` |
| ``V_`` | one bucket of a materialized view | ``V_AdmittedPatients_CARD`` |
| ``M_`` | one unique-key reservation (e.g. an MRN) | ``M_MRN_000123`` |
"""

from __future__ import annotations

from cosmos_backend.store import validate_id

PATIENT = "P_"
USER = "U_"
REFERENCE = "R_"
VIEW = "V_"
UNIQUE = "M_"
PREFIXES = (PATIENT, USER, REFERENCE, VIEW, UNIQUE)


def _key(prefix: str, name: str) -> str:
    validate_id(str(name))
    return f"{prefix}{name}"


def patient(patient_id: str) -> str:
    return _key(PATIENT, patient_id)


def user(user_id: str | int) -> str:
    return _key(USER, str(user_id))


def reference(type_name: str) -> str:
    return _key(REFERENCE, type_name)


def view(view_name: str, bucket: str | None = None) -> str:
    return _key(VIEW, view_name if bucket is None else f"{view_name}_{bucket}")


def unique(kind: str, value: str) -> str:
    return _key(UNIQUE, f"{kind}_{value}")


def category(pk: str) -> str:
    """The prefix of ``pk``; raises ``ValueError`` for a key outside the scheme."""
    for prefix in PREFIXES:
        if pk.startswith(prefix):
            return prefix
    raise ValueError(f"partition key {pk!r} has no known prefix")


def suffix(pk: str) -> str:
    return pk[len(category(pk)) :]
