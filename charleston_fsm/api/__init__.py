"""The HTTP service: a thin FastAPI layer over the event store (see ``docs/api.md``)."""

from .app import create_app

__all__ = ["create_app"]
