"""What a chart says of merges: on a survivor, the records merged into it that records
staff may still undo (within a day); read only for records staff, so other users' charts
cost no extra read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cosmos_backend.uow import UnitOfWork
from hisadmin.core import policy
from hisadmin.core.store import get_store
from patients.domain.merges import SagaState, undo_deadline
from patients.persistence import merges


def undoable(patient_id: str, user: Any) -> list[dict[str, Any]]:
    """The merges into ``patient_id`` that ``user`` may still undo: each the retired
    record (``retired_id``, ``retired_mrn``) and until when (``until``)."""
    if not policy.allows(user, "merge_records"):
        return []
    store = get_store()
    now, found = datetime.now(UTC), []
    for r in merges.receipts(store, patient_id):
        if r.get("state") != "merged":
            continue
        saga = merges.load_saga(UnitOfWork(store), r["retiredId"], r["mergeId"]) or {}
        if saga.get("state") != SagaState.MERGED or not saga.get("mergedAt"):
            continue
        until = undo_deadline(saga["mergedAt"])
        if now <= until:
            found.append({"retired_id": r["retiredId"], "retired_mrn": r["retiredMrn"],
                          "until": until})
    return found
