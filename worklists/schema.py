"""Query shapes of the view partitions: the composite indexes the worklist queries need."""

from __future__ import annotations

COMPOSITE_INDEXES: list[list[dict[str, str]]] = []
