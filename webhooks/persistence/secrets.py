"""Signing secrets are kept encrypted (Fernet: AES-128-CBC with an HMAC-SHA256 tag).

The key is derived from Django's ``SECRET_KEY``; ``SECRET_KEY_FALLBACKS`` still decrypt, so
rotating the key the Django way keeps subscriptions working (re-save them to re-encrypt).
The secret must be readable again, unlike a password: deliveries sign with it.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

_CONTEXT = b"his-webhook-secrets/v1"


def _fernet(key: str) -> Fernet:
    digest = hashlib.sha256(_CONTEXT + key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _keys() -> MultiFernet:
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet(k) for k in keys])


def seal(secret: str) -> str:
    return _keys().encrypt(secret.encode()).decode()


class SecretUnreadable(Exception):
    """The stored secret was sealed with a key this process no longer has."""


def unseal(sealed: str) -> str:
    try:
        return _keys().decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable("the subscription's secret cannot be decrypted") from None
