from __future__ import annotations

from django.contrib import admin

from patients.pages import access as accv
from patients.pages import clinical as cv
from patients.pages import mar as marv
from patients.pages import mar_print, wristbands
from patients.pages import orders as ordv
from patients.pages import records as views
from patients.pages import results as resv

_site = admin.site
# /admin/patients/ finds (by MRN or name) or registers; the menu's one search entry is the
# name search worklist, so finding is not listed twice.
_site.register_page(section="Patients", label="Find or register a patient", route="patients/",
                    view=views.find_patient, name="patient_index", action="read",
                    in_menu=False)
_site.register_page(section="Patients", label="Find a patient", route="patients/find/",
                    view=views.find_patient, name="patient_find", action="read",
                    in_menu=False, order=20)
_site.register_page(section="Patients", label="Register a patient", route="patients/register/",
                    view=views.register_patient, name="patient_register",
                    action="register", order=21,
                    description="A new patient, after checking they are not registered yet.")
_site.register_page(section="Patients", label="Chart", route="patients/<str:patient_id>/",
                    view=views.patient_chart, name="patient_chart", in_menu=False)
_site.register_page(section="Patients", label="Who viewed this record",
                    route="patients/<str:patient_id>/access/", view=accv.patient_access,
                    name="patient_access", in_menu=False)
_site.register_page(section="Administration", label="Who viewed a record", route="access-log/",
                    view=accv.access_index, name="access_log", action="read_access_log",
                    order=92, description="Every view of a patient's record: who, when, "
                                          "what and from which computer.")
_site.register_page(section="Patients", label="Admit", route="patients/<str:patient_id>/admit/",
                    view=views.admit_patient, name="patient_admit", in_menu=False)
_site.register_page(section="Patients", label="Discharge",
                    route="patients/<str:patient_id>/discharge/",
                    view=views.discharge_patient, name="patient_discharge", in_menu=False)

for _label, _route, _view, _name in (
    ("Demographics", "patients/<str:patient_id>/demographics/", cv.edit_demographics,
     "patient_demographics"),
    ("Allergy", "patients/<str:patient_id>/allergies/add/", cv.add_allergy, "allergy_add"),
    ("No known allergies", "patients/<str:patient_id>/allergies/none/",
     cv.record_no_known_allergies, "allergy_none"),
    ("Remove allergy", "patients/<str:patient_id>/allergies/<str:allergy_id>/remove/",
     cv.remove_allergy, "allergy_remove"),
    ("Transfer", "patients/<str:patient_id>/transfer/", cv.transfer, "patient_transfer"),
    ("Order", "patients/<str:patient_id>/orders/new/<str:kind>/", cv.place_order, "order_new"),
    ("Order action", "patients/<str:patient_id>/orders/<str:order_id>/action/",
     cv.order_action, "order_action"),
    ("Order detail", "patients/<str:patient_id>/orders/<str:order_id>/", ordv.order_detail,
     "order_detail"),
    ("Medication record", "patients/<str:patient_id>/mar/", marv.medication_record,
     "patient_mar"),
    ("Medication record to print", "patients/<str:patient_id>/mar/print/",
     mar_print.medication_record_print, "patient_mar_print"),
    ("Wristband", "patients/<str:patient_id>/wristband/", wristbands.wristband,
     "patient_wristband"),
    ("Specimen labels", "patients/<str:patient_id>/orders/<str:order_id>/labels/",
     wristbands.specimen_labels, "order_labels"),
    ("Record a dose", "patients/<str:patient_id>/mar/<str:order_id>/record/", marv.record_dose,
     "patient_mar_record"),
    ("Administer", "patients/<str:patient_id>/orders/<str:order_id>/administer/",
     cv.administer, "order_administer"),
    ("Results", "patients/<str:patient_id>/orders/<str:order_id>/results/",
     resv.complete_order, "order_results"),
    ("Acknowledge results", "patients/<str:patient_id>/orders/<str:order_id>/acknowledge/",
     resv.acknowledge, "order_acknowledge"),
):
    _site.register_page(section="Patients", label=_label, route=_route, view=_view,
                        name=_name, in_menu=False)

