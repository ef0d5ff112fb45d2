"""A director's audit of one game, read from its event rows alone.

Per pass: who confirmed (or changed, or withdrew) what and when, who gave which tiles
to whom, and the route of every tile forwarded blind. Then the votes, courtesy offers
and agreements, placements, declarations, the end, and the hash chain's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ...engine.rulesets import get_ruleset
from ...engine.tiles import describe
from ...ledger.hashing import canonical_time

if TYPE_CHECKING:
    from ...ledger.rows import StoredEvent
    from ...ledger.verify import Verification

_ACTIONS = {
    "pass_confirmed": "confirmed",
    "pass_changed": "changed",
    "pass_withdrawn": "withdrawn",
    "ding_dong_given": "gives",
}


@dataclass
class Confirmation:
    seq: int
    at: str
    seat: str
    action: str  # confirmed | changed | withdrawn
    tiles: list[int]
    blind: int


@dataclass
class Transfer:
    seq: int
    at: str
    giver: str
    receiver: str
    from_hand: list[int]
    forwarded: list[int]
    kept: list[int]


@dataclass
class PassAudit:
    number: int
    step: str
    label: str
    confirmations: list[Confirmation] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    blind_routes: dict[str, list[str]] = field(default_factory=dict)
    moved: bool | None = None
    blind: bool | None = None
    resolved_seq: int | None = None
    resolved_at: str | None = None


@dataclass
class AuditReport:
    game_id: str
    ruleset: str
    options: dict[str, Any]
    players: dict[str, Any]
    created_at: str
    #: the deal's seed as text (its digits: seeds pass what a JavaScript number holds)
    seed: str | None
    deal: dict[str, Any]
    last_seq: int
    passes: list[PassAudit] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    courtesy_offers: list[dict[str, Any]] = field(default_factory=list)
    courtesy_agreements: list[dict[str, Any]] = field(default_factory=list)
    placements: list[dict[str, Any]] = field(default_factory=list)
    declarations: list[dict[str, Any]] = field(default_factory=list)
    ding_dong: list[dict[str, Any]] = field(default_factory=list)  # requests, Ready, closing
    # the start, expiries, late flags, pauses, extensions
    clock: list[dict[str, Any]] = field(default_factory=list)
    rulings: list[dict[str, Any]] = field(default_factory=list)
    #: who sat each seat when: from the deal (a player's name or the bot), then each
    #: ``seat_taken`` row (the bot, a person and the director's label, a new token), each
    #: with the ``name`` and ``player_id`` of whoever holds the seat's token then
    seating: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)  # calls and their answers
    spectators: list[dict[str, Any]] = field(default_factory=list)  # links issued, revoked
    ended: dict[str, Any] | None = None
    verification: dict[str, Any] = field(default_factory=dict)
    #: the round the game is a table of (id, name, table number, label); None if none
    round: dict[str, Any] | None = None
    #: the platform's id of each seat's player at the deal (``seating`` says who after)
    player_ids: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def _taken(self) -> list[dict[str, Any]]:
        """The seat changes after the deal, in the order they happened."""
        rows = [e for entries in self.seating.values() for e in entries if e["seq"] > 1]
        return sorted(rows, key=lambda e: e["seq"])

    def to_text(self) -> str:
        title = get_ruleset(self.ruleset).title
        lines = [
            f"Audit of game {self.game_id} ({self.ruleset}: {title})",
            f"Created {self.created_at}"
            + (f", seed {self.seed}" if self.seed is not None else "")
            + f"; {self.last_seq} event rows.",
        ]
        if self.round:
            named = self.round.get("label")
            label = f" ({named})" if named and named != f"Table {self.round['table']}" else ""
            lines.append(
                f"Table {self.round['table']}{label} of round "
                f"{self.round.get('name') or self.round['id']}"
            )
        if self.players:
            lines.append(
                "Players: " + ", ".join(f"{s.capitalize()} {n}" for s, n in self.players.items())
            )
        v = self.verification
        chain = "intact" if v.get("ok") else f"BROKEN at seq {v.get('first_bad_seq')}"
        lines.append(f"Hash chain: {chain} ({v.get('message')})")
        lines.append("Deal:")
        for seat, hand in self.deal["hands"].items():
            lines.append(f"  {seat.capitalize():<6} {describe(hand)}")
        for p in self.passes:
            lines.append("")
            status = (
                f"resolved at seq {p.resolved_seq}, {_clock(p.resolved_at)}"
                if p.resolved_seq
                else "not resolved yet"
            )
            extra = " (blind pass)" if p.blind else ""
            extra += "; nothing moved" if p.moved is False else ""
            lines.append(f"Pass {p.number}: {p.label} [{p.step}], {status}{extra}")
            for c in p.confirmations:
                blind = f" + {c.blind} blind" if c.blind else ""
                what = "" if c.action == "withdrawn" else f" {describe(c.tiles) or '(none)'}{blind}"
                lines.append(
                    f"  {_clock(c.at)}  seq {c.seq:<4} {c.seat.capitalize():<6} {c.action}{what}"
                )
            for t in p.transfers:
                fwd = f", forwards unseen {describe(t.forwarded)}" if t.forwarded else ""
                lines.append(
                    f"  seq {t.seq:<4} {t.giver.capitalize()} -> {t.receiver.capitalize()}: "
                    f"{describe(t.from_hand) or '(none from hand)'}{fwd}"
                )
            for tile, route in p.blind_routes.items():
                path = " -> ".join(s.capitalize() for s in route)
                lines.append(f"  blind route {describe([int(tile)])}: {path}")
        sections = [
            ("Votes", self.votes, _vote_line),
            (
                "Courtesy offers",
                self.courtesy_offers,
                lambda e: f"{e['seat'].capitalize()} offers {e['count']}",
            ),
            (
                "Courtesy agreements",
                self.courtesy_agreements,
                lambda e: (
                    f"{' and '.join(s.capitalize() for s in e['pair'])} agree on {e['count']}"
                ),
            ),
            (
                "Placements",
                self.placements,
                lambda e: f"{e['seat'].capitalize()} places {describe(e['tiles'])}",
            ),
            ("Ding Dong", self.ding_dong, _ding_dong_line),
            ("Clock", self.clock, _clock_line),
            ("Seats taken", self._taken(), _seat_line),
            ("Calls to the director", self.calls, _call_line),
            ("Spectator link", self.spectators, _spectator_line),
            (
                "Rulings",
                self.rulings,
                lambda e: (
                    f"{e['kind'].upper()}"
                    + (f" ({e['seat'].capitalize()})" if e["seat"] else "")
                    + f": {e['text']}"
                ),
            ),
            (
                "Declarations",
                self.declarations,
                _declaration_line,
            ),
        ]
        for title_, entries, render in sections:
            if entries:
                lines.append("")
                lines.append(f"{title_}:")
                for e in entries:
                    lines.append(f"  {_clock(e['at'])}  seq {e['seq']:<4} {render(e)}")
        lines.append("")
        if self.ended:
            lines.append(
                f"Charleston over at seq {self.ended['seq']}, {_clock(self.ended['at'])}: "
                f"{self.ended['reason']}"
            )
        else:
            lines.append("The Charleston is not over yet.")
        return "\n".join(lines)


def _clock(at: str | None) -> str:
    """``2026-11-21T07:30:27.123456Z`` as ``07:30:27.123``."""
    return at[11:23] if at else "?"


def build_audit(rows: Sequence[StoredEvent], verification: Verification) -> AuditReport:
    setup = rows[0].payload
    rules = get_ruleset(setup["ruleset"])
    report = AuditReport(
        game_id=rows[0].game_id,
        ruleset=setup["ruleset"],
        options=setup["options"],
        players=setup.get("players") or {},
        created_at=canonical_time(rows[0].created_at),
        seed=None if setup.get("seed") is None else str(setup["seed"]),
        deal=setup["deal"],
        last_seq=rows[-1].seq,
        verification=verification.to_dict(),
        seating=_first_seating(rows[0]),
        player_ids=setup.get("player_ids") or {},
    )
    passes: list[PassAudit] = []
    open_passes: dict[str, PassAudit] = {}  # a step can be played again (a Ding Dong)

    def pass_of(step: str) -> PassAudit:
        if step not in open_passes:
            label = rules.steps[step].label if step in rules.steps else step
            open_passes[step] = PassAudit(number=len(passes) + 1, step=step, label=label)
            passes.append(open_passes[step])
        return open_passes[step]

    for row in rows[1:]:
        p, at, seat = row.payload, canonical_time(row.created_at), row.seat
        if row.type in _ACTIONS and row.step:
            pass_of(row.step).confirmations.append(
                Confirmation(
                    seq=row.seq,
                    at=at,
                    seat=seat or "",
                    action=_ACTIONS[row.type],
                    tiles=list(p.get("tiles", [g["tile"] for g in p.get("gifts", [])])),
                    blind=p.get("blind", 0),
                )
            )
        elif row.type == "tiles_transferred":
            pass_of(p["step"]).transfers.append(
                Transfer(
                    seq=row.seq,
                    at=at,
                    giver=seat or "",
                    receiver=p["receiver"],
                    from_hand=list(p["from_hand"]),
                    forwarded=list(p["forwarded"]),
                    kept=list(p["kept"]),
                )
            )
        elif row.type == "pass_resolved":
            audit = open_passes.pop(p["step"], None) or pass_of(p["step"])
            audit.moved, audit.blind = p["moved"], p["blind"]
            audit.resolved_seq, audit.resolved_at = row.seq, at
            audit.blind_routes = {t: r for t, r in p["routes"].items() if len(r) > 2}
        elif row.type == "vote_cast":
            vote = {"seq": row.seq, "at": at, "seat": seat, "choice": p["choice"]}
            if p.get("late"):  # an objection after four continues (nmjl)
                vote.update(late=True, step=p["step"], dropped=p["dropped"])
            report.votes.append(vote)
        elif row.type == "courtesy_offered":
            report.courtesy_offers.append(
                {"seq": row.seq, "at": at, "seat": seat, "count": p["count"]}
            )
        elif row.type == "courtesy_agreed":
            report.courtesy_agreements.append(
                {"seq": row.seq, "at": at, "pair": p["pair"], "count": p["count"]}
            )
        elif row.type == "tiles_placed":
            report.placements.append(
                {"seq": row.seq, "at": at, "seat": seat, "tiles": list(p["tiles"])}
            )
        elif row.type == "mah_jongg_declared":
            report.declarations.append(
                {
                    "seq": row.seq,
                    "at": at,
                    "seat": seat,
                    "kind": p["kind"],
                    "verdict": p["verdict"],
                }
            )
        elif row.type == "declaration_judged":
            report.declarations.append(
                {"seq": row.seq, "at": at, "seat": None, "judged": True, **p}
            )
            if p["kind"] == "heavenly" and p["verdict"] == "invalid":
                report.ended = None  # set aside: the Charleston is played after all
        elif row.type in ("ding_dong_requested", "ready_declared", "ding_dong_closed"):
            report.ding_dong.append({"seq": row.seq, "at": at, "seat": seat, "type": row.type, **p})
        elif row.type == "charleston_ended":
            report.ended = {"seq": row.seq, "at": at, "reason": p["reason"]}
        elif row.type in _CLOCK_ROWS:
            report.clock.append({"seq": row.seq, "at": at, "seat": seat, "type": row.type, **p})
        elif row.type == "seat_taken" and seat:
            report.seating.setdefault(seat, []).append(_seat_change(row.seq, at, seat, p, report))
        elif row.type in ("director_called", "call_answered"):
            report.calls.append({"seq": row.seq, "at": at, "seat": seat, "type": row.type, **p})
        elif row.type == "spectator_link":
            report.spectators.append({"seq": row.seq, "at": at, **p})
        elif row.type == "ruling_recorded":
            report.rulings.append({"seq": row.seq, "at": at, "seat": seat, **p})
    report.passes = passes
    return report


__all__ = ["AuditReport", "Confirmation", "PassAudit", "Transfer", "build_audit"]


def _vote_line(vote: dict[str, Any]) -> str:
    line = f"{vote['seat'].capitalize()} votes {vote['choice']}"
    if vote.get("late"):
        dropped = ", ".join(s.capitalize() for s in vote["dropped"]) or "none"
        line += (
            f": a late objection during {vote['step']}, before its first pass resolved "
            f"(confirmed choices dropped: {dropped})"
        )
    return line


_CLOCK_ROWS = frozenset(
    {
        "clock_expired",
        "seat_late",
        "clock_paused",
        "clock_resumed",
        "game_started",
        "seat_arrived",
        "time_extended",
    }
)


def _first_seating(created: StoredEvent) -> dict[str, list[dict[str, Any]]]:
    """Who sat each seat at the deal: the service's bot, or a person (the player's name)."""
    setup = created.payload
    bots = set(setup.get("bots") or ())
    players = setup.get("players") or {}
    ids = setup.get("player_ids") or {}
    at = canonical_time(created.created_at)
    return {
        seat: [
            {
                "seq": 1,
                "at": at,
                "seat": seat,
                "by": "bot" if seat in bots else "human",
                "label": None if seat in bots else players.get(seat),
                "token_replaced": False,
                "name": players.get(seat),
                "player_id": ids.get(seat),
            }
        ]
        for seat in ("east", "south", "west", "north")
    }


def _seat_change(
    seq: int, at: str, seat: str, p: dict[str, Any], report: AuditReport
) -> dict[str, Any]:
    """A ``seat_taken`` row as a seating entry: a substitute's own ``name`` and
    ``player_id``; else (the bot, a hand back) those of whoever holds the seat's token."""
    before = (report.seating.get(seat) or [{}])[-1]
    who = {"name": before.get("name"), "player_id": before.get("player_id")}
    if p.get("token_replaced"):
        who = {"name": p.get("name"), "player_id": p.get("player_id")}
    return {"seq": seq, "at": at, "seat": seat, **p, **who}


