"""Correct an order's stored start or end that no reader can interpret (docs/operations.md)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from cosmos_backend.uow import StaleWrite
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.policy import actor_for
from hisadmin.core.store import get_store, new_uow
from patients.domain.errors import DomainError
from patients.domain.events import REPAIRABLE_ORDER_FIELDS
from patients.persistence import queries
from patients.use_cases.orders import RepairOrder, repair_order


class Command(BaseCommand):
    help = ("Set an order's start_at or end_at (ISO 8601 with an offset) when the stored one "
            "cannot be read; then replay_dead_letters releases the patient's held stream.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("mrn", help="the patient's MRN")
        parser.add_argument("order_id", help="the order's id")
        parser.add_argument("--field", required=True, choices=sorted(
            REPAIRABLE_ORDER_FIELDS.values()), help="the field to set")
        parser.add_argument("--value", required=True,
                            help="ISO 8601 date and time with an offset, e.g. "
                                 "2026-11-25T08:00:00+00:00")
        parser.add_argument("--by", default=None,
                            help="the acting user's username (default: the system)")

    def handle(self, *args: Any, mrn: str, order_id: str, field: str, value: str,
               by: str | None, **options: Any) -> None:
        store = get_store()
        actor = self._actor(by)
        patient = queries.by_mrn(store, mrn)
        if patient is None:
            raise CommandError(f"no patient with MRN {mrn!r}")
        try:
            order = repair_order(RepairOrder(patient["patientId"], order_id, field, value),
                                 new_uow(), actor=actor)
        except StaleWrite:
            raise CommandError("the order changed meanwhile; run the command again") from None
        except DomainError as exc:
            raise CommandError(f"{getattr(exc, 'field', '') or field}: {exc}") from None
        self.stdout.write(f"order {order.order_id} of {mrn}: {field} set to {value} "
                          f"(version {order.version}, by {actor.username}); now run "
                          "manage.py replay_dead_letters, then manage.py check_worklists")

    def _actor(self, username: str | None) -> Actor:
        if not username:
            return SYSTEM_ACTOR
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"--by: no active user {username!r}")
        return actor_for(user)
