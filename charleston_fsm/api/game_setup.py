"""A new table's setup: the checked create-game request, its tokens and its links.

``POST /v1/games`` and each table of ``POST /v1/rounds`` go through :func:`table_setup`
(one path for both); the seat, spectator and desk pages are linked with their secret
after ``#`` (:func:`page_links`), which the seats' and spectators' routes hand out too.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from ..engine.rulesets import get_ruleset
from ..store import NewGame
from .auth import ROLES, new_token, token_hash
from .problems import ApiProblem
from .schemas import CreateGame
from .starts import parse_start, start_args


@dataclass(frozen=True)
class TableSetup:
    """A checked create-game request: the game the store makes and the tokens to hand out."""

    ruleset: str
    options: dict[str, Any]
    tokens: dict[str, str]
    game: NewGame

    def created(self, game_id: str) -> dict[str, Any]:
        """The answer naming the new game: its tokens (shown once), links and the delay
        of its spectator link."""
        base = f"/v1/games/{game_id}"
        assert self.game.spectator is not None  # every table's link is made with it
        _, delay, live = self.game.spectator
        return {
            "game_id": game_id,
            "ruleset": self.ruleset,
            "options": self.options,
            "tokens": self.tokens,
            "links": {
                "self": base,
                "commands": f"{base}/commands",
                "events": f"{base}/events",
                "stream": f"{base}/stream",
                **page_links(game_id, self.tokens),
            },
            "spectator": {"delay": 0 if live else delay, "live": live or delay == 0},
        }


def page_links(game_id: str, tokens: dict[str, str]) -> dict[str, str]:
    """The page of each seat, of the director's desk and of spectators, its secret after
    ``#``.

    A browser never sends the fragment to a server, so a platform may hand these out as
    they are: the page takes the token from it and keeps it for the tab only.
    """
    pages = {role: seat_page(game_id, t) for role, t in tokens.items()}
    pages["director"] = f"/desk/{game_id}#token={tokens['director']}"
    if "spectator" in tokens:
        pages["spectator"] = spectator_page(game_id, tokens["spectator"])
    return pages


def seat_page(game_id: str, token: str) -> str:
    """A seat's page, its secret after ``#``."""
    return f"/table/{game_id}#token={token}"


def spectator_page(game_id: str, token: str) -> str:
    """A table's spectator page, its secret after ``#``."""
    return f"/watch/{game_id}#token={token}"


def table_setup(body: CreateGame) -> TableSetup:
    """The game (a ``NewGame``) that ``store.registry.create_game`` makes for a create-game
    request, with fresh tokens (a game's and each table of a round's: one path for both)."""
    if body.seed is not None and body.hands is not None:
        raise ApiProblem(
            422,
            "seed_or_hands",
            "Give either a seed or explicit hands, not both.",
            kind="setup",
            rule="SVC-03",
        )
    ruleset = get_ruleset(body.ruleset)
    options = ruleset.options(body.options)
    seed = body.seed
    if seed is None and body.hands is None:
        seed = secrets.randbits(62)
    tokens = {role: new_token() for role in (*ROLES, "spectator")}
    return TableSetup(
        ruleset=ruleset.name,
        options=options.model_dump(mode="json"),
        tokens=tokens,
        game=NewGame(
            ruleset=ruleset.name,
            options=body.options or None,
            seed=seed,
            hands={s.value: list(t) for s, t in body.hands.items()} if body.hands else None,
            players={s.value: n for s, n in body.players.items()} if body.players else None,
            player_ids={s.value: i for s, i in body.player_ids.items()}
            if body.player_ids
            else None,
            credentials={role: token_hash(tokens[role]) for role in ROLES},
            clock=body.clock,
            bots=[s.value for s in body.bots] if body.bots else None,
            pace=body.bot_pace,
            spectator=(token_hash(tokens["spectator"]), body.spectator_delay, False),
            **start_args(parse_start(body.start), frozenset(s.value for s in body.bots or ())),
        ),
    )
