"""Domain errors. Each carries the HTTP status and a title the edges use to report it."""

from __future__ import annotations


class DomainError(Exception):
    http_status = 409
    title = "Not possible"
    field: str | None = None  # the form field the error belongs to, when there is one

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        if field is not None:
            self.field = field


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


class UnitMismatch(InvalidInput):
    """A quantity given in a unit of another dimension than the one it must convert to."""

    title = "Unit mismatch"
    field = "unit"
