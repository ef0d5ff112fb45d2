"""A duplicate round's comparison: every table was dealt the same tiles to the same winds,
so what each seat passed at each step, where each table's Charleston stopped and the
courtesy counts can be set side by side (bridge's duplicate movement, for the Charleston).

Read from each table's audit (its event rows, verified), never from the round's own
claim. The comparison is for the round's director only, and tiles are held back until
every table's Charleston has ended: the tables share one deal, so a pass shown from a
finished table tells the players of a table still passing what their neighbours hold.
Until then a finished table's row says where it stopped, its votes and courtesy counts
(no tile), and a table still playing says only that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.seats import SEATS
from ..engine.tiles import Deal, describe
from .results import table_heading
from .spreadsheet import csv_sheet

#: why the tiles are not shown yet (the JSON's ``withheld``, the page's sentence)
WITHHELD = (
    "The tiles are shown once every table's Charleston has ended: every table holds the "
    "same tiles, so a pass shown now would tell the players of a table still passing what "
    "their neighbours hold."
)

COLUMNS = (
    "table",
    "game_id",
    "label",
    "seat",
    "player",
    "pass",
    "step",
    "step_label",
    "to",
    "tiles",
    "unseen",
    "stopped",
    "stopped_after",
    "ending",
    "votes",
    "courtesy_offer",
    "courtesy_agreed",
)


class NotDuplicate(LookupError):
    """The round deals each table its own tiles: there is nothing to compare."""


def is_duplicate(settings: dict[str, Any] | None) -> bool:
    return (settings or {}).get("deal") == "duplicate"


def round_comparison(store: Any, round_id: str) -> dict[str, Any]:
    """The comparison of a duplicate round's tables (``NotDuplicate`` for another round)."""
    listing = store.rounds.round_listing(round_id)
    settings = listing.settings or {}
    if not is_duplicate(settings):
        raise NotDuplicate(round_id)
    labels = settings.get("labels") or []
    complete = bool(listing.tables) and all(
        t.finished and not t.quarantined for t in listing.tables
    )
    dealt = Deal.shuffled(int(settings["deal_seed"])).to_dict()["hands"]
    tables = []
    for row in listing.tables:
        entry: dict[str, Any] = {
            **table_heading(row, labels),
            "finished": row.finished,
            "held": bool((row.clock or {}).get("held")),  # not started yet
            "quarantined": row.quarantined,
            "ending": row.ending if row.finished else None,
            "ended_reason": row.ended_reason if row.finished else None,
            "stopped": None,
            "passes": [],
            "stopped_after": None,
            "courtesy": [],
            "seats": {},
            "deal_matches": None,
        }
        if row.finished and not row.quarantined:
            audit = store.auditor.audit(row.game_id)
            entry["deal_matches"] = audit.deal["hands"] == dealt
            ending = store.reads.view(row.game_id)["game"]["ending"] or {}
            entry["stopped"] = {"how": ending.get("how"), "by": list(ending.get("by") or ())}
            _fill(entry, audit, with_tiles=complete)
        tables.append(entry)
    return {
        "round_id": listing.round_id,
        "name": listing.name,
        "deal": "duplicate",
        "complete": complete,
        "withheld": None if complete else WITHHELD,
        "deal_seed": settings.get("deal_seed") if complete else None,
        "hands": dealt if complete else None,
        "tables": tables,
    }


def _fill(entry: dict[str, Any], audit: Any, *, with_tiles: bool) -> None:
    """A finished table's row from its audit: its passes, where it stopped, each seat's
    votes and courtesy count, and (``with_tiles``) what each seat passed at each step."""
    resolved = [p for p in audit.passes if p.resolved_seq is not None]
    entry["passes"] = [{"number": p.number, "step": p.step, "label": p.label} for p in resolved]
    if resolved:
        last = resolved[-1]
        entry["stopped_after"] = {"number": last.number, "step": last.step, "label": last.label}
    entry["courtesy"] = [
        {"pair": list(a["pair"]), "count": a["count"]} for a in audit.courtesy_agreements
    ]
    agreed = {s: a["count"] for a in audit.courtesy_agreements for s in a["pair"]}
    offers = {o["seat"]: o["count"] for o in audit.courtesy_offers}  # the last offer counts
    for seat in (s.value for s in SEATS):
        passed = None
        if with_tiles:
            passed = [
                {
                    "number": p.number,
                    "step": p.step,
                    "label": p.label,
                    "to": t.receiver,
                    "tiles": list(t.from_hand),
                    "unseen": list(t.forwarded),
                }
                for p in resolved
                for t in p.transfers
                if t.giver == seat
            ]
        entry["seats"][seat] = {
            "player": entry["players"].get(seat),
            "passes": passed,
            "votes": [v["choice"] for v in audit.votes if v["seat"] == seat],
            "courtesy_offer": offers.get(seat),
            "courtesy_agreed": agreed.get(seat),
        }


def comparison_csv(comparison: dict[str, Any]) -> str:
    """One line per table, seat and pass (a seat with no pass shown: one line without;
    a table still playing: one line that says so); tiles as faces with their ids
    (``5B#17``), the tiles passed on unseen apart. Written by
    :func:`~.spreadsheet.csv_sheet`: a player's name cannot run as a formula."""
    return csv_sheet(COLUMNS, _comparison_lines(comparison))


def _comparison_lines(comparison: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The comparison's lines, by column: numbers (table, pass, counts) as numbers."""
    for t in comparison["tables"]:
        line = {"table": t["table"], "game_id": t["game_id"], "label": t["label"] or ""}
        if not t["seats"]:  # still playing, or quarantined: no seat's line yet
            yield {**line, "ending": "quarantined" if t["quarantined"] else "playing"}
            continue
        stopped = t["stopped_after"]
        for seat, s in t["seats"].items():
            seat_line = {
                **line,
                "seat": seat,
                "player": s["player"] or "",
                "stopped": (t["stopped"] or {}).get("how") or "",
                "stopped_after": f"{stopped['number']} {stopped['label']}" if stopped else "",
                "ending": t["ending"] or "",
                "votes": " ".join(s["votes"]),
                "courtesy_offer": _count(s["courtesy_offer"]),
                "courtesy_agreed": _count(s["courtesy_agreed"]),
            }
            for p in s["passes"] or []:
                yield {
                    **seat_line,
                    "pass": p["number"],
                    "step": p["step"],
                    "step_label": p["label"],
                    "to": p["to"],
                    "tiles": describe(p["tiles"]),
                    "unseen": describe(p["unseen"]),
                }
            if not s["passes"]:
                yield seat_line


def _count(value: int | None) -> int | str:
    """A courtesy count as a number; empty where there is none."""
    return "" if value is None else value
