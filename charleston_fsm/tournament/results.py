"""A round's results for the tournament's books: per table its end, late seats, who sat
each seat when (a person, a substitute, the bot: names and the platform's player ids),
rulings and verdicts, as JSON or CSV
(no tiles: a spreadsheet is shared more widely than a desk)."""

from __future__ import annotations

from typing import Any

from ..engine.seats import SEATS
from .spreadsheet import csv_sheet

COLUMNS = (
    "table",
    "game_id",
    "label",
    "players",
    "player_ids",
    "finished",
    "finished_at",
    "ending",
    "ended_reason",
    "late_seats",
    "seats",
    "rulings",
    "verdicts",
    "quarantined",
)


def table_heading(row: Any, labels: list[str]) -> dict[str, Any]:
    """What names one table of a round's listing in every report of the round (results,
    a duplicate round's comparison): its number, game, label and who sits each seat."""
    return {
        "table": row.table,
        "game_id": row.game_id,
        "label": labels[row.table - 1] if row.table - 1 < len(labels) else None,
        "players": dict(row.players or {}),
    }


def round_results(store: Any, round_id: str) -> dict[str, Any]:
    """Every table of the round with what its audit says (quarantined tables: the listing)."""
    listing = store.rounds.round_listing(round_id)
    labels = (listing.settings or {}).get("labels") or []
    tables = []
    for row in listing.tables:
        entry: dict[str, Any] = {
            **table_heading(row, labels),
            "player_ids": {},
            "finished": row.finished,
            "finished_at": None,
            "ending": row.ending,
            "ended_reason": row.ended_reason,
            "late_seats": list(row.late),
            "seats": {},
            "rulings": [],
            "verdicts": [],
            "quarantined": row.quarantined,
        }
        if not row.quarantined:
            audit = store.auditor.audit(row.game_id)
            entry["player_ids"] = {
                seat: entries[-1]["player_id"]
                for seat, entries in audit.seating.items()
                if entries[-1].get("player_id")
            }
            if audit.ended and row.finished:
                entry["finished_at"] = audit.ended["at"]
            entry["seats"] = {
                seat: [
                    {
                        k: e.get(k)
                        for k in ("seq", "at", "by", "name", "player_id", "label", "token_replaced")
                    }
                    for e in entries
                ]
                for seat, entries in audit.seating.items()
            }
            entry["rulings"] = [
                {k: r[k] for k in ("seq", "at", "seat", "kind", "text")} for r in audit.rulings
            ]
            entry["verdicts"] = [
                {"seq": d["seq"], "at": d["at"], "kind": d["kind"], "verdict": d["verdict"]}
                for d in audit.declarations
            ]
        tables.append(entry)
    return {"round_id": listing.round_id, "name": listing.name, "tables": tables}


def results_csv(results: dict[str, Any]) -> str:
    """One line per table; rulings and verdicts as readable text in one cell each (written
    by :func:`~.spreadsheet.csv_sheet`: a name cannot run as a formula)."""
    return csv_sheet(COLUMNS, (_results_line(t) for t in results["tables"]))


def _results_line(t: dict[str, Any]) -> dict[str, Any]:
    """One table's line, by column: its number as a number, the rest as text."""
    rulings = "; ".join(
        f"{r['kind']}{' ' + r['seat'] if r['seat'] else ''}: {r['text']}" for r in t["rulings"]
    )
    return {
        "table": t["table"],
        "game_id": t["game_id"],
        "label": t["label"] or "",
        "players": _by_seat(t.get("players") or {}),
        "player_ids": _by_seat(t.get("player_ids") or {}),
        "finished": "yes" if t["finished"] else "no",
        "finished_at": t["finished_at"] or "",
        "ending": t.get("ending") or "",
        "ended_reason": t["ended_reason"] or "",
        "late_seats": " ".join(t["late_seats"]),
        "seats": _seats(t["seats"]),
        "rulings": rulings,
        "verdicts": "; ".join(f"{v['kind']} {v['verdict']}" for v in t["verdicts"]),
        "quarantined": "yes" if t["quarantined"] else "no",
    }


def _by_seat(values: dict[str, Any]) -> str:
    """``East Ann; South Bea``: in the seats' order (a database may keep a map's keys in
    another)."""
    return "; ".join(f"{s.label} {values[s.value]}" for s in SEATS if values.get(s.value))


def _seats(seats: dict[str, list[dict[str, Any]]]) -> str:
    """Who sat each seat, in turn: ``east: Ann; north: Bo [p-7], then bot from seq 40``
    (a person by name, else the director's label; their player id in brackets)."""
    parts = []
    for seat in [s.value for s in SEATS if s.value in seats]:
        entries = seats[seat]
        names = []
        for e in entries:
            person = e.get("name") or e["label"] or "player"
            if e.get("player_id"):
                person += f" [{e['player_id']}]"
            who = "bot" if e["by"] == "bot" else person
            names.append(who if e["seq"] == 1 else f"{who} from seq {e['seq']}")
        parts.append(f"{seat}: {', then '.join(names)}")
    return "; ".join(parts)
