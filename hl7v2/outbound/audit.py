"""The message log names patients (their MRNs), so reading it is in the access audit: a
search by MRN is a view of that patient's record, any other answer a list view of the
patients it shows (``hisadmin.core.access_log``, recorded once the answer is a 2xx)."""

from __future__ import annotations

from collections.abc import Sequence

from hisadmin.core import access_log, keys
from hl7v2.persistence.store import LogEntry

PART = "HL7 message log"


def note_read(request: object, found: Sequence[LogEntry], *, searched_mrn: bool) -> None:
    ids = [keys.suffix(e.stream) for e in found]
    if searched_mrn:
        access_log.note_views(request, ids, f"{PART} (MRN search)")
    else:
        access_log.note_list(request, ids, PART)
