"""Worklist API (``/api/v1/worklists``): the same filters as the pages."""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from hisadmin.roles import Role, require_role
from hisadmin.store import get_store

from . import queries
from .schema import SORTS

router = Router(tags=["worklists"])
ROLES = (Role.CLERK, Role.CLINICIAN, Role.NURSE)


class AdmittedRow(Schema):
    patient_id: str = Field(alias="patientId")
    mrn: str
    name: str
    age: int | None
    sex: str
    department_id: str = Field(alias="departmentId")
    ward_id: str = Field(alias="wardId")
    bed: str | None
    admitted_at: str = Field(alias="admittedAt")
    attending_name: str = Field(alias="attendingName")
    length_of_stay: int = Field(alias="lengthOfStay")
    seq: int


class AdmittedPage(Schema):
    items: list[AdmittedRow]
    continuation: str | None


@router.get("/admitted", response=AdmittedPage, by_alias=False,
            summary="Admitted patients of a department (census)")
def admitted(request: HttpRequest, department: str, ward: str = "", q: str = "",
             sort: Literal[tuple(SORTS)] = "bed",  # type: ignore[valid-type]
             dir: Literal["asc", "desc"] = "asc", page: str | None = None,
             page_size: int = Query(50, ge=1, le=200)) -> dict:
    """``q``: name prefix (case- and accent-insensitive). ``page``: the continuation token."""
    require_role(request.user, *ROLES)
    rows, token = queries.admitted(get_store(), queries.AdmittedFilter(
        department_id=department, ward_id=ward, name=q, sort=sort, descending=dir == "desc",
    ), page_size=page_size, continuation=page)
    return {"items": rows, "continuation": token}
