"""One rule for a list's query parameters: a sort, direction or filter value the list does
not offer is a 400, never a 422 or another (empty) list.

The API answers :class:`BadParameter` with a problem of type ``/api/v1/problems/bad-parameter``
naming the ``parameter`` and the values it takes (``allowed``); a page answers it with the
400 page, in the same words. A mistyped or altered link must not look like an answer.
"""

from __future__ import annotations

from collections.abc import Iterable

PROBLEM_TYPE = "/api/v1/problems/bad-parameter"
TITLE = "Bad query parameter"


class BadParameter(ValueError):
    """``value`` is not one of the values ``parameter`` takes; ``allowed`` lists them (empty
    when they are not a list, e.g. a number range: ``detail`` then says what is)."""

    def __init__(self, parameter: str, value: str, allowed: Iterable[str] = (), *,
                 detail: str = "", label: str = "") -> None:
        self.parameter, self.value = parameter, value
        self.allowed = [a for a in allowed if a != ""]
        name = f"{label} ({parameter})" if label else parameter
        if not detail:
            detail = (f"“{value[:100]}” is not a value of {name}; it takes one of: "
                      f"{', '.join(self.allowed)}." if self.allowed
                      else f"“{value[:100]}” is not a value of {name}.")
        super().__init__(detail)


def one_of(parameter: str, value: str, allowed: Iterable[str], *, label: str = "") -> str:
    """``value`` when it is empty (no filter) or one of ``allowed``; else :class:`BadParameter`."""
    allowed = list(allowed)
    if value and value not in allowed:
        raise BadParameter(parameter, value, allowed, label=label)
    return value
