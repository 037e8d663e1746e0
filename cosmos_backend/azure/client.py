"""Building the ``azure-cosmos`` client, mapping its errors, and metering request units.

Shared by the store adapter (:mod:`cosmos_backend.azure.store`) and provisioning
(:mod:`cosmos_backend.azure.provision`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from azure.core.exceptions import AzureError
from azure.cosmos import CosmosClient
from azure.cosmos import exceptions as cx

from cosmos_backend import errors

ru_log = logging.getLogger("cosmos_backend.ru")
Profile = Literal["web", "relay"]


@dataclass(frozen=True)
class RetryProfile:
    """How long one store call may take before it fails with :class:`errors.Unavailable`."""

    throttle_retries: int  # 429s the SDK retries (its default is 9)
    throttle_wait_s: int  # total time spent waiting out 429s (default 30)
    connection_retries: int  # connect/read failures and 5xx the transport retries
    connect_timeout_s: int
    read_timeout_s: int
    operation_timeout_s: int  # absolute, retries included


PROFILES: dict[str, RetryProfile] = {
    # A web request holds a user and a worker thread: fail within seconds and say so.
    "web": RetryProfile(throttle_retries=3, throttle_wait_s=5, connection_retries=2,
                        connect_timeout_s=3, read_timeout_s=10, operation_timeout_s=15),
    # The relay has nobody waiting and must not drop work: ride out throttling and blips.
    "relay": RetryProfile(throttle_retries=12, throttle_wait_s=60, connection_retries=5,
                          connect_timeout_s=5, read_timeout_s=30, operation_timeout_s=120),
}


def is_local(endpoint: str) -> bool:
    """Plain-HTTP endpoints are local test servers: they advertise an HTTPS address for
    endpoint discovery that does not exist, so discovery must stay off for them."""
    return endpoint.startswith("http://")


def build_client(endpoint: str, key: str, *, profile: str = "web", connection_verify: bool = True,
                 enable_endpoint_discovery: bool | None = None) -> CosmosClient:
    """A session-consistent client with the retry budget of ``profile``.

    The constructor already talks to the account (it reads the regions), so an unreachable
    endpoint raises :class:`errors.Unavailable` here.
    """
    budget = PROFILES[profile]
    discovery = not is_local(endpoint) if enable_endpoint_discovery is None \
        else enable_endpoint_discovery
    try:
        return CosmosClient(
            endpoint, credential=key, consistency_level="Session",
            connection_verify=connection_verify, enable_endpoint_discovery=discovery,
            retry_throttle_total=budget.throttle_retries,
            retry_throttle_backoff_max=budget.throttle_wait_s,
            retry_total=budget.connection_retries, retry_connect=budget.connection_retries,
            retry_read=budget.connection_retries, retry_backoff_max=budget.throttle_wait_s,
            connection_timeout=budget.connect_timeout_s, read_timeout=budget.read_timeout_s,
        )
    except Exception as exc:  # every failure to reach the account is the same to callers
        raise map_error(exc) from exc


def map_error(exc: BaseException) -> errors.StoreError:
    """The store error for an SDK or transport exception (status codes as on Cosmos)."""
    if isinstance(exc, errors.StoreError):
        return exc
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, cx.CosmosResourceNotFoundError) or status == 404:
        return errors.NotFound(message)
    if isinstance(exc, cx.CosmosResourceExistsError) or status == 409:
        return errors.Conflict(message)
    if isinstance(exc, cx.CosmosAccessConditionFailedError) or status == 412:
        return errors.PreconditionFailed(message)
    if status == 429:
        return errors.Throttled(message)
    if status == 413:
        return errors.DocumentTooLarge(message)
    if status == 400:
        return errors.InvalidRequest(message)
    if status in (408, 410, 449, 500, 502, 503, 504) or isinstance(exc, cx.CosmosClientTimeoutError):
        return errors.Unavailable(message)
    if status is None and isinstance(exc, AzureError):  # connection refused, reset, DNS, TLS
        return errors.Unavailable(message)
    return errors.StoreError(message)


def charge_of(headers: Mapping[str, Any] | None) -> float:
    try:
        return float((headers or {}).get("x-ms-request-charge", 0) or 0)
    except (TypeError, ValueError):
        return 0.0


class ChargeHook:
    """Collects the request charge of ONE store call (every page and retry it made).

    Passed as the SDK's per-call ``response_hook``: unlike the client's shared
    ``last_response_headers`` it cannot pick up another thread's response.
    """

    def __init__(self) -> None:
        self.charge = 0.0

    def __call__(self, headers: Mapping[str, Any], _body: Any) -> None:
        self.charge += charge_of(headers)


class Charges:
    """Request units spent, in total and per operation kind (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0.0
        self.by_kind: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def add(self, kind: str, charge: float) -> None:
        with self._lock:
            self.total += charge
            self.by_kind[kind] = self.by_kind.get(kind, 0.0) + charge
            self.calls[kind] = self.calls.get(kind, 0) + 1
            total = self.total
        ru_log.debug("%s %.2f RU (total %.2f)", kind, charge, total)

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return dict(self.by_kind)
