from __future__ import annotations

from django.contrib import admin

from worklists.pages import census as census_views
from worklists.pages import deadletters as deadletter_views
from worklists.pages import my_patients as my_patients_views
from worklists.pages import observations as observation_views
from worklists.pages import worklists as views

_PAGES = [
    ("Admitted patients", "worklists/admitted/", views.admitted_patients, "worklist_admitted",
     "read_worklists", "Every admitted patient of a department or of all, by ward and bed."),
    ("Active orders", "worklists/orders/", views.active_orders, "worklist_orders",
     "read_order_worklists", "Orders not yet completed or cancelled, by department."),
    ("My orders", "worklists/my-orders/", views.my_orders, "worklist_my_orders",
     "read_order_worklists", "The active orders assigned to you."),
    ("Medications due", "worklists/medications-due/", views.medications_due,
     "worklist_meds_due", "read_medications_due",
     "A ward's doses late today, due now or coming up within the hour."),
    ("Observations due", "worklists/observations-due/", observation_views.observations_due,
     "worklist_obs_due", "read_observation_worklists",
     "A ward's patients by when their next observation set is due, overdue first."),
    ("Patients at risk", "worklists/at-risk/", observation_views.at_risk,
     "worklist_at_risk", "read_observation_worklists",
     "NEWS2 medium or high, or a single 3: the trend, and whether anyone was told."),
    ("My patients", "worklists/my-patients/", my_patients_views.my_patients,
     "worklist_my_patients", "read_my_patients",
     "The patients of your beds this shift: doses, results, handover."),
    ("Results to review", "worklists/results-to-review/", views.results_to_review,
     "worklist_reviews", "read_results_to_review",
     "Results of the orders you placed, waiting for your acknowledgement."),
    ("Midnight census", "worklists/census/", census_views.census_page, "worklist_census",
     "read_census", "A ward's patients at each midnight, who came and went, and its "
     "occupancy over the days you choose, as a chart, a table and CSV."),
    ("Find patients", "worklists/patients/", views.patient_search, "worklist_search",
     "read_worklists", "By name (\"SMITH, John\", \"John Smith\", \"Smi\") or MRN."),
    ("Projection dead letters", "worklists/dead-letters/", deadletter_views.dead_letters,
     "worklist_dead_letters", "manage_dead_letters",
     "Events the worklists could not apply, to replay."),
]
for order, (label, route, view, name, action, description) in enumerate(_PAGES):
    admin.site.register_page(section="Worklists", label=label, route=route, view=view,
                             name=name, action=action, order=10 + order,
                             description=description)