def start_how(payload: Mapping[str, Any]) -> str:
    """How a held table started: at its time, when its players arrived, or by the director."""
    if payload.get("scheduled"):
        return "at its start time"
    return "once every player had opened their page" if payload.get("seated") else "by the director"


def _round(entry: dict[str, Any]) -> str:
    return " (the whole round)" if entry.get("round") else ""


def _clock_line(entry: dict[str, Any]) -> str:
    """Which seat ran out of time and what was done in its name; pauses and resumes,
    the start and the time added."""
    if entry["type"] == "clock_paused":
        return "The director pauses the clock" + _round(entry)
    if entry["type"] == "clock_resumed":
        return f"The director resumes the clock (paused {entry['paused_seconds']:.1f} s)" + _round(
            entry
        )
    if entry["type"] == "seat_arrived":
        left = ", ".join(s.capitalize() for s in entry["waiting"]) or "nobody"
        return f"{entry['seat'].capitalize()} opens the table's page (still awaited: {left})"
    if entry["type"] == "game_started":
        how = start_how(entry)
        return (
            f"The table starts {how}{_round(entry)}, at {_clock(entry['at'])} "
            f"(held {entry['held_seconds']:.1f} s)"
        )
    if entry["type"] == "time_extended":
        who = entry["seat"].capitalize() if entry["seat"] else "every awaited seat"
        why = f": {entry['reason']}" if entry["reason"] else ""
        return f"The director adds {entry['seconds']} s for {who}{why}"
    who = entry["seat"].capitalize()
    limit = f"{entry['kind']}, {entry['seconds']:g} s, due {_clock(entry['due_at'])}"
    if entry["type"] == "seat_late":
        return f"{who} ran out of time ({limit}): flagged late"
    return f"{who} ran out of time ({limit}): the clock {entry['done']} in its name"


