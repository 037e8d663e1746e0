"""Domain errors. Each carries the HTTP status and a title the edges use to report it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any


class DomainError(Exception):
    http_status = 409
    title = "Not possible"
    field: str | None = None  # the form field the error belongs to, when there is one
    # The problem type's last segment (``/api/v1/problems/<problem_type>``); None: about:blank.
    problem_type: str | None = None

    def __init__(self, message: str, *, field: str | None = None,
                 problem_type: str | None = None, extra: dict[str, Any] | None = None,
                 at: datetime | None = None) -> None:
        # A message that names an instant says "{at}" and gives it as ``at``: the message is
        # then ISO 8601 in UTC (the API's), and :meth:`saying` words it for a page.
        self.template, self.at = message, at
        super().__init__(message.format(at=at.astimezone(UTC).isoformat())
                         if at is not None else message)
        if field is not None:
            self.field = field
        if problem_type is not None:
            self.problem_type = problem_type
        self.extra: dict[str, Any] = dict(extra or {})  # more members of the problem document

    def saying(self, when: Callable[[datetime], str]) -> str:
        """The message with its instant (if any) said by ``when``, such as the hospital's
        time in words on a page."""
        at = getattr(self, "at", None)
        return str(self) if at is None else self.template.format(at=when(at))


class InvalidInput(DomainError):
    http_status = 422
    title = "Invalid input"


class UnknownPatient(DomainError):
    http_status = 404
    title = "Unknown patient"


class UnknownReference(DomainError):
    http_status = 422
    title = "Unknown reference data"


class DuplicateMrn(DomainError):
    http_status = 409
    title = "MRN already in use"
    field = "mrn"


class MrnBeingRegistered(DomainError):
    http_status = 409
    title = "MRN being registered"
    field = "mrn"


class PatientAlreadyAdmitted(DomainError):
    http_status = 409
    title = "Patient already admitted"


class NotAdmitted(DomainError):
    http_status = 409
    title = "Patient not admitted"


class BedOccupied(DomainError):
    http_status = 409
    title = "Bed occupied"
    field = "bed"


class BedBeingCleaned(DomainError):
    """The bed's last patient left and nobody has marked it clean yet."""

    http_status = 409
    title = "Bed being cleaned"
    field = "bed"


class BedNotBeingCleaned(DomainError):
    http_status = 409
    title = "Bed not being cleaned"


class UnknownWard(DomainError):
    http_status = 404
    title = "Unknown ward"
    field = "ward_id"


class UnknownBed(DomainError):
    http_status = 404
    title = "Unknown bed"
    field = "bed"


class UnknownOrder(DomainError):
    http_status = 404
    title = "Unknown order"


class UnknownAllergy(DomainError):
    http_status = 404
    title = "Unknown allergy"
    field = "allergy_id"


class InvalidTransition(DomainError):
    http_status = 409
    title = "Not possible in the current state"


class ReferenceExists(DomainError):
    http_status = 409
    title = "Already exists"


class OrderConflicts(DomainError):
    """Order checks failed and not every one has an override reason; nothing was written.

    ``conflicts``: every check that failed (objects with ``type`` and ``detail``), in the
    order allergy, dose, duplicate; the problem type is the first one without a reason.
    """

    http_status = 409
    title = "Order checks failed"

    def __init__(self, conflicts: list[Any], *, first: str,
                 refused: str = "The order was not placed.",
                 change: str = "change the order") -> None:
        listed = " ".join(c.detail for c in conflicts)
        # a conflict whose reason did not count says why (reason_refused)
        said = [c.as_dict() if hasattr(c, "as_dict") else {"type": c.type, "detail": c.detail}
                for c in conflicts]
        super().__init__(f"{refused} {listed} Give a reason to override each check, or "
                         f"{change}.", problem_type=first, extra={"conflicts": said})
        self.conflicts = list(conflicts)


class UnitMismatch(InvalidInput):
    """A quantity given in a unit of another dimension than the one it must convert to."""

    title = "Unit mismatch"
    field = "unit"


class PossibleDuplicate(DomainError):
    """A patient with the same family and given name (case and accents aside) and birth
    date is already registered; nothing was written. ``candidates``: ``{id, mrn, name,
    birth_date}`` each. Registering anyway takes an explicit "not the same person"."""

    http_status = 409
    title = "Possible duplicate patient"
    problem_type = "possible-duplicate"

    def __init__(self, candidates: list[dict[str, str]]) -> None:
        listed = "; ".join(f"{c['name']} ({c['mrn'] or 'being registered'})"
                           for c in candidates)
        super().__init__(f"A patient with this name and date of birth is already registered: "
                         f"{listed}. Open their chart, or confirm this is not the same person.",
                         extra={"candidates": list(candidates)})
        self.candidates = list(candidates)


class OrdersChanged(DomainError):
    """Discharge was confirmed for a list of orders to cancel that is no longer the list of
    the stay's active orders; nothing was written. ``active_orders``: the ids now active."""

    http_status = 409
    title = "Active orders changed"
    problem_type = "orders-changed"

    def __init__(self, active_order_ids: list[str]) -> None:
        super().__init__("The active orders changed since the discharge was reviewed; review "
                         "the orders that will be cancelled and confirm again.",
                         extra={"active_orders": list(active_order_ids)})


class PatientMerged(DomainError):
    """The record was merged into another (the survivor): it stays readable, but every
    command goes to the survivor. ``merged_into``: the survivor's id; the API answers with
    a ``Location`` to it."""

    http_status = 409
    title = "Record merged into another"
    problem_type = "patient-merged"

    def __init__(self, message: str, *, survivor_id: str, survivor_mrn: str = "",
                 merge_id: str = "") -> None:
        super().__init__(message, extra={"merged_into": survivor_id,
                                         "merged_into_mrn": survivor_mrn,
                                         "merge_id": merge_id})
        self.survivor_id = survivor_id
        self.merge_id = merge_id


class MergeInProgress(PatientMerged):
    """The record is being merged into another (the merge's steps are running): commands
    wait until it has finished or been rolled back."""

    title = "Record being merged"
    problem_type = "merge-in-progress"


class MergeRefused(DomainError):
    """A merge (or its undo) that the records do not allow; ``problem_type`` names the
    conflict (``both-admitted``, ``allergy-status-conflict``, ``already-merged``,
    ``undo-too-late``, ``not-merged``). Nothing was written."""

    http_status = 409
    title = "Merge refused"

    def __init__(self, message: str, *, conflict: str) -> None:
        super().__init__(message, problem_type=conflict,
                         extra={"conflicts": [{"type": conflict, "detail": message}]})
        self.conflict = conflict
