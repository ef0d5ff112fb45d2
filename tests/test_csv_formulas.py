"""CSV formula injection: a name, label or player id a person typed cannot run as a
formula in the spreadsheet a director opens the round's CSV in (results and a duplicate
round's comparison, over real HTTP); numbers the code writes stay numbers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from api_helpers import ok, running
from test_api_duplicate import BOTS, wait_finished
from test_api_rounds import create_round

from charleston_fsm.tournament.spreadsheet import FORMULA_STARTS, csv_sheet

LINK = '=HYPERLINK("http://x","y")'
SUM = "-2+3"


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def assert_no_formula(text: str) -> None:
    """No cell of the CSV, header included, starts as a formula would."""
    for line in csv.reader(io.StringIO(text)):
        for cell in line:
            assert not cell.startswith(FORMULA_STARTS), (cell, line)


def test_names_in_the_round_csvs_are_not_formulas(sqlite_url: str, tmp_path: Path) -> None:
    players = {"east": LINK, "south": SUM, "west": "Cy", "north": "@Di"}
    ids = {"east": "+p-1", "south": "p-2"}
    body = {
        "name": "Duplicate injected",
        "deal": "duplicate",
        "deal_seed": "7",
        "tables": [
            {"bots": BOTS, "players": players, "player_ids": ids, "label": "=1+1"},
            {"bots": BOTS, "players": {"east": "Ann"}, "label": "Oak"},
        ],
    }
    with running(sqlite_url, tmp_path) as server:
        round_ = create_round(server, body)
        path = f"/v1/rounds/{round_['round_id']}"
        wait_finished(server, round_, {1, 2})
        with server.client(round_["token"]) as director:
            results = director.get(f"{path}/results", params={"format": "csv"})
            comparison = director.get(f"{path}/comparison", params={"format": "csv"})
            as_json = ok(director.get(f"{path}/comparison"))
    assert results.status_code == 200 and comparison.status_code == 200, comparison.text
    assert as_json["tables"][0]["seats"]["east"]["player"] == LINK  # the JSON is as typed

    # the comparison: a line per seat and pass, the player's name in a cell of its own
    lines = rows(comparison.text)
    by_seat = {(r["table"], r["seat"]): r for r in lines}
    assert by_seat["1", "east"]["player"] == "'" + LINK
    assert by_seat["1", "south"]["player"] == "'" + SUM
    assert by_seat["1", "north"]["player"] == "'@Di"
    assert by_seat["1", "west"]["player"] == "Cy" and by_seat["2", "east"]["player"] == "Ann"
    assert {r["label"] for r in lines} == {"'=1+1", "Oak"}
    assert_no_formula(comparison.text)
    # numbers stay numbers: table, pass and courtesy counts are bare digits
    assert all(r["table"].isdigit() and r["pass"].isdigit() for r in lines)
    assert all(r["courtesy_offer"] in ("", "0", "1", "2", "3") for r in lines)

    # the results: the label is a cell of its own; names and ids follow a seat's name
    table_1, table_2 = rows(results.text)
    assert table_1["label"] == "'=1+1" and table_2["label"] == "Oak"
    assert table_1["players"] == f"East {LINK}; South {SUM}; West Cy; North @Di"
    assert table_1["player_ids"] == "East +p-1; South p-2"
    assert (table_1["table"], table_2["table"]) == ("1", "2")
    assert_no_formula(results.text)


def test_every_formula_start_is_quoted_and_numbers_are_not(tmp_path: Path) -> None:
    """OWASP's list, one by one (a tab and a carriage return too, which the ``csv``
    module keeps inside a quoted cell); a negative number the code writes stays a number,
    the same characters typed as text do not."""
    columns = ("name", "score")
    typed = [f"{start}cmd" for start in FORMULA_STARTS]
    text = csv_sheet(
        columns,
        [
            *({"name": name, "score": -10} for name in typed),
            {"name": "-10", "score": -2.5},
            {"name": "Ann = Bea", "score": 0},
            {"name": None},
        ],
    )
    read = rows(text)
    assert [r["name"] for r in read[: len(typed)]] == ["'" + name for name in typed]
    assert all(r["score"] == "-10" for r in read[: len(typed)])
    assert read[-3] == {"name": "'-10", "score": "-2.5"}
    assert read[-2] == {"name": "Ann = Bea", "score": "0"}  # only a cell's start counts
    assert read[-1] == {"name": "", "score": ""}
    # a spreadsheet reading the file: the score is a bare number, unquoted
    assert ",-10\r\n" in text and ",-2.5\r\n" in text
