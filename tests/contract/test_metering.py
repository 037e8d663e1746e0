"""The Cosmos adapter records the request charge of every call (RU), per operation kind."""

from __future__ import annotations

import logging

import pytest

from cosmos_backend.store import BatchOp, DocumentStore, Query

pytestmark = pytest.mark.contract


def test_it_meters_request_units_per_operation_kind(store: DocumentStore, backend: str,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    if backend == "embedded":
        pytest.skip("the embedded engine spends no request units")
    caplog.set_level(logging.DEBUG, logger="cosmos_backend.ru")
    store.create({"id": "a", "partitionKey": "P_1"})
    store.read("P_1", "a")
    store.execute_batch("P_1", [BatchOp.create({"id": "b", "partitionKey": "P_1"})])
    store.query("P_1", Query())
    for feed_range in store.feed_ranges():
        store.read_feed(feed_range)
    charges = store.request_charges  # type: ignore[attr-defined]
    assert {"create", "read", "batch", "query", "feed"} <= charges.keys()
    assert all(charges[k] > 0 for k in ("create", "read", "batch", "query", "feed"))
    assert store.request_charge_total == pytest.approx(sum(charges.values()))  # type: ignore[attr-defined]
    assert any(r.name == "cosmos_backend.ru" and "create" in r.getMessage()
               for r in caplog.records)
