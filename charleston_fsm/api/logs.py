"""Structured logs: one JSON object per line, with the game id on every line of a request.

Nothing here ever formats a request body or a refusal's message: those may name tiles.
Request lines carry the method, path, status, duration, role and command type only.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any

game_id_var: ContextVar[str | None] = ContextVar("game_id", default=None)
request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)

log = logging.getLogger("charleston_fsm.api")

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}


class JsonLines(logging.Formatter):
    """``{"ts": ..., "level": ..., "logger": ..., "msg": ..., "game_id": ...}``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        game_id = getattr(record, "game_id", None) or game_id_var.get()
        if game_id:
            line["game_id"] = game_id
        request_id = request_id_var.get()
        if request_id:
            line["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in line and not key.startswith("_"):
                line[key] = value
        if record.exc_info and record.exc_info[0] is not None:
            # the type and the frames only: an exception's message may quote tiles
            import traceback

            line["error"] = record.exc_info[0].__name__
            line["traceback"] = "".join(traceback.format_tb(record.exc_info[2]))
        return json.dumps(line, default=str)


def logging_config(level: str = "INFO") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` that puts the service's and uvicorn's logs in JSON lines."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonLines}},
        "handlers": {"stderr": handler},
        # everything else too (asyncio's "socket.send() raised exception." when a stream's
        # client went away mid-burst, say): one format for every line of the process
        "root": {"handlers": ["stderr"], "level": "WARNING"},
        "loggers": {
            "charleston_fsm": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def configure(level: str = "INFO") -> None:
    import logging.config

    logging.config.dictConfig(logging_config(level))


def _stderr_fallback() -> None:  # pragma: no cover - used when nothing configured logging
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonLines())
        log.addHandler(handler)
        log.setLevel(logging.INFO)
