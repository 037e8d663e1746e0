"""View partitions and the composite indexes their queries need.

``V_Admitted_<departmentId>`` — one row per admitted patient of the department (bounded by its
beds). ``V_Track_<patientId>`` — per patient: the last applied sequence number and the rows it
owns. ``V_DeadLetters`` — projection tasks that failed for good.
"""

from __future__ import annotations

from cosmos_backend import keys


def _idx(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"path": p, "order": o} for p, o in pairs]


A, D = "ascending", "descending"
SORTS = {"name": "/QueryName", "admitted": "/QueryAdmittedAt", "ward": "/QueryWard",
         "mrn": "/QueryMrn", "bed": "/QueryBed"}

COMPOSITE_INDEXES: list[list[dict[str, str]]] = []
for _path in SORTS.values():
    for _order in (A, D):
        COMPOSITE_INDEXES.append(_idx((_path, _order), ("/id", A)))
        if _path != "/QueryWard":  # a path may appear once per composite index
            COMPOSITE_INDEXES.append(_idx(("/QueryWard", A), (_path, _order), ("/id", A)))


def view_pk(view: str, bucket: str) -> str:
    return keys.view(view, bucket)


def tracker_pk(patient_id: str) -> str:
    return keys.view("Track", patient_id)


TRACKER_ID = "tracker"
DEAD_LETTERS_PK = keys.view("DeadLetters")
