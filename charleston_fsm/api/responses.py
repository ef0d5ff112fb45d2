"""JSON answers serialised once, by orjson.

Starlette's ``JSONResponse`` runs the stdlib encoder; FastAPI additionally walks a
returned dict through ``jsonable_encoder`` first. orjson writes the same compact UTF-8
JSON several times faster (docs/bench/history.md). Routes that already hold plain data
return :class:`FastJSONResponse` themselves, which also skips ``jsonable_encoder``.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse


class FastJSONResponse(JSONResponse):
    """``application/json`` rendered by orjson (non-string keys become strings, as in
    the stdlib encoder)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
