"""The CapabilityStatement (``GET /fhir/R4/metadata``): what this server reads and searches.

``fhirVersion`` is 4.0.1 (R4): the facade answers R4 clients, which check this value
against their own version. Every resource is validated with the R4B (4.3.0) models of
fhir.resources before it leaves; for the types served here R4B has the same elements as R4
and only elements of R4 are used, so an R4 client reads them as R4. The description and
``software`` say so (docs/fhir.md, "Version").
"""

from __future__ import annotations

from fhir.resources.R4B import __fhir_version__ as MODELS_VERSION
from fhir.resources.R4B.capabilitystatement import CapabilityStatement

from fhir_facade.searches import PATIENT_TYPES

FHIR_VERSION = "4.0.1"
RELEASED = "2026-11-23"
PARAM_TYPES = {
    "patient": "reference",
    "subject": "reference",
    "status": "token",
    "clinical-status": "token",
    "category": "token",
    "_id": "token",
    "identifier": "token",
    "name": "string",
    "family": "string",
    "given": "string",
    "birthdate": "date",
    "code": "token",
    "date": "date",
}
PATIENT_DOCS = {
    "_id": "The patient's id (a point read).",
    "identifier": "The MRN, as value or system|value (a point read).",
    "name": "The start of the family name, or 'family, given' / 'given family' prefixes "
    "(the name-search view; it follows the record within seconds).",
    "family": "The start of the family name (with given: both prefixes).",
    "given": "The start of the given name; only with family.",
    "birthdate": "Narrows an identifier or name search (eq, ge, gt, le, lt; YYYY, YYYY-MM "
    "or YYYY-MM-DD). Alone it is refused: 400 too-costly.",
}


def _param_docs(name: str) -> str:
    if name in ("patient", "subject"):
        return "Required: the patient (Patient/<id> or <id>); one partition answers."
    if name in ("status", "clinical-status"):
        return "Status codes, comma-separated for any of them."
    if name == "category":
        return "laboratory or imaging (or their SNOMED CT codes)."
    if name == "code":
        return ("The code (LOINC for vital signs, SNOMED CT for NEWS2, the lab's own code), "
                "as code or system|code; comma-separated for any of them.")
    if name == "date":
        return ("When it was observed: eq, ge, gt, le, lt; YYYY[-MM[-DD]] or "
                "YYYY-MM-DDThh:mm[:ss[.ffffff]] with Z or an offset (without one, the "
                "hospital's time); repeat for a range.")
    return PATIENT_DOCS.get(name, name)


def _resource(type_name: str, params: tuple[str, ...]) -> dict:
    return {
        "type": type_name,
        "interaction": [{"code": "read"}, {"code": "search-type"}],
        "versioning": "no-version",
        "readHistory": False,
        "updateCreate": False,
        "conditionalCreate": False,
        "conditionalRead": "not-supported",
        "conditionalUpdate": False,
        "conditionalDelete": "not-supported",
        "searchParam": [
            {"name": p, "type": PARAM_TYPES[p], "documentation": _param_docs(p)}
            for p in dict.fromkeys(params)
        ],
    }


def capability_statement(base: str) -> CapabilityStatement:
    resources = [_resource("Patient", tuple(PATIENT_DOCS))]
    resources += [_resource(name, kind.params()) for name, kind in PATIENT_TYPES.items()]
    return CapabilityStatement(
        **{
            "status": "active",
            "date": RELEASED,
            "publisher": "Hospital back office",
            "kind": "instance",
            "description": "Read and search over the clinical record: patients, admissions, "
            "allergies, orders, medication administrations and results. "
            f"Resources are validated with FHIR R4B ({MODELS_VERSION}) models "
            "and use only elements that R4 (4.0.1) has.",
            "software": {
                "name": "Hospital back office FHIR facade",
                "version": f"fhir.resources R4B {MODELS_VERSION}",
            },
            "implementation": {"description": "FHIR R4 facade (read-only)", "url": base},
            "fhirVersion": FHIR_VERSION,
            "format": ["application/fhir+json", "json"],
            "rest": [
                {
                    "mode": "server",
                    "documentation": "Searches page with _count (default 20, at most 100) and the "
                    "Bundle's next link. Unknown parameters are ignored unless "
                    "'Prefer: handling=strict' is sent.",
                    "security": {
                        "cors": False,
                        "description": "Authorization: Bearer <API token>, or a logged-in "
                        "session. Reading needs the clerk, clinician or "
                        "nurse role (403 otherwise).",
                    },
                    "resource": resources,
                }
            ],
        }
    )
