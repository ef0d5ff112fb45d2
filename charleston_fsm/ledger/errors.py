"""The ledger's refusals: typed like the engine's and the store's (one family of errors,
mapped to HTTP by ``code`` and ``kind``), without the store's database behind them."""

from __future__ import annotations

from ..engine.errors import CharlestonError, SetupError


class EventNotFound(CharlestonError):
    """A game's record has no event at the seq asked for."""

    kind = "not_found"
    code = "event_not_found"
    rule = "SVC-07"


class RecordNotExportable(SetupError):
    """The stored record does not verify: it is not signed for anyone (``record.py``)."""

    code = "record_not_exportable"
    rule = "SVC-08"
