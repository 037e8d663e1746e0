"""Who did it: every change is attributed to an actor, carried into its events."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Actor:
    """The acting user as the record names them. ``id`` is the user's stable id."""

    id: str
    username: str
    display_name: str = ""
    roles: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["roles"] = list(self.roles)
        return data


SYSTEM_ACTOR = Actor(id="system", username="system", display_name="System")
