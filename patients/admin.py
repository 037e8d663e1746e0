from __future__ import annotations

from django.contrib import admin

from . import views

_site = admin.site
_site.register_page(section="Patients", label="Find a patient", route="patients/find/",
                    view=views.find_patient, name="patient_find", roles=views.READ_ROLES,
                    order=20)
_site.register_page(section="Patients", label="Register a patient", route="patients/register/",
                    view=views.register_patient, name="patient_register",
                    roles=(views.Role.CLERK,), order=21)
_site.register_page(section="Patients", label="Chart", route="patients/<str:patient_id>/",
                    view=views.patient_chart, name="patient_chart", in_menu=False)
_site.register_page(section="Patients", label="Admit", route="patients/<str:patient_id>/admit/",
                    view=views.admit_patient, name="patient_admit", in_menu=False)
_site.register_page(section="Patients", label="Discharge",
                    route="patients/<str:patient_id>/discharge/",
                    view=views.discharge_patient, name="patient_discharge", in_menu=False)
