"""Shift handover of one patient: the outgoing nurse's SBAR note, taken over by the next.

One note per patient and shift (its id is the shift's name, e.g. ``2026-11-25-day``): the
outgoing nurse may correct it until the incoming nurse acknowledges it; then it is kept as
it was read. Replacing a colleague's note is a decision of its own (the writer names the
version replaced), and every earlier version stays on the note (``earlier``, newest first).
The author of the version on record does not acknowledge it; anyone else may, earlier
authors included. Plain Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from patients.domain.errors import DomainError, InvalidInput

SBAR = ("situation", "background", "assessment", "recommendation")
SBAR_LABELS = {"situation": "Situation", "background": "Background",
               "assessment": "Assessment", "recommendation": "Recommendation"}
MAX_PART = 2000


class HandoverTaken(DomainError):
    http_status = 409
    title = "Handover already taken over"
    problem_type = "handover-taken"


class OwnHandover(DomainError):
    http_status = 409
    title = "Acknowledged by the incoming nurse"
    problem_type = "own-handover"


class HandoverByOther(DomainError):
    http_status = 409
    title = "Handover written by someone else"
    problem_type = "handover-by-other"


class UnknownHandover(DomainError):
    http_status = 404
    title = "Unknown handover"


def note(parts: Mapping[str, str]) -> dict[str, str]:
    """The four SBAR parts, stripped; InvalidInput on the first part left empty."""
    out = {}
    for name in SBAR:
        text = str(parts.get(name) or "").strip()
        if not text:
            raise InvalidInput(f"Write the {SBAR_LABELS[name].lower()}.", field=name)
        if len(text) > MAX_PART:
            raise InvalidInput(f"Keep the {SBAR_LABELS[name].lower()} to {MAX_PART} "
                               "characters.", field=name)
        out[name] = text
    return out


def may_rewrite(current: Mapping[str, Any] | None, actor_id: str,
                replaces: str | None = None) -> None:
    """HandoverTaken when the shift's note was already acknowledged; HandoverByOther when
    someone else wrote the version on record and ``replaces`` (the ``writtenAt`` of the
    version the writer saw and chose to replace) does not name it."""
    if current is None:
        return
    if current.get("acknowledgedAt"):
        raise HandoverTaken("The incoming nurse has already taken this handover over; it "
                            "stays as it was read. Write the next shift's instead.")
    if str(current.get("writtenBy")) != str(actor_id) and replaces != current.get("writtenAt"):
        raise HandoverByOther(f"{author(current)} wrote this shift's handover. Read it and "
                              "confirm that yours replaces it (theirs stays in the history).")


def author(current: Mapping[str, Any]) -> str:
    return str(current.get("writtenByName") or current.get("writtenBy") or "Someone")


def earlier_versions(current: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The versions a new one keeps: the one on record first, then its own earlier ones."""
    if current is None:
        return []
    version = {k: current.get(k) for k in (*SBAR, "writtenAt", "writtenBy", "writtenByName")}
    return [version, *(current.get("earlier") or [])]


def may_acknowledge(current: Mapping[str, Any], actor_id: str) -> None:
    """HandoverTaken when already acknowledged; OwnHandover when ``actor_id`` wrote it."""
    if current.get("acknowledgedAt"):
        raise HandoverTaken("This handover was already acknowledged by "
                            f"{current.get('acknowledgedByName') or 'someone'}.")
    if str(current.get("writtenBy")) == str(actor_id):
        raise OwnHandover("The incoming nurse acknowledges a handover, not the nurse who "
                          "wrote it.")
