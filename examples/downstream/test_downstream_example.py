"""What a downstream team's test looks like: only the product's pytest plugin (the
``hisadmin`` entry point) and pytest-django, no fixture of this repository's own tests.

Run: ``pytest --ds=hisadmin.settings -p testkit.plugin examples/downstream`` (with the
product installed, the entry point loads the plugin and ``-p`` is not needed).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_an_admitted_patient_shows_in_the_census(his_patient, his_api_client,
                                                 drain_worklists) -> None:
    patient = his_patient("Downstream", given="Dee", ward="MED-1", orders=("medication", "lab"))
    assert set(patient.orders) == {"medication", "lab"}
    drain_worklists()  # the worklists as the relay and Celery would keep them
    census = his_api_client("nurse").get("/api/v1/worklists/admitted",
                                         {"department": "MED"}).json()
    assert [row["patient_id"] for row in census["items"]] == [patient.id]


def test_roles_are_enforced_for_downstream_clients_too(his_patient, his_api_client) -> None:
    patient = his_patient("Roles", admit=False)
    clerk, nobody = his_api_client("clerk"), his_api_client()
    assert clerk.get(f"/api/v1/patients/{patient.id}").status_code == 200
    assert nobody.get(f"/api/v1/patients/{patient.id}").status_code == 403
