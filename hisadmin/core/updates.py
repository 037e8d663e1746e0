"""Whether the views have stopped following the store, for pages of any app.

The worklists measure it (their projections are what stops); a page of another app (a
ward's bed board, whose cleaning beds follow the same relay) asks here, so it needs no
import of the worklists. The app registers its probe when it loads (:func:`register`).
"""

from __future__ import annotations

from collections.abc import Callable

Probe = Callable[[], float | None]
_probes: list[Probe] = []


def register(probe: Probe) -> None:
    """Add ``probe()``: seconds since updates stopped, or None while they flow (or unknown)."""
    if probe not in _probes:
        _probes.append(probe)


def stopped() -> float | None:
    """Seconds since the earliest stop any registered probe reports; None while none does."""
    found = [s for s in (probe() for probe in _probes) if s is not None]
    return max(found) if found else None
