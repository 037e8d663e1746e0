"""Possible duplicate registrations for records staff (``/api/v1/patients/duplicates``).

Mounted before the record's router: ``duplicates`` is a path, not a patient id."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema
from pydantic import Field

from hisadmin.core import policy, tokens
from hisadmin.core.inputs import PageToken, Text
from hisadmin.core.policy import actor_for
from hisadmin.core.store import get_store, new_uow
from patients.api.schemas import ERRORS_SCHEMA, PatientOut, StrictIn, patient_out
from patients.domain.merges import REASON_MAX
from patients.persistence import duplicates
from patients.use_cases.duplicates import MarkNotSamePerson, mark_not_same_person

router = Router(tags=["patients"])
SCOPE = "duplicates"


class DuplicatePairOut(Schema):
    pair_id: str = Field(description="the two patients' ids, ordered, joined by a dot")
    first: PatientOut
    second: PatientOut
    reasons: list[str] = Field(description="why they may be one person, in words, e.g. "
                                           "\"Same birth date (1 May 1980) and sex (female)\", "
                                           "\"Similar names: MÜLLER, Anna and MUELLER, Anna\"")


class DuplicatePage(Schema):
    items: list[DuplicatePairOut]
    continuation: str | None = Field(description="pass it back for the next page; null: "
                                                 "the last page")


class NotSamePersonIn(StrictIn):
    reason: Text(REASON_MAX) = Field(description="why they are two people (kept, with who)")


def _pair(p: duplicates.Listed) -> dict:
    return {"pair_id": p.pair_id, "first": patient_out(p.first),
            "second": patient_out(p.second), "reasons": list(p.reasons)}


@router.get("/patients/duplicates", response={200: DuplicatePage, **ERRORS_SCHEMA},
            summary="Possible duplicate registrations")
def list_duplicates(request: HttpRequest, continuation: PageToken | None = None,
                    page_size: int = Query(20, ge=1, le=100)) -> dict:
    """Pairs of patients who may be one person: the same birth date and sex with alike
    names (case, accents, apostrophes and hyphens aside; one part of the other; given and
    family swapped; close in spelling), each with why. A pair decided "not the same person"
    or merged is not listed. A page may hold fewer than ``page_size`` pairs (a pair no
    longer alike is left out); ``continuation``: the previous page's, as given (else 400,
    ``/api/v1/problems/bad-page-token``). Records staff only (403)."""
    policy.require(request.user, "find_duplicates")
    pairs, token = duplicates.page(get_store(), page_size=page_size,
                                   continuation=tokens.open_page(continuation, scope=SCOPE))
    return {"items": [_pair(p) for p in pairs],
            "continuation": tokens.sign_page(token, scope=SCOPE)}


@router.post("/patients/duplicates/{pair_id}/not-same-person",
             response={204: None, **ERRORS_SCHEMA}, summary="Mark a pair not the same person")
def not_same_person(request: HttpRequest, pair_id: str, payload: NotSamePersonIn
                    ) -> HttpResponse:
    """The pair is two people: it is not listed again. A ``NotSamePerson`` event keeps the
    reason and who decided. 404 ``/api/v1/problems/pair-not-listed`` when the pair is not
    (or no longer) listed; 422 without a reason."""
    policy.require(request.user, "find_duplicates")
    mark_not_same_person(MarkNotSamePerson(pair_id, payload.reason), new_uow(),
                         actor=actor_for(request.user))
    return HttpResponse(status=204)
