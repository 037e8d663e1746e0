"""The models registered under the ``hisadmin`` app label, where they were first migrated:
the shell's own (:mod:`hisadmin.core.models`) and the features' (:mod:`accounts.models`,
:mod:`operations.models`), so their tables, permissions and admin URLs never moved.

Django looks for an app's models here; importing them registers them under ``hisadmin``.
"""

from __future__ import annotations

from accounts.models import ApiToken, SecurityEvent, TokenChangeRefused, hash_token
from hisadmin.core.models import IdempotencyRecord
from operations.models import AccessRecord

__all__ = ["AccessRecord", "ApiToken", "IdempotencyRecord", "SecurityEvent",
           "TokenChangeRefused", "hash_token"]
