"""Calling the WSGI application in-process, outside Django's test client: around each
request, as the test client does, a request's start and end must not close the test's
database connection (it is inside the test's transaction, and the test database is a file:
closing it would lose the transaction and fail the next query)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.signals import request_finished, request_started
from django.db import close_old_connections


@contextmanager
def keeping_the_tests_connection() -> Iterator[None]:
    """Disconnect ``close_old_connections`` for the block. Around each call, not once per
    test: the test client connects it again after each of its own requests."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
