from __future__ import annotations

from django.apps import AppConfig

from hl7v2.outbound import tasks as outbound_tasks


class Hl7V2Config(AppConfig):
    name = "hl7v2"
    label = "hl7v2"
    verbose_name = "HL7 v2 interface"

    def ready(self) -> None:
        outbound_tasks.register()  # ADT out: the relay feeds the destinations' fan-out
