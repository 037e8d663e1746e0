"""The product's two containers behind one handle, on every backend: the clinical record and
the views each in their own container (own indexing policy), partition by partition, the
change feed the clinical container's alone."""

from __future__ import annotations

import pytest

from cosmos_backend import errors
from cosmos_backend.routed import RoutedStore
from cosmos_backend.store import BatchOp, Cond, Query, iter_feed
from hisadmin.core import store as handles
from tests.contract.conftest import Backend

pytestmark = pytest.mark.contract

VIEW_PK = "V_Admitted_g3_CARD"


@pytest.fixture
def routed(backend_kit: Backend) -> RoutedStore:
    clinical = backend_kit.container(handles.container_spec())()
    views = backend_kit.container(handles.views_spec())()
    return RoutedStore(clinical, views, handles.is_view_partition)


def _row(i: int, name: str) -> dict:
    return {"id": f"p{i}", "partitionKey": VIEW_PK, "docType": "ViewRow",
            "docSubType": "Admitted", "QueryDept": "CARD", "QueryName": name,
            "docContents": {"name": name}}


def test_each_partition_lives_in_its_own_container(routed: RoutedStore) -> None:
    routed.create({"id": "patient", "partitionKey": "P_1", "docType": "Patient"})
    routed.execute_batch(VIEW_PK, [BatchOp.create(_row(i, n))
                                   for i, n in enumerate(["Ösel", "Åberg", "d'Arcy"])])
    routed.upsert({"id": "g", "partitionKey": "V_Meta", "docType": "Meta"})
    routed.create({"id": "t", "partitionKey": "V_Track_g3_07", "docType": "Tracker"})

    assert routed.primary.read("P_1", "patient")["docType"] == "Patient"
    assert routed.primary.try_read(VIEW_PK, "p0") is None
    assert routed.views.read(VIEW_PK, "p0")["docContents"]["name"] == "Ösel"
    assert routed.views.try_read("P_1", "patient") is None
    assert routed.views.read("V_Meta", "g")["id"] == "g"
    assert routed.views.read("V_Track_g3_07", "t")["id"] == "t"
    with pytest.raises(errors.NotFound):
        routed.read("V_Meta", "nothing")


def test_a_view_query_is_served_by_the_views_container(routed: RoutedStore) -> None:
    routed.execute_batch(VIEW_PK, [BatchOp.create(_row(i, n))
                                   for i, n in enumerate(["Zoë", "Åsa", "Ann", "Émile"])])
    query = Query(where=(Cond("docSubType", "=", "Admitted"), Cond("QueryDept", "=", "CARD")),
                  order_by=(("QueryName", "ASC"),))
    page = routed.query(VIEW_PK, query, page_size=2)
    rest = routed.query(VIEW_PK, query, page_size=2, continuation=page.continuation)
    names = [d["QueryName"] for d in page.items + rest.items]
    assert names == sorted(names) and len(names) == 4
    assert routed.count_query(VIEW_PK, query) == 4


def test_the_change_feed_is_the_clinical_containers(routed: RoutedStore) -> None:
    routed.create({"id": "evt-0000000001", "partitionKey": "P_2", "docType": "Event"})
    routed.create(_row(1, "Ann"))
    seen = [doc["id"] for rng in routed.feed_ranges()
            for page in iter_feed(routed, rng) for doc in page.items]
    assert seen == ["evt-0000000001"]
