from __future__ import annotations

from django.apps import AppConfig


class FhirFacadeConfig(AppConfig):
    """The FHIR facade: no models, no templates; views mounted by ``hisadmin.urls``."""

    name = "fhir_facade"
    verbose_name = "FHIR R4 facade"
