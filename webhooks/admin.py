from __future__ import annotations

from django.contrib import admin

from webhooks import pages

_PAGES = [
    (
        "Webhooks",
        "webhooks/",
        pages.subscription_list,
        "webhook_subscriptions",
        True,
        "Receivers of signed patient events: add, switch off or delete them.",
    ),
    ("Add a webhook", "webhooks/add/", pages.subscription_add, "webhook_add", False, ""),
    (
        "Delete a webhook",
        "webhooks/<str:subscription_id>/delete/",
        pages.subscription_delete,
        "webhook_delete",
        False,
        "",
    ),
    (
        "Webhook dead letters",
        "webhooks/dead-letters/",
        pages.dead_letters,
        "webhook_dead_letters",
        True,
        "Deliveries that kept failing, to replay.",
    ),
]
for order, (label, route, view, name, in_menu, description) in enumerate(_PAGES):
    admin.site.register_page(
        section="Administration",
        label=label,
        route=route,
        view=view,
        name=name,
        action="manage_webhooks",
        in_menu=in_menu,
        order=92 + order,
        description=description,
    )
