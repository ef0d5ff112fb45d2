"""A round's results for the tournament's books: per table its end, late seats, who sat
each seat when (a person, a substitute, the bot), rulings and verdicts, as JSON or CSV
(no tiles: a spreadsheet is shared more widely than a desk)."""

from __future__ import annotations

import csv
import io
from typing import Any

COLUMNS = (
    "table",
    "game_id",
    "label",
    "players",
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


def round_results(store: Any, round_id: str) -> dict[str, Any]:
    """Every table of the round with what its audit says (quarantined tables: the listing)."""
    listing = store.rounds.round_listing(round_id)
    labels = (listing.settings or {}).get("labels") or []
    tables = []
    for row in listing.tables:
        entry: dict[str, Any] = {
            "table": row.table,
            "game_id": row.game_id,
            "label": labels[row.table - 1] if row.table - 1 < len(labels) else None,
            "players": dict(row.players or {}),
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
            if audit.ended and row.finished:
                entry["finished_at"] = audit.ended["at"]
            entry["seats"] = {
                seat: [
                    {k: e[k] for k in ("seq", "at", "by", "label", "token_replaced")}
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
    """One line per table; rulings and verdicts as readable text in one cell each."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for t in results["tables"]:
        rulings = "; ".join(
            f"{r['kind']}{' ' + r['seat'] if r['seat'] else ''}: {r['text']}" for r in t["rulings"]
        )
        verdicts = "; ".join(f"{v['kind']} {v['verdict']}" for v in t["verdicts"])
        writer.writerow(
            [
                t["table"],
                t["game_id"],
                t["label"] or "",
                "; ".join(f"{s.capitalize()} {n}" for s, n in t.get("players", {}).items()),
                "yes" if t["finished"] else "no",
                t["finished_at"] or "",
                t.get("ending") or "",
                t["ended_reason"] or "",
                " ".join(t["late_seats"]),
                _seats(t["seats"]),
                rulings,
                verdicts,
                "yes" if t["quarantined"] else "no",
            ]
        )
    return out.getvalue()


def _seats(seats: dict[str, list[dict[str, Any]]]) -> str:
    """Who sat each seat, in turn: ``east: Ann; north: Bo, then bot at seq 40``."""
    parts = []
    for seat, entries in seats.items():
        names = []
        for e in entries:
            who = "bot" if e["by"] == "bot" else (e["label"] or "player")
            names.append(who if e["seq"] == 1 else f"{who} from seq {e['seq']}")
        parts.append(f"{seat}: {', then '.join(names)}")
    return "; ".join(parts)
