"""The app's models, defined in :mod:`hisadmin.core.models` (the leaf the apps may import).

Django looks for an app's models here; importing them registers them under ``hisadmin``.
"""

from __future__ import annotations

from hisadmin.core.models import (
    AccessRecord,
    ApiToken,
    IdempotencyRecord,
    SecurityEvent,
    TokenChangeRefused,
    hash_token,
)

__all__ = ["AccessRecord", "ApiToken", "IdempotencyRecord", "SecurityEvent",
           "TokenChangeRefused", "hash_token"]
