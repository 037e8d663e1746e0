from __future__ import annotations

from django.apps import AppConfig


class Hl7V2Config(AppConfig):
    name = "hl7v2"
    label = "hl7v2"
    verbose_name = "HL7 v2 interface"