def _seat_line(entry: dict[str, Any]) -> str:
    """A seat taken by the bot, or by a person (with a new token, if it was replaced)."""
    seat = entry["seat"]
    person = entry.get("name") or entry["label"] or "a person"
    if entry["token_replaced"] and entry.get("name") and entry["label"]:
        person = f"{entry['name']} ({entry['label']})"
    who = "the service's bot" if entry["by"] == "bot" else person
    token = " with a new token" if entry["token_replaced"] else ""
    pid = f" [player id {entry['player_id']}]" if entry.get("player_id") else ""
    return f"{seat.capitalize()} is played by {who}{token}{pid}"


def _call_line(entry: dict[str, Any]) -> str:
    who = entry["seat"].capitalize()
    if entry["type"] == "director_called":
        return f"{who} calls the director" + (f": {entry['reason']}" if entry["reason"] else "")
    return (
        f"The director answers {who}'s call: {entry['answer']} "
        f"(waited {entry['waited_seconds']:.0f} s)"
    )


def _spectator_line(entry: dict[str, Any]) -> str:
    if entry["action"] == "revoked":
        return "The spectator link is revoked"
    if entry.get("live"):
        return "A live spectator link is issued (a featured table: no delay)"
    return f"A spectator link is issued (delay {entry['delay']} s)"


def _declaration_line(entry: dict[str, Any]) -> str:
    """A declaration, or the director's verdict on it (NMJL-21)."""
    if entry.get("judged"):
        return f"The director judges the {entry['kind']} hand {entry['verdict']}: {entry['text']}"
    who = entry["seat"].capitalize()
    return f"{who} declares Mah Jongg ({entry['kind']} hand, {entry['verdict']})"


def _ding_dong_line(entry: dict[str, Any]) -> str:
    who = (entry["seat"] or "the director").capitalize()
    if entry["type"] == "ding_dong_requested":
        return f"{who} requests Ding Dong number {entry['number']}"
    if entry["type"] == "ready_declared":
        return f"{who} declares Ready: no more Ding Dong"
    return f"{who} closes the Ding Dong window"
