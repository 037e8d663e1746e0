"""Fault injection for the fault tests: named points that sleep or raise when configured.

``WORKLISTS_FAILPOINTS="after_rows=sleep:5"`` makes every projection pause after writing
its rows and before its tracker, the widest window for a crash; ``page_message=sleep:1``
delays a page's message in the worker before it starts (the relay checkpoints the page
meanwhile); ``follow_up_in_page=raise`` fails every follow-up inside its page (each is then
sent on alone) and ``follow_up=sleep:20`` holds a follow-up sent on alone, for a worker to be
killed holding it. One variable for the points of every app (it began with the worklists').
Unset (production): no-op.
"""

from __future__ import annotations

import os
import time

_SPEC = os.environ.get("WORKLISTS_FAILPOINTS", "")


def _parse(spec: str) -> dict[str, str]:
    points = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, action = item.partition("=")
        points[name] = action
    return points


POINTS = _parse(_SPEC)


class InjectedFault(RuntimeError):
    pass


def hit(name: str) -> None:
    action = POINTS.get(name)
    if not action:
        return
    kind, _, arg = action.partition(":")
    if kind == "sleep":
        time.sleep(float(arg or 1))
    elif kind == "raise":
        raise InjectedFault(f"failpoint {name}")
