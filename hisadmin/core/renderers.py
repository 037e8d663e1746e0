"""The API's JSON renderer (no model imports: the benchmark's baseline API uses it too)."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest
from ninja.renderers import BaseRenderer
from ninja.responses import NinjaJSONEncoder

_ENCODER = NinjaJSONEncoder()  # dates, times, decimals, UUIDs: exactly as ninja writes them


class ORJSONRenderer(BaseRenderer):
    """JSON through orjson, several times faster than the standard encoder on worklist
    pages; what orjson does not write natively goes through ninja's encoder."""

    media_type = "application/json"

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> bytes:
        return orjson.dumps(data, default=_ENCODER.default,
                            option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS)
