from __future__ import annotations

from django.contrib import admin

from hisadmin.core.roles import Role
from worklists.pages import deadletters as deadletter_views
from worklists.pages import worklists as views

_PAGES = [
    ("Admitted patients", "worklists/admitted/", views.admitted_patients, "worklist_admitted",
     views.WORKLIST_ROLES),
    ("Active orders", "worklists/orders/", views.active_orders, "worklist_orders",
     views.ORDER_ROLES),
    ("My orders", "worklists/my-orders/", views.my_orders, "worklist_my_orders",
     views.ORDER_ROLES),
    ("Find patients", "worklists/patients/", views.patient_search, "worklist_search",
     views.WORKLIST_ROLES),
    ("Projection dead letters", "worklists/dead-letters/", deadletter_views.dead_letters,
     "worklist_dead_letters", (Role.ADMIN,)),
]
for order, (label, route, view, name, roles) in enumerate(_PAGES):
    admin.site.register_page(section="Worklists", label=label, route=route, view=view,
                             name=name, roles=roles, order=10 + order)
