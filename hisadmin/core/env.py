"""Typed environment helpers for settings.

An unset or empty variable means the default. A value that cannot be read stops start-up
with :class:`~django.core.exceptions.ImproperlyConfigured` naming the variable and what it
accepts: a typo such as ``SECURE_COOKIES=ture`` must not quietly become ``False``.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    """One of ``TRUE_WORDS`` or ``FALSE_WORDS``, in any case, surrounding spaces allowed."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    accepted = ", ".join(TRUE_WORDS + FALSE_WORDS)
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean: use one of {accepted} (any case), or leave "
        f"{name} unset for the default ({str(default).lower()})."
    )


def envint(name: str, default: int) -> int:
    """A whole number in decimal, such as ``24`` or ``-1``; surrounding spaces allowed."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not an integer: use a whole number such as {default}, or "
            f"leave {name} unset for the default ({default})."
        ) from None


def envlist(name: str, default: list[str]) -> list[str]:
    """Comma-separated; blank items are dropped."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]
