"""The record's use cases, each ``fn(cmd, uow, *, actor)``: what the adapters call."""

from __future__ import annotations

from patients.use_cases.administrations import Administer, administer, medication_record
from patients.use_cases.admissions import (
    AdmitPatient,
    DischargePatient,
    admit_patient,
    discharge_patient,
)
from patients.use_cases.allergies import (
    AddAllergy,
    RecordNoKnownAllergies,
    RemoveAllergy,
    add_allergy,
    record_no_known_allergies,
    remove_allergy,
)
from patients.use_cases.demographics import UpdateDemographics, update_demographics
from patients.use_cases.merges import (
    MergePatients,
    UnmergePatients,
    merge_patients,
    unmerge_patients,
)
from patients.use_cases.orders import (
    AssignOrder,
    PlaceOrder,
    ProgressOrder,
    assign_order,
    place_order,
    progress_order,
)
from patients.use_cases.reference import (
    ReferencePlan,
    SaveReferenceEntry,
    apply_reference_plan,
    load_reference_data,
    plan_reference_data,
    save_reference_entry,
)
from patients.use_cases.registration import RegisterPatient, register_patient
from patients.use_cases.results import (
    AcknowledgeResult,
    CompleteOrder,
    RecordLabResults,
    acknowledge_result,
    complete_order,
    record_lab_results,
)
from patients.use_cases.transfers import TransferPatient, transfer_patient

__all__ = [
    "AcknowledgeResult", "CompleteOrder", "acknowledge_result", "complete_order",
    "RecordLabResults", "record_lab_results",
    "AddAllergy", "Administer", "medication_record", "AdmitPatient", "AssignOrder", "DischargePatient",
    "PlaceOrder", "ProgressOrder", "RecordNoKnownAllergies", "RegisterPatient",
    "RemoveAllergy", "SaveReferenceEntry",
    "TransferPatient",
    "UpdateDemographics", "add_allergy", "administer", "admit_patient", "assign_order",
    "discharge_patient", "load_reference_data", "plan_reference_data", "apply_reference_plan",
    "ReferencePlan", "place_order", "progress_order",
    "record_no_known_allergies", "register_patient", "save_reference_entry",
    "remove_allergy", "transfer_patient", "update_demographics",
    "MergePatients", "UnmergePatients", "merge_patients", "unmerge_patients",
]
