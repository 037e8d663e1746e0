"""Resource ids that say which partition to read: the patient's id is part of every id.

A FHIR id is at most 64 characters of ``A-Z a-z 0-9 - .``, and a read must reach its
record with a single-partition read, so an order's or an admission's id alone (no index
maps it to its patient) is not enough, and two UUIDs spelled out (72 characters) are too
long. Each UUID is therefore written in 22 characters of base64 over exactly those 64
symbols: ``<patient 22><record 22>`` (44), and an Observation adds ``.<analyte index>``.
The ids are opaque to clients; only this module spells or parses them.
"""

from __future__ import annotations

import base64
import re
import uuid

# base64url with "." for "_": every symbol is allowed in a FHIR id.
_TO_FHIR = str.maketrans("_", ".")
_FROM_FHIR = str.maketrans(".", "_")
UUID_LEN = 22
_COMPACT = re.compile(r"[A-Za-z0-9\-.]{22}")
_INDEX = re.compile(r"\.(\d{1,3})")


class NotOurs(ValueError):
    """The id was not made here (or refers to a record that cannot have one)."""


def compact(value: str) -> str:
    """A UUID in 22 id characters; NotOurs for anything that is not a UUID."""
    try:
        raw = uuid.UUID(value).bytes
    except (ValueError, TypeError, AttributeError):
        raise NotOurs(value) from None
    return base64.urlsafe_b64encode(raw).decode().rstrip("=").translate(_TO_FHIR)


def expand(text: str) -> str:
    """The UUID (canonical spelling) of 22 id characters; NotOurs when they are not one."""
    if not _COMPACT.fullmatch(text):
        raise NotOurs(text)
    try:
        raw = base64.urlsafe_b64decode(text.translate(_FROM_FHIR) + "==")
        return str(uuid.UUID(bytes=raw))
    except (ValueError, TypeError):
        raise NotOurs(text) from None


def pair(patient_id: str, record_id: str) -> str:
    """The id of a record in a patient's partition (admission, order, allergy, dose)."""
    return compact(patient_id) + compact(record_id)


def split_pair(resource_id: str) -> tuple[str, str]:
    """(patient id, record id) of :func:`pair`'s spelling; NotOurs otherwise."""
    if len(resource_id) != 2 * UUID_LEN:
        raise NotOurs(resource_id)
    return expand(resource_id[:UUID_LEN]), expand(resource_id[UUID_LEN:])


def indexed(patient_id: str, record_id: str, index: int) -> str:
    """The id of the ``index``-th part of a record (an analyte of a lab result)."""
    return f"{pair(patient_id, record_id)}.{index}"


def split_indexed(resource_id: str) -> tuple[str, str, int]:
    """(patient id, record id, index) of :func:`indexed`'s spelling; NotOurs otherwise."""
    head, tail = resource_id[: 2 * UUID_LEN], resource_id[2 * UUID_LEN :]
    match = _INDEX.fullmatch(tail)
    if match is None:
        raise NotOurs(resource_id)
    return (*split_pair(head), int(match.group(1)))


_VITALS = re.compile(r"([A-Za-z0-9\-.]{22})(\d{8}T\d{12}-[0-9a-f]{8})\.(\d{1,2})")


def vital(patient_id: str, observation_id: str, index: int) -> str:
    """The id of one value (or the score) of an observation set: ``<patient 22><set id
    30>.<index>`` (a set's id sorts by its time and is not a UUID)."""
    return f"{compact(patient_id)}{observation_id}.{index}"


def split_vital(resource_id: str) -> tuple[str, str, int]:
    """(patient id, observation set id, index) of :func:`vital`'s spelling; NotOurs
    otherwise."""
    match = _VITALS.fullmatch(resource_id)
    if match is None:
        raise NotOurs(resource_id)
    return expand(match.group(1)), match.group(2), int(match.group(3))
