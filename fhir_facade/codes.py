"""Code systems, identifier systems and the code maps of the facade (docs/fhir.md).

Local codes (allergens, medications, lab tests, wards…) are published under one base URI,
``FHIR_SYSTEM_BASE`` (environment; a hospital sets its own), each reference type as its own
code system. Standard systems are used where a standard code is known for certain: UCUM for
units, SNOMED CT for routes and the service-request categories, HL7 terminology for the rest.
"""

from __future__ import annotations

from hisadmin.core.env import envstr

BASE = envstr("FHIR_SYSTEM_BASE", "https://his.example.org/fhir").rstrip("/")
MRN_SYSTEM = f"{BASE}/sid/mrn"
STAFF_SYSTEM = f"{BASE}/sid/staff"  # user ids of the people who ordered, gave, resulted


def local_system(type_name: str) -> str:
    """The code system of a reference type (``Allergen``, ``Medication``, ``LabTest``…)."""
    return f"{BASE}/CodeSystem/{type_name.lower()}"


UCUM = "http://unitsofmeasure.org"
SNOMED = "http://snomed.info/sct"
V2_0203 = "http://terminology.hl7.org/CodeSystem/v2-0203"
V2_0074 = "http://terminology.hl7.org/CodeSystem/v2-0074"
V3_ACT_CODE = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
V3_PARTICIPATION = "http://terminology.hl7.org/CodeSystem/v3-ParticipationType"
V3_INTERPRETATION = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"
OBSERVATION_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"
LOCATION_TYPE = "http://terminology.hl7.org/CodeSystem/location-physical-type"
DISCHARGE_DISPOSITION = "http://terminology.hl7.org/CodeSystem/discharge-disposition"
ALLERGY_CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
ALLERGY_VERIFICATION = "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification"
MED_ADMIN_CATEGORY = "http://terminology.hl7.org/CodeSystem/medication-admin-category"

# The project's units → UCUM (code, and the unit as printed). "tablet" is an annotation.
UCUM_UNITS: dict[str, tuple[str, str]] = {
    "mg": ("mg", "mg"),
    "g": ("g", "g"),
    "mcg": ("ug", "microgram"),
    "ml": ("mL", "mL"),
    "l": ("L", "L"),
    "units": ("[iU]", "units"),
    "tablet": ("{tablet}", "tablet"),
    "g_l": ("g/L", "g/L"),
    "mg_l": ("mg/L", "mg/L"),
    "ng_l": ("ng/L", "ng/L"),
    "mmol_l": ("mmol/L", "mmol/L"),
    "umol_l": ("umol/L", "µmol/L"),
    "x10e9_l": ("10*9/L", "×10⁹/L"),
    "ratio": ("{ratio}", "ratio"),
    "mmol_mol": ("mmol/mol", "mmol/mol"),
}
# Routes → SNOMED CT route of administration (qualifier values).
SNOMED_ROUTES: dict[str, tuple[str, str]] = {
    "PO": ("26643006", "Oral route"),
    "IV": ("47625008", "Intravenous route"),
    "IM": ("78421000", "Intramuscular route"),
    "SC": ("34206005", "Subcutaneous route"),
    "PR": ("37161004", "Rectal route"),
    "INH": ("447694001", "Respiratory tract route"),
}
# ServiceRequest.category by order kind (SNOMED CT procedures).
SERVICE_CATEGORIES: dict[str, tuple[str, str]] = {
    "lab": ("108252007", "Laboratory procedure"),
    "imaging": ("363679005", "Imaging"),
}
# DiagnosticReport.category by order kind (HL7 v2 table 0074, diagnostic service section).
REPORT_CATEGORIES: dict[str, tuple[str, str]] = {
    "lab": ("LAB", "Laboratory"),
    "imaging": ("RAD", "Radiology"),
}
INTERPRETATIONS = {"H": "High", "L": "Low", "N": "Normal"}
DISPOSITIONS: dict[str, str] = {  # discharge disposition → discharge-disposition code
    "home": "home",
    "transfer-other-facility": "other-hcf",
    "care-home": "long",
    "deceased": "exp",
    "self-discharge": "aadvice",
}
