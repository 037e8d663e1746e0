from __future__ import annotations

from django.contrib import admin

from . import views

admin.site.register_page(section="Worklists", label="Admitted patients",
                         route="worklists/admitted/", view=views.admitted_patients,
                         name="worklist_admitted", roles=views.WORKLIST_ROLES, order=10)
