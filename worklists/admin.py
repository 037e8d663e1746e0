from __future__ import annotations

from django.contrib import admin

from worklists.pages import deadletters as deadletter_views
from worklists.pages import worklists as views

_PAGES = [
    ("Admitted patients", "worklists/admitted/", views.admitted_patients, "worklist_admitted",
     "read_worklists"),
    ("Active orders", "worklists/orders/", views.active_orders, "worklist_orders",
     "read_order_worklists"),
    ("My orders", "worklists/my-orders/", views.my_orders, "worklist_my_orders",
     "read_order_worklists"),
    ("Medications due", "worklists/medications-due/", views.medications_due,
     "worklist_meds_due", "read_medications_due"),
    ("Results to review", "worklists/results-to-review/", views.results_to_review,
     "worklist_reviews", "read_results_to_review"),
    ("Find patients", "worklists/patients/", views.patient_search, "worklist_search",
     "read_worklists"),
    ("Projection dead letters", "worklists/dead-letters/", deadletter_views.dead_letters,
     "worklist_dead_letters", "manage_dead_letters"),
]
for order, (label, route, view, name, action) in enumerate(_PAGES):
    admin.site.register_page(section="Worklists", label=label, route=route, view=view,
                             name=name, action=action, order=10 + order)
