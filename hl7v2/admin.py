"""The ADT out pages in the admin's Administration section, beside the webhooks'. The log
is not under ``hl7/``: the sidebar marks every page whose address starts the current one."""

from __future__ import annotations

from django.contrib import admin

from hl7v2.outbound import pages

_PAGES = [
    ("HL7 destinations", "hl7/", pages.destination_list, "hl7_destinations", True,
     "Interface engines' MLLP channels that get ADT messages: add, switch off or delete."),
    ("Add an HL7 destination", "hl7/add/", pages.destination_add, "hl7_destination_add",
     False, ""),
    ("Delete an HL7 destination", "hl7/<str:destination_id>/delete/",
     pages.destination_delete, "hl7_destination_delete", False, ""),
    ("HL7 message log", "hl7-messages/", pages.message_log, "hl7_messages", True,
     "ADT messages sent, by MRN, control id and status; send failed ones again."),
]
for order, (label, route, view, name, in_menu, description) in enumerate(_PAGES):
    admin.site.register_page(section="Administration", label=label, route=route, view=view,
                             name=name, action="manage_webhooks", in_menu=in_menu,
                             order=96 + order, description=description)
