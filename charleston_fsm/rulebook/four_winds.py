"""The Four Winds program's Charleston and its Ding Dong (``four_winds``)."""

from __future__ import annotations

from .model import Rule
from .model import Source as S

FW = ("four_winds",)
SIX = "the player who is East (dealer) exchanges three tiles with West"

RULES: tuple[Rule, ...] = (
    Rule(
        "FW-01",
        "The Charleston is six exchanges between two players, one after the other: East and "
        "West, South and North, East and South, West and North, East and North, West and "
        "South; 3 tiles each way, 9 per player in all.",
        FW,
        (
            S("fw-help", "Charleston", SIX),
            S("fw-rules", "4.1 Charleston", "Each player passes the total of nine tiles."),
        ),
        decision='The help\'s "West with Sound" is read as West with South.',
    ),
    Rule(
        "FW-02",
        "In each exchange the first-named player gives first; the other gives 3 tiles from "
        "its own hand, never the tiles it is receiving: there is no blind pass.",
        FW,
        (S("fw-help", "Note", "Four Winds does not support this rule."),),
        decision=(
            "The received tiles lie face down until the exchange is complete. A second player "
            "naming a tile that is not in its own hand gets the same refusal whichever tile it "
            "is, so the refusal never tells which tiles are on their way."
        ),
    ),
    Rule(
        "FW-03",
        "Jokers may not be passed in any exchange.",
        FW,
        (S("fw-rules", "4.1 Charleston", "Jokers, if they are used cannot be passed."),),
    ),
    Rule(
        "FW-04",
        "Ding Dong: at East's request a further exchange in which every player gives one "
        "tile to each of the three others, all at once.",
        FW,
        (
            S(
                "fw-rules",
                "4.2 Ding Dong",
                "each player passes only one tile to each of the other players",
            ),
        ),
    ),
    Rule(
        "FW-05",
        "Ding Dong may be repeated up to three times in a deal; the maximum is an option.",
        FW,
        (
            S(
                "fw-rules",
                "4.2 Ding Dong",
                "Ding Dong can be repeated up to three times during the deal.",
            ),
            S(
                "fw-help",
                "To enable Charleston and/or Ding Dong",
                "a maximum number of Ding Dong requests",
            ),
        ),
    ),
    Rule(
        "FW-06",
        "Only East asks for a Ding Dong; no request is taken once any player has declared Ready.",
        FW,
        (
            S(
                "fw-help",
                "Charleston",
                "no further Ding Dong requests are allowed if any of the players has already "
                "declared ready",
            ),
        ),
    ),
    Rule(
        "FW-07",
        "Options: the Charleston and the Ding Dong are each used on every round, only on the "
        "last (North) round, or not at all, independently of each other.",
        FW,
        (
            S(
                "fw-help",
                "To enable Charleston and/or Ding Dong",
                "used on every round or only on the last round",
            ),
            S("fw-rules", "4.1 Charleston", "only in the last (North) round of the game"),
        ),
    ),
    Rule(
        "FW-08",
        "After the six exchanges East may request a Ding Dong until a player declares Ready "
        "or the platform or director closes the window; none is played while one is under way.",
        FW,
        (
            S(
                "fw-help",
                "Charleston",
                "choose Ding Dong on the Game menu while it is your turn",
            ),
        ),
        decision=(
            "The program takes the request on East's turn during play, which this service "
            "does not run: the Charleston ends in a window (state DING_DONG_OPEN) that the "
            "first Ready, or the platform's or director's close_ding_dong, ends. Closing is "
            "never a seat's command."
        ),
    ),
)
