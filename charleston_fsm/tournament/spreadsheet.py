"""CSV for a spreadsheet: every export a director opens in Excel, LibreOffice or Google
Sheets is written here, so that a name cannot run as a formula.

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return as a formula (CSV or formula injection): a player who signs up as
``=HYPERLINK("http://x","y")`` would put a link, or worse, into the director's books.
As OWASP recommends, such a text cell is written with a single quote in front
(``'=HYPERLINK(...)``), which the spreadsheet shows as the text itself. Every text cell
is looked at, not only the fields known to come from people (names, player ids, labels,
rulings): a field forgotten would be a hole, and the text the code writes itself never
starts so. Numbers are written as numbers (``int``, ``float``) and never changed: a count
or a score of -10 stays -10. Quotes and commas inside a cell are the ``csv`` module's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

#: the first characters a spreadsheet reads as the start of a formula (OWASP's list)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """``value`` as it is safe to write: a text that would start a formula behind a single
    quote, any other value (a number, ``None``) unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_sheet(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    """The CSV text: a header of ``columns``, then a line per row (a column a row lacks
    is empty), every cell through :func:`spreadsheet_cell`."""
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, restval="")
    writer.writeheader()
    for row in rows:
        writer.writerow({column: spreadsheet_cell(value) for column, value in row.items()})
    return out.getvalue()