from patients.pages import reference as rv  # noqa: E402

_site.register_page(section="Administration", label="Reference data", route="reference/",
                    view=rv.reference_index, name="reference_index", action="manage_reference_data",
                    order=90, description="Wards, medications, lab tests and the other coded "
                                          "lists the forms offer.")
_site.register_page(section="Administration", label="Reference list",
                    route="reference/<str:type_name>/", view=rv.reference_edit,
                    name="reference_list", in_menu=False)
_site.register_page(section="Administration", label="Reference entry",
                    route="reference/<str:type_name>/<str:code>/", view=rv.reference_edit,
                    name="reference_edit", in_menu=False)

from patients.pages import beds as bedv  # noqa: E402

_site.register_page(section="Wards", label="Bed boards", route="wards/", view=bedv.ward_index,
                    name="ward_index", action="read_beds", order=30,
                    description="Every bed of a ward: free, occupied or being cleaned, live.")
_site.register_page(section="Wards", label="Bed board", route="wards/<str:ward_id>/",
                    view=bedv.bed_board, name="bed_board", in_menu=False)
_site.register_page(section="Wards", label="Mark bed clean",
                    route="wards/<str:ward_id>/beds/<str:bed>/clean/", view=bedv.clean_bed,
                    name="bed_clean", in_menu=False)

from patients.pages import assignments as assignv  # noqa: E402
from patients.pages import handovers as handv  # noqa: E402

_site.register_page(section="Wards", label="Nurses for a shift",
                    route="wards/<str:ward_id>/assignments/", view=assignv.ward_assignments,
                    name="ward_assignments", in_menu=False)
_site.register_page(section="Wards", label="Handover sheet",
                    route="wards/<str:ward_id>/handover/", view=handv.handover_sheet,
                    name="handover_sheet", in_menu=False)
_site.register_page(section="Patients", label="Handover",
                    route="patients/<str:patient_id>/handovers/new/", view=handv.write_handover,
                    name="handover_new", in_menu=False)
_site.register_page(section="Patients", label="Acknowledge handover",
                    route="patients/<str:patient_id>/handovers/<str:handover_id>/acknowledge/",
                    view=handv.acknowledge_handover, name="handover_acknowledge", in_menu=False)

from patients.pages import observations as obsv  # noqa: E402

_site.register_page(section="Patients", label="Record observations",
                    route="patients/<str:patient_id>/observations/new/", view=obsv.record,
                    name="observations_new", in_menu=False)
_site.register_page(section="Patients", label="Record an escalation",
                    route="patients/<str:patient_id>/observations/<str:observation_id>/escalate/",
                    view=obsv.escalate, name="observations_escalate", in_menu=False)
_site.register_page(section="Patients", label="SpO2 scale",
                    route="patients/<str:patient_id>/spo2-scale/", view=obsv.decide_scale,
                    name="spo2_scale", in_menu=False)
_site.register_page(section="Patients", label="Observation chart",
                    route="patients/<str:patient_id>/observations/chart/", view=obsv.chart,
                    name="observations_chart", in_menu=False)

from patients.pages import duplicates as dupv  # noqa: E402
from patients.pages import merges as mergev  # noqa: E402

# Records staff: one patient, one record ("records/…": not a patient id under "patients/").
_site.register_page(section="Patients", label="Possible duplicates", route="records/duplicates/",
                    view=dupv.duplicate_list, name="duplicate_list", action="find_duplicates",
                    order=22, description="Patients who may be registered twice: merge them, "
                                          "or say they are two people.")
_site.register_page(section="Patients", label="Not the same person",
                    route="records/duplicates/<str:pair_id>/not-same/",
                    view=dupv.not_same_person, name="duplicate_not_same", in_menu=False)
_site.register_page(section="Patients", label="Merge records", route="records/merge/",
                    view=mergev.merge_records, name="records_merge", in_menu=False)
_site.register_page(section="Patients", label="Undo merge",
                    route="records/merged/<str:patient_id>/undo/",
                    view=mergev.unmerge_records, name="records_unmerge", in_menu=False)
