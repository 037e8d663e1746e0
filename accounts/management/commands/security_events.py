"""List the security events: who changed which account, token, device, group or feed."""

from __future__ import annotations

import json
from datetime import date, datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.models import SecurityEvent
from hisadmin.core.local_time import human_time


class Command(BaseCommand):
    help = (
        "Print the security events (issued and revoked tokens, changed users, roles, "
        "passwords, devices, groups, webhook subscriptions, HL7 destinations, replays and "
        "refused attempts), oldest first, as a table or --json lines."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", default=None, metavar="YYYY-MM-DD",
                            help="from this day on (default: the last 30 days)")
        parser.add_argument("--actor", default=None, metavar="USERNAME",
                            help="only what this user did")
        parser.add_argument("--target", default=None, metavar="TEXT",
                            help="only events whose target contains TEXT (e.g. 'user clerk')")
        parser.add_argument("--action", default=None, choices=SecurityEvent.ACTIONS,
                            help="only this kind of change")
        parser.add_argument("--json", action="store_true", help="one JSON object a line")

    def handle(self, *args: Any, since: str | None, actor: str | None, target: str | None,
               action: str | None, **options: Any) -> None:
        try:
            day = date.fromisoformat(since) if since else None
        except ValueError:
            raise CommandError(f"--since {since[:20]!r}: give a day as YYYY-MM-DD") from None
        start = (timezone.make_aware(datetime.combine(day, time.min)) if day is not None
                 else timezone.now() - timezone.timedelta(days=30))
        events = SecurityEvent.objects.filter(at__gte=start).order_by("at", "pk")
        if actor:
            events = events.filter(actor=actor)
        if target:
            events = events.filter(target__icontains=target)
        if action:
            events = events.filter(action=action)
        for event in events.iterator():
            self.stdout.write(_json_line(event) if options["json"] else
                              f"{human_time(event.at)}  {event.actor}  {event.action}  "
                              f"{event.target}  {event.detail}")


def _json_line(event: SecurityEvent) -> str:
    return json.dumps({"at": event.at.isoformat(), "actor": event.actor,
                       "actor_id": event.actor_id, "action": event.action,
                       "target": event.target, "detail": event.detail}, ensure_ascii=False)
